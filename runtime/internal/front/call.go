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
// Serve; the call ends once, with its answer given to the transport's reply.
//
// The way of a tools/call (docs/architecture.md draws it):
//
//	transport → Serve: the caller's filter and the catalog's name set on the request, the
//	    request's span started → node.CallTool → the relay to a bundle process
//	bundle's answer → the relay ends (bundle span, stats, failures settled) →
//	    Call.CallDone: input asked for by a bundle served, the audit record written →
//	    Call.finish: request span ended, the call forgotten → the transport (a Replier)
//
// A tools/call is answered from the goroutine that reads the bundle's answer, without a
// hand-off: for a relay, hand-offs between goroutines are most of a call's cost.
type Call struct {
	peer      peer     // whom the request is served for
	owner     *Session // whose requests in flight it counts among; nil for none
	id        rpc.ID
	ctx       context.Context
	cancel    context.CancelCauseFunc
	cancelled atomic.Bool // by the client, as opposed to the end of the call
	longLived bool        // a subscription, which ends only when the client cancels it

	// mu orders a relay's Watch and the client's cancellation: the relay is either told or
	// sees the call cancelled.
	mu      sync.Mutex
	abandon node.Abandoner // the relay of a session's call; nil before one watches

	req   *node.Request
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
	c.cancel(reason)
	a := c.abandon
	c.abandon = nil // told once: a session's close may follow the client's cancellation
	c.mu.Unlock()
	if a != nil {
		// Not on this goroutine: the relay ends the call, and the session's close calls
		// this holding the session's lock, which ending a call takes.
		go a.Abandon(context.Cause(c.ctx))
	}
}

// Watch implements node.Watcher: the relay of a session's call is told of its cancellation
// by cancelByClient, and spared a watch on the call's context. A stateless request's call
// ends with its HTTP request's context, which only a watch on it sees.
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
	req.Allow = srv.allow(c.peer.base().id)
	req.Guard = srv.guard(c.peer.base().id)
	if req.Method == mcp.MethodToolsCall {
		if req.Canonical == "" {
			req.Canonical = canonicalName(c.peer, req.Name)
		}
		req.Strict = c.peer.strictNames()
	}
	c.trace()
	switch p := c.peer.(type) {
	case *Session:
		p.serve(c)
	case *Stateless:
		p.serve(c)
	}
}

// end ends the call with the outcome of a method the front serves itself: the result
// encoded, then as finish.
func (c *Call) end(res any, err error) {
	if err != nil {
		c.finish(nil, err)
		return
	}
	raw, err := rpc.Marshal(res)
	if err != nil {
		err = fmt.Errorf("encode result: %w", err)
	}
	c.finish(raw, err)
}

// finish ends the call with its outcome: the request's span ended, the call forgotten, the
// answer given to the transport.
func (c *Call) finish(raw json.RawMessage, err error) {
	var rpcErr *rpc.Error
	if err != nil {
		rpcErr = rpc.AsError(err)
		raw = nil
	}
	if c.op != nil {
		c.op.End(errorType(c.ctx, raw, rpcErr))
	}
	c.peer.base().srv.auditSkill(c.ctx, c.req, c.peer.base().id, c.start, err)
	if c.owner != nil {
		c.owner.mu.Lock()
		delete(c.owner.inflight, c.id)
		c.owner.mu.Unlock()
	}
	c.cancel(nil)
	c.reply.Reply(c, raw, rpcErr)
}

// CallDone receives a tools/call's outcome from the node (it implements node.Done): input
// a 2026 bundle asks of a session's client is served first, then the call is audited and
// ended.
func (c *Call) CallDone(res json.RawMessage, err error) {
	if sess, ok := c.peer.(*Session); ok && err == nil && isInputRequired(res) {
		go func() {
			res, err := sess.fulfil(c.ctx, c.req, res, func(req *node.Request) (json.RawMessage, error) {
				return rpc.Await(func(done rpc.Done) { sess.srv.node.CallTool(c.ctx, sess, req, node.DoneFunc(done)) })
			})
			c.audited(res, err)
		}()
		return
	}
	c.audited(res, err)
}

// audited writes the call's audit record and ends it, in the revision's terms for a
// stateless client.
func (c *Call) audited(res json.RawMessage, err error) {
	srv := c.peer.base().srv
	srv.audit(c.req, c.peer.base().id, c.start, res, err, c.ctx.Err() != nil)
	if v, ok := c.peer.(*Stateless); ok {
		res, err = v.finish(c.req.Method, res, err)
	}
	c.finish(res, err)
}

// Fail ends the call with err, unserved (its params could not be read, its _meta was
// refused), and gives reply the answer; with err nil, it only ends the call (a
// subscription its client cancelled, which takes no answer).
func (c *Call) Fail(err *rpc.Error, reply Replier) {
	c.reply = reply
	if err == nil {
		c.finish(nil, nil)
		return
	}
	c.finish(nil, err)
}
