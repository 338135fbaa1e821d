package node

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/toolnode/toolnode/runtime/jsonl"
	"github.com/toolnode/toolnode/runtime/manifest"
	"github.com/toolnode/toolnode/runtime/upstream"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// RelatedRequestKey is the _meta member by which a bundle relates a notification or a
// request of its own to the call it is serving: the JSON-RPC id of that call as the bundle
// received it. toolnode's SDKs set it; for other bundles the node falls back to the calls it
// knows are in flight.
const RelatedRequestKey = "io.toolnode/request"

// CallTool routes a tools/call from sess to the bundle serving the named tool and returns
// the bundle's result as it sent it. Unknown tools and bad params are *jsonrpc2.Error; a
// bundle that fails or times out gives a result with isError set, naming the bundle, so that
// the model on the other side can act on it.
func (n *Node) CallTool(ctx context.Context, sess Session, params json.RawMessage) (json.RawMessage, error) {
	// The hot path: only "name" (and a progress token) change, so they are edited in place
	// rather than decoding and re-encoding arguments of any size.
	rawName, ok := jsonl.Member(params, "name")
	var name string
	if !ok || json.Unmarshal(rawName, &name) != nil || name == "" {
		return nil, invalidParams("tools/call needs a string \"name\"")
	}
	e, ok := n.Catalog().Lookup(name)
	if !ok {
		return nil, invalidParams(fmt.Sprintf("unknown tool %q", name))
	}
	if e.Bundle == builtinBundle {
		return n.callBuiltin(ctx, e.Tool)
	}
	if e.Tool != name {
		quoted, _ := json.Marshal(e.Tool)
		params, _ = jsonl.SetMember(params, "name", quoted)
	}
	res, err := n.forward(ctx, sess, e.Bundle, mcp.MethodToolsCall, params, func() string { return fmt.Sprintf("tool %q", name) })
	var rpcErr *jsonrpc2.Error
	switch {
	case err == nil:
		return res, nil
	case ctx.Err() != nil:
		return nil, context.Cause(ctx)
	case errors.As(err, &rpcErr):
		return nil, rpcErr
	}
	return json.Marshal(mcp.ErrorResult(err.Error()))
}

// forward sends a request of sess to the least busy process of a bundle and returns its
// answer. The request's progress token is replaced by one unique across sessions and the
// bundle's progress comes back to sess under the client's token. The call may go without
// progress for the bundle's call timeout, and lasts at most its call_max; past either the
// bundle is told to cancel and the caller gets an error.
func (n *Node) forward(ctx context.Context, sess Session, bundleName, method string, params json.RawMessage, what func() string) (json.RawMessage, error) {
	n.mu.Lock()
	b := n.bundles[bundleName]
	n.mu.Unlock()
	if b == nil {
		return nil, fmt.Errorf("bundle %q is not running", bundleName)
	}
	idle := b.m.Timeouts.Call.Std(manifest.DefaultCallTimeout)
	hard := max(b.m.Timeouts.CallMax.Std(manifest.DefaultCallMaxTimeout), idle)
	inst, err := n.pick(b, min(idle, b.m.Timeouts.Start.Std(manifest.DefaultStartTimeout)))
	if err != nil {
		return nil, err
	}
	start := time.Now()
	// The causes are built only when a limit is hit: this runs for every call.
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	hardTimer := time.AfterFunc(hard, func() {
		cancel(fmt.Errorf("%s of bundle %q took longer than its call_max of %s; the bundle was told to cancel", what(), bundleName, hard))
	})
	defer hardTimer.Stop()
	timer := time.AfterFunc(idle, func() {
		cancel(fmt.Errorf("%s of bundle %q showed no progress for %s; the bundle was told to cancel", what(), bundleName, idle))
	})
	defer timer.Stop()

	f := &flight{sess: sess, ctx: ctx, touch: func() { timer.Reset(idle) }}
	id := inst.client.ReserveID()
	inst.busy.Add(1)
	n.mu.Lock()
	inst.flights[id] = f
	n.mu.Unlock()
	defer func() {
		n.mu.Lock()
		delete(inst.flights, id)
		n.mu.Unlock()
		inst.busy.Add(-1)
	}()
	// Every call gets a token of ours, so that its progress extends its timeout even when
	// the client asked for none (then the progress goes no further).
	ours := "tn-" + strconv.FormatUint(n.tokens.Add(1), 10)
	token, _ := progressToken(params)
	n.progress.Store(ours, progressRoute{flight: f, token: token})
	defer n.progress.Delete(ours)
	if p, ok := setProgressToken(params, ours); ok {
		params = p
	}
	res, err := inst.client.CallAs(ctx, id, method, params)
	var rpcErr *jsonrpc2.Error
	b.stats.record(time.Since(start), err != nil && !errors.As(err, &rpcErr) || isToolError(res))
	if err != nil && errors.Is(err, upstream.ErrGone) {
		n.mu.Lock()
		reason := b.stopReason
		n.mu.Unlock()
		if reason != "" {
			err = fmt.Errorf("%w; the bundle was %s", err, reason)
		}
	}
	return res, err
}

// isToolError reports whether a tools/call result says isError, cheaply.
func isToolError(res json.RawMessage) bool {
	v, ok := jsonl.Member(res, "isError")
	return ok && string(v) == "true"
}

func invalidParams(msg string) *jsonrpc2.Error {
	return &jsonrpc2.Error{Code: mcp.CodeInvalidParams, Message: msg}
}

func progressToken(params json.RawMessage) (json.RawMessage, bool) {
	meta, ok := jsonl.Member(params, "_meta")
	if !ok {
		return nil, false
	}
	token, ok := jsonl.Member(meta, "progressToken")
	if !ok || string(token) == "null" {
		return nil, false
	}
	return token, true
}

// setProgressToken sets the progress token of params, adding _meta when missing.
func setProgressToken(params json.RawMessage, token string) (json.RawMessage, bool) {
	quoted, _ := json.Marshal(token)
	meta, ok := jsonl.Member(params, "_meta")
	if !ok {
		meta = []byte(`{}`)
	}
	meta, ok = jsonl.PutMember(meta, "progressToken", quoted)
	if !ok {
		return nil, false
	}
	return jsonl.PutMember(params, "_meta", meta)
}

// SetLogLevel asks every bundle that offers logging to send messages at level and above.
func (n *Node) SetLogLevel(ctx context.Context, level string) {
	n.mu.Lock()
	var clients []*upstream.Client
	for _, b := range n.bundles {
		for _, inst := range b.slots {
			if inst != nil && inst.client.Init.Capabilities.Logging != nil {
				clients = append(clients, inst.client)
			}
		}
	}
	n.mu.Unlock()
	for _, c := range clients {
		if _, err := c.Call(ctx, mcp.MethodLoggingSetLevel, mcp.SetLevelParams{Level: level}); err != nil {
			n.log.Named(c.Name()).Debug("logging/setLevel", "error", err)
		}
	}
}

// related finds the client call a bundle's message is about: the one it names in
// _meta["io.toolnode/request"], else the latest of its calls in flight when they all come
// from one session. nil when there is none or it cannot be told.
func (n *Node) related(inst *instance, params json.RawMessage) *flight {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	_ = json.Unmarshal(params, &p)
	n.mu.Lock()
	defer n.mu.Unlock()
	if raw, ok := p.Meta[RelatedRequestKey]; ok {
		var id uint64
		if json.Unmarshal(raw, &id) == nil {
			if f := inst.flights[id]; f != nil {
				return f
			}
		}
	}
	var found *flight
	var latest uint64
	for id, f := range inst.flights {
		if found != nil && f.sess != found.sess {
			return nil
		}
		if found == nil || id > latest {
			found, latest = f, id
		}
	}
	return found
}

// bundleHandler receives what one bundle sends on its own.
type bundleHandler struct {
	n    *Node
	b    *bundle
	inst *instance
}

func (h bundleHandler) Notify(c *upstream.Client, method string, params json.RawMessage) {
	switch method {
	case mcp.NotifyProgress:
		h.n.forwardProgress(params)
	case mcp.NotifyMessage:
		var msg mcp.LoggingMessageParams
		if err := json.Unmarshal(params, &msg); err != nil {
			h.b.log.Warn("bad notifications/message", "error", err)
			return
		}
		msg.Logger = qualify(c.Name(), msg.Logger)
		if f := h.n.related(h.inst, params); f != nil {
			_ = f.sess.Notify(f.ctx, mcp.NotifyMessage, msg)
			return
		}
		h.n.broadcast(mcp.NotifyMessage, msg)
	case mcp.NotifyResourceUpdated:
		h.n.resourceUpdated(params)
	case mcp.NotifyToolsListChanged, mcp.NotifyPromptsListChanged, mcp.NotifyResourcesChanged:
		h.n.wg.Add(1)
		go func() {
			defer h.n.wg.Done()
			h.n.refresh(h.b, h.inst)
		}()
	default:
		h.b.log.Debug("notification from bundle not forwarded", "method", method)
	}
}

// Request passes a bundle's request to the client whose call it relates to.
func (h bundleHandler) Request(ctx context.Context, _ *upstream.Client, method string, params json.RawMessage) (any, error) {
	f := h.n.related(h.inst, params)
	if f == nil {
		return nil, &jsonrpc2.Error{Code: mcp.CodeInternalError,
			Message: fmt.Sprintf("%s can only be sent while serving a client's call (toolnode relays it to that client)", method)}
	}
	// The bundle's request ends when the client's call does, or when the bundle cancels it.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(f.ctx, cancel)
	defer stop()
	return f.sess.Request(withCall(ctx, f.ctx), method, withoutRelated(params))
}

// withoutRelated removes the node's routing key from params' _meta (and _meta, when that
// leaves it empty): it is between a bundle and the node.
func withoutRelated(params json.RawMessage) json.RawMessage {
	meta, ok := jsonl.Member(params, "_meta")
	if !ok {
		return params
	}
	meta = jsonl.DeleteMember(meta, RelatedRequestKey)
	if string(bytes.TrimSpace(meta)) == "{}" {
		return jsonl.DeleteMember(params, "_meta")
	}
	out, _ := jsonl.SetMember(params, "_meta", meta)
	return out
}

// qualify names the bundle as the logger of its messages, keeping the bundle's own logger.
func qualify(bundle, logger string) string {
	if logger == "" {
		return bundle
	}
	return bundle + "/" + logger
}

func (n *Node) forwardProgress(params json.RawMessage) {
	var p map[string]json.RawMessage
	if json.Unmarshal(params, &p) != nil {
		return
	}
	var token string
	if json.Unmarshal(p["progressToken"], &token) != nil {
		return
	}
	v, ok := n.progress.Load(token)
	if !ok {
		n.log.Debug("progress for a call that is over", "token", token)
		return
	}
	route := v.(progressRoute)
	route.flight.touch()
	if route.token == nil {
		return // the client did not ask for progress
	}
	p["progressToken"] = route.token
	_ = route.flight.sess.Notify(route.flight.ctx, mcp.NotifyProgress, p)
}

// refresh re-reads what a bundle offers after one of its processes said a list changed.
func (n *Node) refresh(b *bundle, inst *instance) {
	ctx, cancel := context.WithTimeout(context.Background(), b.m.Timeouts.Start.Std(manifest.DefaultStartTimeout))
	defer cancel()
	l, err := fetchLists(ctx, inst.client)
	if err != nil {
		b.log.Warn("re-list after list_changed", "error", err)
		return
	}
	n.mu.Lock()
	b.lists = l
	n.mu.Unlock()
	n.rebuild()
}

// callContext ends with one context and carries the values of another: a bundle's request
// ends when the bundle or the call says so, and travels on the call's stream.
type callContext struct {
	context.Context
	values context.Context
}

func (c callContext) Value(key any) any { return c.values.Value(key) }

func withCall(ctx, call context.Context) context.Context {
	return callContext{Context: ctx, values: call}
}
