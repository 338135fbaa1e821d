package node

import (
	"context"
	"encoding/json"
	"errors"
	"sync"

	"github.com/toolnode/toolnode/runtime/internal/argcheck"
	"github.com/toolnode/toolnode/runtime/internal/catalog"
	"github.com/toolnode/toolnode/runtime/internal/search"
	"github.com/toolnode/toolnode/sdk-go/mcp"
	"github.com/toolnode/toolnode/sdk-go/rawjson"
)

// The node's own tools toolnode.search and toolnode.execute: a ranked search over the
// catalog, and a call by name whose arguments are checked before anything is sent. Both
// take the caller's filter (the tools an access file lets it see), so that a client finds
// and calls only what it may.

// Allow reports whether a caller may see and call the tool with an exposed name; nil
// allows every tool.
type Allow func(name string) bool

func (a Allow) allows(name string) bool { return a == nil || a(name) }

// metaIndex is what searching and checking need of one catalog, built when first needed.
type metaIndex struct {
	cat   *catalog.Catalog
	index *search.Index
	check *argcheck.Checker
}

// metaIndexes keeps the index of the current catalog; guarded by its mutex, so that a
// catalog of thousands of tools is indexed once, not per concurrent search.
type metaIndexes struct {
	mu  sync.Mutex
	cur *metaIndex
}

func (n *Node) metaIndex() *metaIndex {
	cat := n.Catalog()
	n.meta.mu.Lock()
	defer n.meta.mu.Unlock()
	if n.meta.cur == nil || n.meta.cur.cat != cat {
		n.meta.cur = &metaIndex{cat: cat, index: search.FromCatalog(cat), check: argcheck.ForCatalog(cat)}
	}
	return n.meta.cur
}

// Search serves toolnode.search for a caller allowed allow.
func (n *Node) Search(args json.RawMessage, allow Allow) (json.RawMessage, error) {
	q, err := search.ParseSearch(args)
	if err != nil {
		return json.Marshal(mcp.ErrorResult(err.Error()))
	}
	q.Allow = allow
	res := n.metaIndex().index.Search(q)
	structured, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	text, _ := json.Marshal(res.Results)
	out := mcp.TextResult(string(text))
	out.StructuredContent = structured
	return json.Marshal(out)
}

// ExecuteAsync serves toolnode.execute for a caller allowed allow: params are those of the
// tools/call of toolnode.execute. The named tool is called as if called directly (its
// progress and input requests reach sess); what fails before or after the call was sent is
// an ExecError result saying which.
func (n *Node) ExecuteAsync(ctx context.Context, sess Session, params json.RawMessage, allow Allow, done func(json.RawMessage, error)) {
	fail := func(e *search.ExecError) { done(e.Result(), nil) }
	args, _ := rawjson.Member(params, "arguments")
	name, arguments, err := search.ParseExecute(args)
	if err != nil {
		fail(&search.ExecError{Kind: search.KindInvalidArguments, Message: err.Error()})
		return
	}
	if name == search.ExecuteToolName {
		fail(&search.ExecError{Kind: search.KindInvalidArguments, Message: "toolnode.execute does not call itself"})
		return
	}
	mi := n.metaIndex()
	if _, ok := mi.cat.Lookup(name); !ok {
		fail(&search.ExecError{Kind: search.KindUnknownTool, Message: "no tool is named " + name + "; find one with toolnode.search"})
		return
	}
	if !allow.allows(name) {
		fail(&search.ExecError{Kind: search.KindForbidden, Message: "this client may not call " + name})
		return
	}
	var invalid *argcheck.InvalidError
	if err := mi.check.Check(name, arguments); errors.As(err, &invalid) {
		fail(&search.ExecError{Kind: search.KindInvalidArguments, Message: invalid.Error(), Details: map[string]any{"problems": invalid.Problems}})
		return
	}
	quoted, _ := json.Marshal(name)
	inner := json.RawMessage(`{"name":` + string(quoted) + `,"arguments":` + string(arguments) + `}`)
	if meta, ok := rawjson.Member(params, "_meta"); ok {
		inner, _ = rawjson.PutMember(inner, "_meta", meta)
	}
	n.callTool(ctx, sess, inner, allow, settle(ctx, done, func(err error) {
		kind := search.KindFailed
		if errors.Is(err, ErrTimeout) {
			kind = search.KindTimeout
		}
		fail(&search.ExecError{Kind: kind, Dispatched: !errors.Is(err, ErrNotSent), Message: err.Error()})
	}))
}

// ErrTimeout is wrapped by the errors of calls that went past their time limit.
var ErrTimeout = errors.New("call timed out")

// ErrNotSent is wrapped by the errors of calls that failed before reaching a bundle.
var ErrNotSent = errors.New("call not sent")
