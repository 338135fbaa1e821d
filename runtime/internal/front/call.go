package front

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/node"
	"github.com/toolnode/toolnode/runtime/internal/rpc"
	"github.com/toolnode/toolnode/runtime/internal/telemetry"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// Call is one client request being served. A transport begins it (Session.Begin or
// Stateless.Begin), reads the message's params once into a node.Request and hands both to
// Serve; the call ends once, with its answer given to the transport's reply. It is the
// node.Exchange the node serves the request for: who the client is, and the way back to
// it for what a bundle sends about the call.
//
// The way of a tools/call (docs/architecture.md draws it):
//
//	transport → Serve: the caller's filter and the catalog's name set on the request, the
//	    request's span started → node.CallTool → the relay to a bundle process
//	bundle's answer → the relay ends: the answer taken, its node.Outcome made (failures
//	    settled), the bundle span and stats read from it →
//	    Call.CallDone: input asked for by a bundle served, the audit record written →
//	    Call.finish: request span ended, the call forgotten → the transport (a Replier)
//
// Everything on the way back reads the Outcome, never the answer again.
//
// A tools/call is answered from the goroutine that reads the bundle's answer, without a
// hand-off: for a relay, hand-offs between goroutines are most of a call's cost.
type Call struct {
	peer      peer         // whom the request is served for
	who       *node.Caller // the client as the node reads it, from Serve on; the peer's, shared
	out       node.Client  // the call's own way back (an HTTP request's stream); nil for the client's
	owner     *Session     // whose requests in flight it counts among; nil for none
	id        rpc.ID
	ctx       context.Context // &lazy for a session's call; a stateless request's is its request's
	lazy      callContext
	cancelled atomic.Bool // by the client, as opposed to the end of the call
	longLived bool        // a subscription, which ends only when the client cancels it

	// mu orders a relay's Watch and the client's cancellation: the relay is either told or
	// sees the call cancelled.
	mu      sync.Mutex
	abandon node.Abandoner // the relay of a session's call; nil before one watches

	req   *node.Request
	tool  node.Tool       // the catalog's entry of the tool a tools/call names, found once (see serve)
	rec   node.CallRecord // the node's record of a tools/call, made with the call (node.CallIn)
	reply Replier
	op    *telemetry.Op // the request's span; nil without tracing
	start time.Time     // for the audit log; zero without one
}

// Replier is where a call's answer goes: its transport, told once. A transport is one
// itself, so that serving a call makes no function value of its own.
type Replier interface {
	// Reply receives the answer of c: its result, or its error.
	Reply(c *Call, res json.RawMessage, err *rpc.Error)
}

// ID is the request's id.
func (c *Call) ID() rpc.ID { return c.id }

// Method is the request's method, once Serve or Fail has been given it.
func (c *Call) Method() string {
	if c.req == nil {
		return ""
	}
	return c.req.Method
}

// As serves the call as a stateless request of v, while the session it began in keeps it
// among its requests in flight (so that a stdio cancellation finds it).
func (c *Call) As(v *Stateless) *Call {
	c.peer = v
	return c
}

// LongLived marks the call as a subscription, which ends only when the client cancels it:
// a session draining before it closes does not wait for it.
func (c *Call) LongLived() { c.longLived = true }

// Context is the call's context: it ends when the call does or the client cancels it.
func (c *Call) Context() context.Context { return c.ctx }

// Cancelled reports whether the client cancelled the call, in which case no answer is sent.
func (c *Call) Cancelled() bool { return c.cancelled.Load() }

// cancelByClient cancels the call: its client cancelled it, or its session closed. Both come
// here, which is what lets a session's call watch for its relay (see Watch).
func (c *Call) cancelByClient(reason error) {
	c.mu.Lock()
	c.cancelled.Store(true)
	c.endContext(reason)
	a := c.abandon
	c.abandon = nil // told once: a session's close may follow the client's cancellation
	c.mu.Unlock()
	if a != nil {
		// Not on this goroutine: the relay ends the call, and the session's close calls
		// this holding the session's lock, which ending a call takes.
		go a.Abandon(context.Cause(c.ctx))
	}
}

// Watch implements node.Exchange: the relay of a session's call is told of its
// cancellation by cancelByClient, and spared a watch on the call's context. A stateless
// request's call ends with its HTTP request's context, which only a watch on it sees.
func (c *Call) Watch(a node.Abandoner) bool {
	if c.owner == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctx.Err() != nil {
		return false
	}
	c.abandon = a
	return true
}

// Serve serves req, the request the call began for as the transport read it, and gives
// reply the answer, once. A tools/call is never held up here: its answer comes from the
// goroutine that reads the bundle; other methods may block, and transports give them a
// goroutine. reply must not block for long.
func (c *Call) Serve(req *node.Request, reply Replier) {
	srv := c.peer.base().srv
	c.req, c.reply = req, reply
	select {
	case <-srv.node.Ready():
	default:
		go func() { // waits for the bundles' first start
			if err := srv.waitReady(c.ctx); err != nil {
				c.end(nil, err)
				return
			}
			c.serve()
		}()
		return
	}
	c.serve()
}

func (c *Call) serve() {
	srv, req := c.peer.base().srv, c.req
	c.who = c.peer.caller()
	req.Allow = srv.allow(c.peer.base().id)
	req.Guard = srv.guard(c.peer.base().id)
	if req.Method == mcp.MethodToolsCall {
		if req.Canonical == "" {
			req.Canonical = canonicalName(c.peer, req.Name)
		}
		req.Strict = c.peer.strictNames()
		c.tool = srv.node.FindTool(req) // once: everything on the call's way reads it
	}
	c.trace()
	c.peer.serve(c)
}

// Caller implements node.Exchange: the client of the call.
func (c *Call) Caller() node.Caller {
	if c.who == nil { // not served (yet)
		return node.Caller{}
	}
	return *c.who
}

// SendOn makes out the way back of what concerns the call (progress, log messages,
// requests to the client): the transport's own for this request, such as the event stream
// of its HTTP POST. Without it, they go where the client's messages go. It is called
// before Serve.
func (c *Call) SendOn(out node.Client) { c.out = out }

// outbound is where what concerns the call goes.
func (c *Call) outbound() node.Client {
	if c.out != nil {
		return c.out
	}
	return c.peer.base().out
}

// Progress implements node.Exchange: the progress goes to the client on the call's way
// back.
func (c *Call) Progress(p mcp.ProgressParams) { c.peer.notify(c, mcp.NotifyProgress, p) }

// Log implements node.Exchange: the message goes to the client on the call's way back, at
// the level the client wants.
func (c *Call) Log(m mcp.LoggingMessageParams) { c.peer.notify(c, mcp.NotifyMessage, m) }

// Ask implements node.Exchange: the request goes to the client on the call's way back, and
// is given up when ctx ends.
func (c *Call) Ask(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	return c.peer.ask(ctx, c, method, params)
}

// end ends the call with the outcome of a method the front serves itself: the result
// encoded, then as finish.
func (c *Call) end(res any, err error) {
	if err != nil {
		c.finish(node.Answer(c.Method(), nil, err))
		return
	}
	raw, err := rpc.Marshal(res)
	if err != nil {
		err = fmt.Errorf("encode result: %w", err)
	}
	c.finish(node.Answer(c.Method(), raw, err))
}

// finish ends the call with its Outcome: the request's span ended, the call forgotten, the
// answer given to the transport.
func (c *Call) finish(o node.Outcome) {
	if c.op != nil {
		c.op.End(o.ErrorType(c.ctx.Err() != nil))
	}
	c.peer.base().srv.auditSkill(c.ctx, c.req, c.peer.base().id, c.start, o)
	if c.owner != nil {
		c.owner.mu.Lock()
		delete(c.owner.inflight, c.id)
		c.owner.mu.Unlock()
	}
	c.endContext(nil)
	c.reply.Reply(c, o.Result, o.RPCError())
}

// endContext ends the call's context with cause (nil: the call is over). A stateless
// request's is its request's, which ends with it.
func (c *Call) endContext(cause error) {
	if c.lazy.parent != nil {
		c.lazy.end(cause)
	}
}

// CallDone receives a tools/call's Outcome from the node (it implements node.Exchange):
// input a 2026 bundle asks of a client that takes requests is served first, then the call
// is audited and ended.
func (c *Call) CallDone(o node.Outcome) {
	if c.peer.asksInline() && o.InputRequired() {
		go c.fulfil(o)
		return
	}
	c.audited(o)
}

// fulfil serves the input a 2026 bundle asks of a client that takes requests, then audits
// and ends the call. (A method, not a closure: a closure over o would put every call's
// Outcome on the heap.)
func (c *Call) fulfil(o node.Outcome) {
	n := c.peer.base().srv.node
	c.audited(node.FulfilInput(c.ctx, c, c.req, o, func(req *node.Request) node.Outcome {
		return node.Await(c, func(x node.Exchange) { n.CallFound(c.ctx, x, req, c.tool) })
	}))
}

// audited writes the call's audit record and ends it, in the terms of the client's
// revision.
func (c *Call) audited(o node.Outcome) {
	srv := c.peer.base().srv
	srv.audit(c.req, c.peer.base().id, c.start, o, c.ctx.Err() != nil)
	c.finish(c.peer.answer(c.req.Method, o))
}

// Fail ends the call with err, unserved (its params could not be read, its _meta was
// refused), and gives reply the answer; with err nil, it only ends the call (a
// subscription its client cancelled, which takes no answer).
func (c *Call) Fail(err *rpc.Error, reply Replier) {
	c.reply = reply
	if err == nil {
		c.finish(node.Answer(c.Method(), nil, nil))
		return
	}
	c.finish(node.Answer(c.Method(), nil, err))
}
