package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/hashicorp/go-hclog"

	"github.com/toolnode/toolnode/runtime/internal/argcheck"
	"github.com/toolnode/toolnode/runtime/internal/catalog"
	"github.com/toolnode/toolnode/runtime/internal/codemode"
	"github.com/toolnode/toolnode/runtime/internal/search"
	"github.com/toolnode/toolnode/sdk-go/mcp"
	"github.com/toolnode/toolnode/sdk-go/rawjson"
)

// The node's own tools, all of them here: toolnode.status (the state of every bundle and
// bound), toolnode.search (a ranked search over the catalog), toolnode.execute (a call
// by name whose arguments are checked before anything is sent) and toolnode.run (a
// program over the tools, in run.go). They sit in the catalog under the name of no bundle
// (ownBundle), served by a provider of their own (ownProvider), and take the caller's filter
// like any tool: search and execute see and call only what the caller may.

// Names of the node's own tools.
const (
	StatusToolName  = "toolnode.status"
	SearchToolName  = "toolnode.search"
	ExecuteToolName = "toolnode.execute"
)

// Bounds of the node's own tools' string arguments, in characters, as their inputSchema
// states them with maxLength. A search costs time in proportion to its query (a query of
// 15 MB took 3 s of CPU), and an unknown name is repeated in the error: past these, the
// call is refused with a tool error before any work.
const (
	// MaxQueryLen bounds a query: a task in plain words needs far fewer.
	MaxQueryLen = search.MaxQueryLen
	// MaxBundleLen bounds a bundle name, which is at most 64 characters.
	MaxBundleLen = 64
	// MaxCategoryLen bounds a category, a word or a few (search.CategoryKey).
	MaxCategoryLen = 100
	// MaxNameLen bounds a tool name: the catalog's are at most 193 (a 64-character bundle
	// name, a dot, and a tool name of up to 128).
	MaxNameLen = 256
)

// checkLen returns an error for a string argument s of tool longer than limit characters.
func checkLen(tool, member, s string, limit int) error {
	if len(s) <= limit { // a character is at least a byte
		return nil
	}
	if n := utf8.RuneCountInString(s); n > limit {
		return fmt.Errorf("%s arguments: %s is %d characters long, more than the %d it may have", tool, member, n, limit)
	}
	return nil
}

// ownBundle names the node itself in the catalog. It cannot be a bundle's name, so a
// bundle called "toolnode" cannot take over the node's tools: its "status" would lose the
// name toolnode.status to the node's, which claims it. The names toolnode.* belong to the
// node and to such a bundle alone.
const ownBundle = "(toolnode)"

// ownNamespace begins the names of the node's own tools.
const ownNamespace = "toolnode"

// IsOwnTool reports whether name is one of the node's own tools.
func IsOwnTool(name string) bool {
	return name == StatusToolName || name == SearchToolName || name == ExecuteToolName || name == RunToolName ||
		name == ReadResultToolName || name == ApprovalsToolName || name == ApproveToolName
}

// ownProvider is the node's own tools as a provider: served in process, never as tasks,
// never held to the lock file (they are the node's, not a bundle's).
type ownProvider struct{ n *Node }

// source is the node's own tool list, as the catalog takes it.
func (p *ownProvider) source() catalog.Source {
	n := p.n
	tools := []json.RawMessage{statusTool(), SearchTool(), ExecuteTool(), RunTool(n.cfg.Run)}
	if n.results.b.MaxBytes > 0 {
		tools = append(tools, readResultTool(n.readLength()))
	}
	n.approvals.mu.Lock()
	if n.approvals.on {
		tools = append(tools, approvalTools()...)
	}
	n.approvals.mu.Unlock()
	return catalog.Source{Bundle: ownBundle, Namespace: ownNamespace, NoPrefix: true, Tools: tools}
}

func (p *ownProvider) call(c *call, e catalog.Entry) {
	c.notes.Bundle = ""
	c.how = settleAsIs // the node's own answers, errors as they are
	p.n.callOwn(c, e.Tool)
}

func (p *ownProvider) taskMode(catalog.Entry) string { return mcp.TaskForbidden }
func (p *ownProvider) holdsTasks() bool              { return false }

// asksClients is true: a run's inner calls, and toolnode.execute's, may ask.
func (p *ownProvider) asksClients() bool { return true }
func (p *ownProvider) locked() bool      { return false }

// statusTool returns the tools/list entry of toolnode.status.
func statusTool() json.RawMessage {
	return json.RawMessage(`{"name":"` + StatusToolName + `","title":"toolnode status",` +
		`"description":"Reports every bundle of this toolnode (state, process ids, restarts, last error, tool count, calls served and failed, p50/p99 call latency) and every bound of the node with how close to it the node is; with a lock file, the tools it holds back and those it pins that no bundle serves.",` +
		`"inputSchema":{"type":"object","properties":{}},` +
		`"outputSchema":{"type":"object","properties":{"bundles":{"type":"array","items":{"type":"object"}},"node":{"type":"object"},"pins":{"type":"object"}},"required":["bundles"]},` +
		`"annotations":{"readOnlyHint":true,"openWorldHint":false}}`)
}

// SearchTool returns the tools/list entry of toolnode.search.
func SearchTool() json.RawMessage {
	return json.RawMessage(`{"name":"toolnode.search","title":"Search the tools",` +
		`"description":"Find any tool of this node that fits a task, best first: tools/list may show only some of them. ` +
		`Query with a short phrase of what you want done and the kind of value you have, in plain words, one action per search: ` +
		`\"maximum of a temporal float\", \"remove the part of a trip inside an area\", \"when does a moving point come within 100 m of another\", \"split a time series into daily pieces\". ` +
		`Name your value's type when you know it (float, integer, text, boolean, moving point or trajectory, geometry, period, box); leave out the rest of your context. ` +
		`Each result has the tool's name, description, category and inputSchema, and the words of your query it matched and did not (matched, unmatched): when no result fits, search again with other words for the unmatched ones. ` +
		`Call a result by its name, or through toolnode.execute. With a category (e.g. \"aggregates\") only that category's tools are searched; with it and an empty query, they are listed.",` +
		`"inputSchema":{"type":"object","properties":{` +
		`"query":{"type":"string","maxLength":1000,"description":"What you want done and the kind of value you have, in a few plain words (e.g. \"distance covered so far by a moving point\"), or a tool name."},` +
		`"limit":{"type":"integer","minimum":1,"maximum":100,"default":10,"description":"Most results to return."},` +
		`"bundle":{"type":"string","maxLength":64,"description":"Only tools served by this bundle."},` +
		`"category":{"type":"string","maxLength":100,"description":"Only tools of this category, as each result's category names it (case does not matter). When none has it, the result lists the categories there are."}},` +
		`"required":["query"],"additionalProperties":false},` +
		`"outputSchema":{"type":"object","properties":{` +
		`"results":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"},"title":{"type":"string"},"description":{"type":"string"},"category":{"type":"string"},"inputSchema":{"type":"object"},` +
		`"matched":{"type":"array","items":{"type":"string"},"description":"The query's words this tool matched."},` +
		`"unmatched":{"type":"array","items":{"type":"string"},"description":"The query's words this tool did not match: try others for them."}},"required":["name","inputSchema"]}},` +
		`"truncated":{"type":"boolean","description":"More tools matched than were returned."},` +
		`"categories":{"type":"array","items":{"type":"string"},"description":"The categories of the tools there are, when the category asked for has none."}},` +
		`"required":["results","truncated"]},` +
		`"annotations":{"readOnlyHint":true,"openWorldHint":false}}`)
}

// ExecuteTool returns the tools/list entry of toolnode.execute.
func ExecuteTool() json.RawMessage {
	return json.RawMessage(`{"name":"toolnode.execute","title":"Call a tool by name",` +
		`"description":"Call any tool of this node by its name with its arguments, listed by tools/list or not (find them with toolnode.search). The arguments are checked against the tool's inputSchema first. On failure the result's structuredContent is {\"error\": {\"kind\", \"dispatched\", \"message\", \"details\"}}: kind unknown_tool (no such tool, or none this client may call) or invalid_arguments means the call was not sent (dispatched false; fix and call again); dispatched true means the tool may have run (check before repeating).",` +
		`"inputSchema":{"type":"object","properties":{` +
		`"name":{"type":"string","maxLength":256,"description":"The tool's name, as toolnode.search gives it."},` +
		`"arguments":{"type":"object","description":"The tool's arguments, as its inputSchema describes."}},` +
		`"required":["name"],"additionalProperties":false}}`)
}

// callOwn serves c, a call of one of the node's own tools.
func (n *Node) callOwn(c *call, tool string) {
	ctx, req := c.ctx, c.req
	switch tool {
	case SearchToolName:
		c.settle(n.search(req.Arguments, req.Allow, req.Strict))
	case ExecuteToolName:
		n.execute(c)
	case StatusToolName:
		c.settle(n.status(ctx))
	case RunToolName:
		n.runProgram(c)
	case ReadResultToolName:
		c.settle(n.readResultCall(ctx, c.x, req.Arguments))
	case ApprovalsToolName, ApproveToolName:
		c.settle(n.callApprovals(ctx, req, tool))
	default:
		c.settle(nil, invalidParams(fmt.Sprintf("unknown tool %q", tool)))
	}
}

// status serves toolnode.status.
func (n *Node) status(ctx context.Context) (json.RawMessage, error) {
	st := n.Status()
	bounds := n.Bounds()
	report := map[string]any{"bundles": st,
		"node": map[string]any{"heap_live_bytes": heapLive(), "procs": runtime.GOMAXPROCS(0), "bounds": bounds, "run_worker": n.workers.Enforced()}}
	cluster := n.reportCluster(ctx)
	if cluster != nil {
		report["cluster"] = cluster.Data
	}
	pins, locked := n.Pins()
	if locked {
		report["pins"] = pins
	}
	structured, err := json.Marshal(report)
	if err != nil {
		return nil, fmt.Errorf("encode status: %w", err)
	}
	var sb strings.Builder
	for _, b := range st {
		fmt.Fprintf(&sb, "%s: %s, %s, %d restarts, %d tools, %d calls (%d failed), p50 %.2f ms, p99 %.2f ms",
			b.Name, b.State, b.Where(), b.Restarts, b.Tools, b.Calls, b.Failed, b.P50ms, b.P99ms)
		if b.State == StateCrashLoop {
			fmt.Fprintf(&sb, ", crash loop: %d failures in a row, next try at %s", b.FailuresInARow, b.RetryAt)
		}
		if b.LastError != "" {
			fmt.Fprintf(&sb, ", last error: %s", b.LastError)
		}
		if b.Sandbox != "" {
			fmt.Fprintf(&sb, ", sandbox: %s", b.Sandbox)
		}
		sb.WriteString("\n")
	}
	for _, b := range bounds {
		if b.Limit >= 0 {
			fmt.Fprintf(&sb, "bound %s: %d of %d\n", b.Name, b.Used, b.Limit)
		} else {
			fmt.Fprintf(&sb, "bound %s: %d\n", b.Name, b.Used)
		}
	}
	fmt.Fprintf(&sb, "toolnode.run programs: %s\n", n.workers.Enforced())
	for _, h := range pins.Held {
		fmt.Fprintf(&sb, "held back: %s (toolnode pin --diff shows how)\n", h)
	}
	for _, name := range pins.Missing {
		fmt.Fprintf(&sb, "pinned but not served: tool %q is in the lock file, and no bundle serves it\n", name)
	}
	if cluster != nil {
		sb.WriteString(cluster.Text)
	}
	res := mcp.TextResult(sb.String())
	res.StructuredContent = structured
	return json.Marshal(res)
}

// metaIndex is what searching and checking need of one catalog, built when first needed.
type metaIndex struct {
	cat   *catalog.Catalog
	index *search.Index
	check *argcheck.Checker
	names *codemode.Names // the tools' names in a program
	sigs  sync.Map        // a tool's name → its signature in a program, made when first asked
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
		n.meta.cur = &metaIndex{cat: cat, index: search.FromCatalog(cat, n.synonyms(), SearchToolName), check: argcheck.ForCatalog(cat), names: programNames(cat)}
	}
	return n.meta.cur
}

// synonyms reads the synonyms file of each running bundle whose manifest names one; a
// file that cannot be read is logged and left out, the bundle's tools still found by
// their own words.
func (n *Node) synonyms() map[string]*search.Synonyms {
	n.mu.Lock()
	paths := map[string]string{}
	logs := map[string]hclog.Logger{}
	for name, b := range n.bundles {
		if p := b.m.SynonymsPath(); p != "" {
			paths[name], logs[name] = p, b.log
		}
	}
	n.mu.Unlock()
	out := make(map[string]*search.Synonyms, len(paths))
	for name, p := range paths {
		s, err := search.LoadSynonyms(p)
		if err != nil {
			logs[name].Warn("synonyms left out of search", "error", err)
			continue
		}
		out[name] = s
	}
	return out
}

// Search serves toolnode.search with its arguments args, for a caller allowed allow.
func (n *Node) Search(args json.RawMessage, allow Allow) (json.RawMessage, error) {
	return n.search(args, allow, false)
}

// search is Search for a caller shown the underscore form of names when strict: a query
// that is such a name finds its tool first, and the results name tools in that form.
func (n *Node) search(args json.RawMessage, allow Allow, strict bool) (json.RawMessage, error) {
	q, err := ParseSearch(args)
	if err != nil {
		return json.Marshal(mcp.ErrorResult(err.Error()))
	}
	q.Allow = allow
	names := n.Catalog().Strict()
	if canonical, ok := names.Canonical(strings.TrimSpace(q.Text)); ok {
		q.Text = canonical
	}
	res := n.searchIn(n.metaIndex(), q)
	if strict {
		for i := range res.Results {
			res.Results[i].Name = names.Render(res.Results[i].Name)
		}
	}
	structured, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	text, _ := json.Marshal(res.Results)
	out := mcp.TextResult(string(text))
	out.StructuredContent = structured
	return json.Marshal(out)
}

// execute serves toolnode.execute: c is its tools/call. The named tool is called as if
// called directly (its progress and input requests reach c's exchange); what fails before
// or after the call was sent is an ExecError result saying which. The Outcome names the tool
// it ran, through toolnode.execute.
func (n *Node) execute(c *call) {
	req := c.req
	c.notes.Via = ExecuteToolName
	name, arguments, err := ParseExecute(req.Arguments)
	if canonical, ok := n.Catalog().Strict().Canonical(name); ok {
		name = canonical // the underscore form, as a strict client is shown it
	}
	if name != "" {
		c.notes.Ran = name
	}
	if err != nil {
		c.refuse(KindInvalidArguments, (&ExecError{Kind: KindInvalidArguments, Message: err.Error()}).Result(), nil)
		return
	}
	if name == ExecuteToolName {
		c.refuse(KindInvalidArguments, (&ExecError{Kind: KindInvalidArguments, Message: "toolnode.execute does not call itself"}).Result(), nil)
		return
	}
	e, xerr, refused := gate(n.metaIndex(), req.Allow, name, arguments, "find one with toolnode.search")
	if xerr == nil {
		if xerr = n.admit(req.Guard, name, arguments); xerr != nil {
			refused = xerr.Kind
		}
	}
	if xerr != nil {
		c.refuse(refused, xerr.Result(), nil)
		return
	}
	inner := innerRequest(req, name, arguments)
	withInput(inner, req)
	// The inner call's Outcome is the call's: it names what ran, through execute.
	ic := newCall(c.ctx, c.x, inner, settleExecute, c.done)
	ic.notes = noted{Ran: name, Via: ExecuteToolName, Run: c.notes.Run}
	n.providerOf(e.Bundle).call(ic, e)
}

// gate checks the call of tool name with arguments that toolnode.execute or a program of
// toolnode.run is to make for a caller allowed what allow says, as a direct call would be
// checked: the tool exists, the caller may call it, the arguments fit its schema. It returns
// the tool's entry, or the ExecError that keeps the call from being sent and the kind the
// audit log records; find tells the caller how to find tools. A tool the caller may not call
// is told as one that does not exist, as tools/call tells it: a program must not learn which
// denied tools there are (the audit log still says forbidden).
func gate(mi *metaIndex, allow Allow, name string, arguments json.RawMessage, find string) (catalog.Entry, *ExecError, string) {
	e, ok := mi.cat.Lookup(name)
	if !ok || !allow.allows(name) {
		refused := KindUnknownTool
		if ok {
			refused = KindForbidden
		}
		return e, &ExecError{Kind: KindUnknownTool, Message: "no tool is named " + name + "; " + find}, refused
	}
	var invalid *argcheck.InvalidError
	if err := mi.check.Check(name, arguments); errors.As(err, &invalid) {
		return e, &ExecError{Kind: KindInvalidArguments, Message: invalid.Error(), Details: map[string]any{"problems": invalid.Problems}}, KindInvalidArguments
	}
	return e, nil, ""
}

// innerRequest is the tools/call of tool name with arguments made for outer, the caller's
// tools/call of toolnode.execute or toolnode.run: under its _meta, progress token and access.
func innerRequest(outer *Request, name string, arguments json.RawMessage) *Request {
	params := append(append(append(append([]byte(`{"name":`), rawjson.AppendString(nil, name)...), `,"arguments":`...), arguments...), '}')
	if outer.Meta != nil {
		params, _ = rawjson.PutMember(params, "_meta", outer.Meta)
	}
	return &Request{Method: mcp.MethodToolsCall, Params: params, Name: name, Arguments: arguments, Meta: outer.Meta,
		ProgressToken: outer.ProgressToken, Allow: outer.Allow, Guard: outer.Guard, Token: outer.Token}
}

// withInput gives inner, the call toolnode.execute makes for outer, the requestState and
// inputResponses of outer, a client's retry of toolnode.execute (MCP 2026-07-28): the named
// tool asked for input with a state of its own, which the client hands back with its
// answers. Without them the tool would be called afresh, and ask again, for ever.
func withInput(inner, outer *Request) {
	// Read from the params: a session's retry (FulfilInput) sets them there only.
	for _, key := range []string{"requestState", "inputResponses"} {
		value, ok := rawjson.Member(outer.Params, key)
		if !ok {
			continue
		}
		if params, ok := rawjson.PutMember(inner.Params, key, value); ok {
			inner.Params = params
		}
		if key == "requestState" {
			inner.State = value
		} else {
			inner.Responses = value
		}
	}
}

// ParseSearch reads toolnode.search's arguments into a Query (without Allow, which is the
// caller's to set). Members are read exactly as named, and unknown ones refused.
func ParseSearch(args json.RawMessage) (search.Query, error) {
	var text, bundle, category string
	var hasText bool
	limit := search.DefaultLimit
	err := decodeExact(args, map[string]func([]byte) error{
		"query": func(v []byte) error {
			hasText = true
			return jsonString(v, &text)
		},
		"limit": func(v []byte) error {
			if err := json.Unmarshal(v, &limit); err != nil {
				return fmt.Errorf("limit: %w", err)
			}
			if limit < 1 || limit > search.MaxLimit {
				return fmt.Errorf("limit is %d, must be from 1 to %d", limit, search.MaxLimit)
			}
			return nil
		},
		"bundle":   func(v []byte) error { return jsonString(v, &bundle) },
		"category": func(v []byte) error { return jsonString(v, &category) },
	})
	if err != nil {
		return search.Query{}, fmt.Errorf("%s arguments: %w", SearchToolName, err)
	}
	if !hasText {
		return search.Query{}, fmt.Errorf("%s arguments: query is missing; describe the task in plain words", SearchToolName)
	}
	if err := errors.Join(checkLen(SearchToolName, "query", text, MaxQueryLen), checkLen(SearchToolName, "bundle", bundle, MaxBundleLen),
		checkLen(SearchToolName, "category", category, MaxCategoryLen)); err != nil {
		return search.Query{}, err
	}
	q := search.Query{Text: text, Limit: limit, Category: category}
	if bundle != "" {
		q.Bundles = []string{bundle}
	}
	return q, nil
}

// ParseExecute reads toolnode.execute's arguments: the tool's name and its arguments ({}
// when absent). Members are read exactly as named, and unknown ones refused: a bundle reads
// only the call the node makes of them.
func ParseExecute(args json.RawMessage) (name string, arguments json.RawMessage, err error) {
	err = decodeExact(args, map[string]func([]byte) error{
		"name": func(v []byte) error { return jsonString(v, &name) },
		"arguments": func(v []byte) error {
			switch {
			case string(v) == "null":
			case v[0] != '{':
				return errors.New("arguments must be an object")
			default:
				arguments = v
			}
			return nil
		},
	})
	if err != nil {
		return "", nil, fmt.Errorf("%s arguments: %w", ExecuteToolName, err)
	}
	if name == "" {
		return "", nil, fmt.Errorf("%s arguments: name is missing; give the name of a tool found with %s", ExecuteToolName, SearchToolName)
	}
	if err := checkLen(ExecuteToolName, "name", name, MaxNameLen); err != nil {
		return "", nil, err
	}
	if arguments == nil {
		arguments = json.RawMessage("{}")
	}
	return name, arguments, nil
}

// decodeExact reads the members of the JSON object args (absent or null: none) by their
// exact names; a member it has no reader for is an error naming it.
func decodeExact(args json.RawMessage, read map[string]func([]byte) error) error {
	trimmed := strings.TrimSpace(string(args))
	if trimmed == "" || trimmed == "null" {
		return nil
	}
	if trimmed[0] != '{' || !json.Valid(args) {
		return errors.New("must be a JSON object")
	}
	var err error
	rawjson.Members(args, func(name rawjson.Name, value []byte) {
		if err != nil {
			return
		}
		key := name.String()
		if f, ok := read[key]; ok {
			err = f(value)
			return
		}
		err = fmt.Errorf("unknown field %q", key)
	})
	return err
}

// jsonString reads a JSON string into dst.
func jsonString(v []byte, dst *string) error {
	s, ok := rawjson.String(v)
	if !ok {
		return fmt.Errorf("want a string, got %s", clipRaw(v))
	}
	*dst = s
	return nil
}

// Kinds of toolnode.execute's errors.
const (
	KindUnknownTool      = "unknown_tool"
	KindInvalidArguments = "invalid_arguments"
	KindForbidden        = "forbidden"
	// KindFailed: the bundle failed or the call timed out after it was sent.
	KindFailed = "failed"
	// KindTimeout: the call ran past its time limit after it was sent.
	KindTimeout = "timeout"
)

// ExecError is a failed toolnode.execute: the structured content of its isError result is
// {"error": ExecError}. Dispatched says whether the call was sent to a bundle: when false,
// nothing ran and the caller may fix and retry; when true, the tool may have acted, and the
// caller should check before repeating.
type ExecError struct {
	Kind       string `json:"kind"`
	Dispatched bool   `json:"dispatched"`
	Message    string `json:"message"`
	Details    any    `json:"details,omitempty"`
}

func (e *ExecError) Error() string { return e.Message }

// Result returns the tools/call result for the error: the message as text, the error as
// structured content, isError true.
func (e *ExecError) Result() json.RawMessage {
	content, _ := json.Marshal(struct {
		Error *ExecError `json:"error"`
	}{e})
	text, _ := json.Marshal(e.Message)
	return json.RawMessage(`{"content":[{"type":"text","text":` + string(text) + `}],"structuredContent":` +
		string(content) + `,"isError":true}`)
}

// ErrTimeout is wrapped by the errors of calls that went past their time limit.
var ErrTimeout = errors.New("call timed out")

// ErrNotSent is wrapped by the errors of calls that failed before reaching a bundle.
var ErrNotSent = errors.New("call not sent")
