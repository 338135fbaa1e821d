package node

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/rpc"
	"github.com/toolnode/toolnode/runtime/internal/search"
	"github.com/toolnode/toolnode/runtime/internal/telemetry"
	"github.com/toolnode/toolnode/runtime/internal/upstream"
	"github.com/toolnode/toolnode/sdk-go/mcp"
	"github.com/toolnode/toolnode/sdk-go/rawjson"
)

// RelatedRequestKey is the _meta member by which a bundle relates a notification or a
// request of its own to the call it is serving: the JSON-RPC id of that call as the bundle
// received it. toolnode's SDKs set it; for other bundles the node falls back to the calls it
// knows are in flight.
const RelatedRequestKey = "io.toolnode/request"

// CallTool routes a tools/call from sess to the bundle serving the named tool and returns
// the bundle's result as it sent it. Unknown tools and bad params are *rpc.Error; a
// bundle that fails or times out gives a result with isError set, naming the bundle, so that
// the model on the other side can act on it.
func (n *Node) CallTool(ctx context.Context, sess Session, params json.RawMessage) (json.RawMessage, error) {
	return rpc.Await(func(done rpc.Done) { n.CallToolAsync(ctx, sess, params, done) })
}

// CallToolAsync is CallTool calling done with the outcome instead of returning it. done may
// run on the goroutine that reads the bundle, and must not block; it runs exactly once.
func (n *Node) CallToolAsync(ctx context.Context, sess Session, params json.RawMessage, done func(json.RawMessage, error)) {
	n.CallToolFor(ctx, sess, params, nil, done)
}

// AsksClients reports whether a call to the tool name may bring requests from its bundle to
// the client (elicitation, sampling, roots) while it runs: false only when no running
// process of the bundle serving it may (see upstream.Client.AsksClients). A front spares
// other calls what waiting for a client's input takes. It is asked before every call of a
// stateless client, so it reads what noteQuiet keeps rather than taking the node's lock.
func (n *Node) AsksClients(name string) bool {
	e, ok := n.Catalog().Lookup(name)
	if !ok || e.Bundle == builtinBundle {
		return true
	}
	quiet := n.quiet.Load()
	return quiet == nil || !(*quiet)[e.Bundle]
}

// noteQuiet records which bundles have processes running and none that may ask a client
// anything (see AsksClients). It is called, with n.mu held, whenever a bundle or one of
// its processes comes or goes.
func (n *Node) noteQuiet() {
	quiet := make(map[string]bool, len(n.bundles))
	for name, b := range n.bundles {
		if isolatedBundle(b) {
			continue
		}
		running, asks := false, false
		for _, inst := range b.slots {
			if inst != nil {
				running = true
				asks = asks || inst.client.AsksClients()
			}
		}
		if running && !asks {
			quiet[name] = true
		}
	}
	n.quiet.Store(&quiet)
}

// CallToolFor is CallToolAsync for a caller that may see and call only the tools allow
// accepts: another tool is unknown to it, and toolnode.search and toolnode.execute see only
// what it may.
func (n *Node) CallToolFor(ctx context.Context, sess Session, params json.RawMessage, allow Allow, done func(json.RawMessage, error)) {
	n.callTool(ctx, sess, params, allow, settle(ctx, done, func(err error) {
		done(json.Marshal(mcp.ErrorResult(err.Error())))
	}))
}

// settle passes a call's outcome to done: results and JSON-RPC errors as they are, the
// caller's cancellation as its cause, and any other failure (the bundle's) to failed.
func settle(ctx context.Context, done rpc.Done, failed func(error)) rpc.Done {
	return func(res json.RawMessage, err error) {
		var rpcErr *rpc.Error
		switch {
		case err == nil:
			done(res, nil)
		case ctx.Err() != nil:
			done(nil, context.Cause(ctx))
		case errors.As(err, &rpcErr):
			done(nil, rpcErr)
		default:
			failed(err)
		}
	}
}

// callTool routes a tools/call and reports the outcome as it is: the result, a JSON-RPC
// error, or why the bundle did not answer.
func (n *Node) callTool(ctx context.Context, sess Session, params json.RawMessage, allow Allow, done func(json.RawMessage, error)) {
	// The hot path: only "name" (and a progress token) change, so they are edited in place
	// rather than decoding and re-encoding arguments of any size.
	rawName, ok := rawjson.Member(params, "name")
	name, isString := rawjson.String(rawName)
	if !ok || !isString || name == "" {
		done(nil, invalidParams("tools/call needs a string \"name\""))
		return
	}
	e, ok := n.Catalog().Lookup(name)
	if !ok || !allow.allows(name) {
		done(nil, invalidParams(fmt.Sprintf("unknown tool %q", name)))
		return
	}
	if e.Bundle == builtinBundle {
		switch e.Tool {
		case search.SearchToolName:
			args, _ := rawjson.Member(params, "arguments")
			done(n.Search(args, allow))
		case search.ExecuteToolName:
			n.ExecuteAsync(ctx, sess, params, allow, done)
		default:
			done(n.callBuiltin(ctx, e.Tool))
		}
		return
	}
	rename := ""
	if e.Tool != name {
		rename = e.Tool // in the edit that readies the call for the bundle
	}
	n.forwardAsync(ctx, sess, e.Bundle, rename, mcp.MethodToolsCall, params, func() string { return fmt.Sprintf("tool %q", name) }, done)
}

// forward is forwardAsync waiting for the outcome.
func (n *Node) forward(ctx context.Context, sess Session, bundleName, method string, params json.RawMessage, what func() string) (json.RawMessage, error) {
	return rpc.Await(func(done rpc.Done) {
		n.forwardAsync(ctx, sess, bundleName, "", method, params, what, done)
	})
}

// forwardAsync sends a request of sess to the least busy process of a bundle and calls done
// with its answer; rename, unless "", is put as the name in params. The request's progress
// token is replaced by one unique across sessions and the bundle's progress comes back to
// sess under the client's token. The call may go without progress for the bundle's call
// timeout, and lasts at most its call_max; past either, or when the client cancels, the
// bundle is told to cancel.
func (n *Node) forwardAsync(ctx context.Context, sess Session, bundleName, rename, method string, params json.RawMessage, what func() string, done func(json.RawMessage, error)) {
	n.mu.Lock()
	b := n.bundles[bundleName]
	if b != nil {
		b.sleep.lastUse = time.Now() // stamped with the lookup, so that it cannot fall asleep under this call
	}
	n.mu.Unlock()
	if b == nil {
		done(nil, notSent(fmt.Errorf("bundle %q is not running", bundleName)))
		return
	}
	key, _ := clientKey(sess)
	if err := b.blame.refused(key, b.name); err != nil {
		done(nil, notSent(err))
		return
	}
	if isolatedBundle(b) {
		go func() {
			inst, err := n.pickIsolated(b, sess)
			if err != nil {
				done(nil, notSent(err))
				return
			}
			n.send(ctx, sess, b, inst, rename, method, params, what, done)
		}()
		return
	}
	if inst := n.pickNow(b); inst != nil {
		n.send(ctx, sess, b, inst, rename, method, params, what, done)
		return
	}
	// Asleep, starting or restarting: wait for a process without holding up the caller.
	n.wake(b)
	go func() {
		inst, err := n.pick(b, min(b.m.Timeouts.Call, b.m.Timeouts.Start))
		if err != nil {
			done(nil, notSent(err))
			return
		}
		n.send(ctx, sess, b, inst, rename, method, params, what, done)
	}()
}

// relay is one call on its way to a bundle process and back: everything send keeps for it,
// in one allocation, since it is made for every call.
type relay struct {
	flight
	n     *Node
	b     *bundle
	outer context.Context // the client's call: its values, and its end
	what  func() string
	done  func(json.RawMessage, error)
	ours  string // the progress token the bundle sees
	// clientToken is the progress token the client gave, nil when it asked for none.
	clientToken json.RawMessage
	start       time.Time
	idle        time.Duration
	hard        time.Duration

	// The timer and the watch on the client's context may fire on other goroutines while
	// send sets them up: mu orders it all, and whoever ends the call first wins.
	mu        sync.Mutex
	timer     *time.Timer
	id        rpc.ID
	stopOuter func() bool
	ended     bool
	// What the bundle asks the client during the call lives as long as the call: its
	// context is made when the bundle first asks, which few calls see.
	asked    context.Context
	endAsked context.CancelCauseFunc
}

// errCallEnded ends what a bundle asked the client about a call that has ended.
var errCallEnded = errors.New("the call the request was about has ended")

// context returns a context that ends with the call (and carries the client call's values).
func (r *relay) context() context.Context {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.asked == nil {
		r.asked, r.endAsked = context.WithCancelCause(r.outer)
		if r.ended {
			r.endAsked(errCallEnded)
		}
	}
	return r.asked
}

func (n *Node) send(outer context.Context, sess Session, b *bundle, inst *instance, rename, method string, params json.RawMessage,
	what func() string, done func(json.RawMessage, error)) {
	r := &relay{n: n, b: b, outer: outer, what: what, done: done, ours: n.newToken(), start: time.Now(),
		idle: b.m.Timeouts.Call, hard: max(b.m.Timeouts.CallMax, b.m.Timeouts.Call)}
	r.flight = flight{sess: sess, inst: inst, relay: r}
	inst.busy.Add(1)
	// The flight is known before the bundle can name it: registered under the id the call
	// will go under, before it is sent.
	id, err := inst.client.Expect(r.finish)
	if err != nil {
		r.finish(nil, notSent(err))
		return
	}
	r.id = id
	// Every call gets a token of ours, so that its progress extends its timeout even when
	// the client asked for none (then the progress goes no further).
	params, r.clientToken = inst.client.Prepare(params, r.ours, callerOf(sess), rename)
	n.mu.Lock()
	inst.flights[id] = &r.flight
	inst.byToken[r.ours] = &r.flight
	n.mu.Unlock()
	if _, nop := n.cfg.Telemetry.(telemetry.Nop); !nop {
		var target string
		if raw, ok := rawjson.Member(params, "name"); ok {
			_ = json.Unmarshal(raw, &target)
		}
		ctx, op := n.cfg.Telemetry.StartBundleCall(outer, telemetry.BundleCall{Bundle: b.name, Method: method, Target: target, ID: json.RawMessage(id.String())})
		params = n.cfg.Telemetry.Inject(ctx, params)
		inner := r.done
		r.done = func(res json.RawMessage, err error) {
			var rpcErr *rpc.Error
			switch {
			case errors.As(err, &rpcErr):
				op.End(telemetry.ErrorCode(rpcErr.Code))
			case errors.Is(err, ErrTimeout):
				op.End(telemetry.Timeout)
			case err != nil:
				op.End(telemetry.ErrorCode(mcp.CodeInternalError))
			case isToolError(res):
				op.End(telemetry.ToolError)
			default:
				op.End("")
			}
			inner(res, err)
		}
	}
	r.mu.Lock()
	if !r.ended { // not failed already
		// One timer serves both limits: it is due when the call has gone idle without
		// progress or reaches call_max, whichever comes first; progress pushes it back.
		r.timer = time.AfterFunc(r.idle, r.expire)
		r.stopOuter = context.AfterFunc(outer, r.abandon)
	}
	r.mu.Unlock()
	if err := inst.client.SendPrepared(id, method, params); err != nil {
		r.finish(nil, notSent(err))
	}
}

// due is how long the call may still go without progress.
func (r *relay) due() time.Duration { return min(r.idle, r.hard-time.Since(r.start)) }

// touch pushes the call's timer back: it showed progress.
func (r *relay) touch() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.ended && r.timer != nil {
		r.timer.Reset(r.due())
	}
}

// expire gives up on a call past one of its limits. The causes are built only then: the
// rest runs for every call.
func (r *relay) expire() {
	if time.Since(r.start) >= r.hard {
		r.giveUp(timedOut(fmt.Sprintf("%s of bundle %q took longer than its call_max of %s; the bundle was told to cancel", r.what(), r.b.name, r.hard)))
		return
	}
	r.giveUp(timedOut(fmt.Sprintf("%s of bundle %q showed no progress for %s; the bundle was told to cancel", r.what(), r.b.name, r.idle)))
}

// abandon gives up on a call its client no longer waits for.
func (r *relay) abandon() { r.giveUp(context.Cause(r.outer)) }

// giveUp ends the call with err unless its answer came first: whoever takes the call from
// the connection first ends it.
func (r *relay) giveUp(err error) {
	if r.inst.client.Abandon(r.id, err.Error()) {
		r.finish(nil, err)
	}
}

// finish ends the call, once: the answer, or why there is none.
func (r *relay) finish(res json.RawMessage, err error) {
	r.mu.Lock()
	if r.ended {
		r.mu.Unlock()
		return
	}
	r.ended = true
	if r.timer != nil {
		r.timer.Stop()
	}
	if r.stopOuter != nil {
		r.stopOuter()
	}
	endAsked := r.endAsked
	r.mu.Unlock()
	if endAsked != nil {
		endAsked(errCallEnded)
	}
	n, b, inst := r.n, r.b, r.inst
	n.mu.Lock()
	delete(inst.flights, r.id)
	delete(inst.byToken, r.ours)
	reason := b.stopReason
	n.mu.Unlock()
	inst.busy.Add(-1)
	var rpcErr *rpc.Error
	b.stats.record(time.Since(r.start), err != nil && !errors.As(err, &rpcErr) || isToolError(res))
	if err != nil && errors.Is(err, upstream.ErrGone) && reason != "" {
		err = fmt.Errorf("%w; the bundle was %s", err, reason)
	}
	if err != nil {
		b.log.Debug("call to the bundle ended in an error", "id", r.id.String(), "error", err)
	}
	switch key, _ := clientKey(r.sess); {
	case err == nil:
		b.blame.forgive(key)
	case errors.Is(err, upstream.ErrGone) && reason == "":
		b.blame.crashed(key, inst) // the process died under this call, on its own
	}
	r.done(res, err)
}

// timeoutError is the error of a call past its time limit.
type timeoutError string

func (e timeoutError) Error() string        { return string(e) }
func (e timeoutError) Is(target error) bool { return target == ErrTimeout }

func timedOut(msg string) error { return timeoutError(msg) }

// notSentError is the error of a call that never reached its bundle.
type notSentError struct{ err error }

func (e notSentError) Error() string        { return e.err.Error() }
func (e notSentError) Unwrap() error        { return e.err }
func (e notSentError) Is(target error) bool { return target == ErrNotSent }

func notSent(err error) error { return notSentError{err} }

// isToolError reports whether a tools/call result says isError, cheaply.
func isToolError(res json.RawMessage) bool {
	v, ok := rawjson.Member(res, "isError")
	return ok && string(v) == "true"
}

func invalidParams(msg string) *rpc.Error {
	return rpc.Errorf(mcp.CodeInvalidParams, "%s", msg)
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
	meta, _ := rawjson.Member(params, "_meta")
	n.mu.Lock()
	defer n.mu.Unlock()
	if raw, ok := rawjson.Member(meta, RelatedRequestKey); ok {
		var id rpc.ID
		if json.Unmarshal(raw, &id) == nil {
			if f := inst.flights[id]; f != nil {
				return f
			}
		}
	}
	var found *flight
	for _, f := range inst.flights {
		if found != nil && f.sess != found.sess {
			return nil
		}
		found = f
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
		h.n.forwardProgress(h.inst, params)
	case mcp.NotifyMessage:
		var msg mcp.LoggingMessageParams
		if err := json.Unmarshal(params, &msg); err != nil {
			h.b.log.Warn("bad notifications/message", "error", err)
			return
		}
		msg.Logger = qualify(c.Name(), msg.Logger)
		if f := h.n.related(h.inst, params); f != nil {
			_ = f.sess.Notify(f.relay.outer, mcp.NotifyMessage, msg)
			return
		}
		// Sent to everyone, a record of one client's call could reach another client.
		h.b.log.Info("bundle log message that no single client's call can be told to own; kept in the node's log",
			"level", msg.Level, "logger", msg.Logger, "data", clipRaw(msg.Data))
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
func (h bundleHandler) Request(ctx context.Context, _ *upstream.Client, method string, params json.RawMessage) (json.RawMessage, error) {
	f := h.n.related(h.inst, params)
	if f == nil {
		return nil, rpc.Errorf(mcp.CodeInternalError,
			"%s can only be sent while serving one client's call, named in _meta[%q] when several are in flight (toolnode relays it to that client)",
			method, RelatedRequestKey)
	}
	// The bundle's request ends when the client's call does, or when the bundle cancels it.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	call := f.relay.context()
	stop := context.AfterFunc(call, cancel)
	defer stop()
	return f.sess.Request(withCall(ctx, call), method, withoutRelated(params))
}

// withoutRelated removes the node's routing key from params' _meta (and _meta, when that
// leaves it empty): it is between a bundle and the node.
func withoutRelated(params json.RawMessage) json.RawMessage {
	meta, ok := rawjson.Member(params, "_meta")
	if !ok {
		return params
	}
	meta = rawjson.DeleteMember(meta, RelatedRequestKey)
	if string(bytes.TrimSpace(meta)) == "{}" {
		return rawjson.DeleteMember(params, "_meta")
	}
	out, _ := rawjson.SetMember(params, "_meta", meta)
	return out
}

// qualify names the bundle as the logger of its messages, keeping the bundle's own logger.
func qualify(bundle, logger string) string {
	if logger == "" {
		return bundle
	}
	return bundle + "/" + logger
}

// forwardProgress passes a bundle's progress to the client whose call it is about. Tokens
// are the node's own, unguessable, and taken only from the process the call went to: a
// bundle cannot send progress into another's call.
func (n *Node) forwardProgress(inst *instance, params json.RawMessage) {
	var p map[string]json.RawMessage
	if json.Unmarshal(params, &p) != nil {
		return
	}
	var token string
	if json.Unmarshal(p["progressToken"], &token) != nil {
		return
	}
	n.mu.Lock()
	f := inst.byToken[token]
	n.mu.Unlock()
	if f == nil {
		n.log.Debug("progress for no call of this process", "token", token)
		return
	}
	f.relay.touch()
	if f.relay.clientToken == nil {
		return // the client did not ask for progress
	}
	p["progressToken"] = f.relay.clientToken
	_ = f.sess.Notify(f.relay.outer, mcp.NotifyProgress, p)
}

// newToken returns a progress token unique to this node's run. Progress is only taken
// from the process a call went to (see forwardProgress), so a token needs no secrecy.
func (n *Node) newToken() string {
	return n.tokenTag + strconv.FormatUint(n.tokens.Add(1), 36)
}

func clipRaw(b json.RawMessage) string {
	const max = 200
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(b)
}

// refresh re-reads what a bundle offers after one of its processes said a list changed.
func (n *Node) refresh(b *bundle, inst *instance) {
	ctx, cancel := context.WithTimeout(context.Background(), b.m.Timeouts.Start)
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
	n.surfaceSeen(b, inst, l)
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
