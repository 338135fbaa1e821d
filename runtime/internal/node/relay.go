package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/rpc"
	"github.com/toolnode/toolnode/runtime/internal/telemetry"
	"github.com/toolnode/toolnode/runtime/internal/upstream"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// A relay is one request on its way to a bundle process and back. send makes it, registers
// it with the process (under its id and the progress token the bundle is given) and sends
// the request in one edit of its params; finish ends it, once, whoever comes first: the
// bundle's answer, the process's end, the call's time limit, or the client leaving. finish
// then takes the answer into the call's Outcome (call.take), ends the bundle span and counts
// the call from it, and gives it to the call's done.

// relay is everything send keeps for one request, in the allocation of its call's record
// (call.relay), since it is made for every call.
type relay struct {
	flight
	c     *call // the call relayed: its request, where its Outcome goes
	n     *Node
	b     *bundle
	outer context.Context // the client's call: its values, and its end
	key   uint64          // the call's id with the process (r.id), which its flight is known by
	// clientToken is the progress token the client gave, nil when it asked for none.
	clientToken json.RawMessage
	start       time.Time
	idle        time.Duration
	hard        time.Duration
	// deadline is when the call is given up on unless it shows progress first, and limit
	// when it is given up on whatever its progress, both since the node's epoch (see sweep.go).
	deadline atomic.Int64
	limit    time.Duration
	op       *telemetry.Op // the bundle span; nil without tracing

	// The sweep and the watch on the client's context may act on other goroutines while
	// send sets them up: mu orders it all, and whoever ends the call first wins.
	mu        sync.Mutex
	id        rpc.ID
	stopOuter func() bool // ends the watch on outer; nil when the Exchange watches the call
	ended     bool
	// What the bundle asks the client during the call lives as long as the call: its
	// context is made when the bundle first asks, which few calls see.
	asked    context.Context
	endAsked context.CancelCauseFunc
}

// settling says how a relay's failures reach its caller (see settle).
type settling uint8

const (
	// settleAsIs passes every outcome as it is: prompts, resources, completions.
	settleAsIs settling = iota
	// settleTool turns a bundle's failure into a tool result with isError, naming the
	// bundle, so that the model on the other side can act on it.
	settleTool
	// settleExecute turns it into toolnode.execute's ExecError result, which says whether
	// the call was sent.
	settleExecute
)

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

// send relays the request of c to process inst of bundle b, the call starting at now (on
// the node's clock); rename, unless "", is the name the bundle knows the target by.
func (n *Node) send(c *call, b *bundle, inst *instance, rename string, now time.Time) {
	outer, x, req := c.ctx, c.x, c.req
	r := &c.relay // made with the call's record, not an allocation of its own
	r.c, r.n, r.b, r.outer, r.start = c, n, b, outer, now
	r.idle, r.hard, r.clientToken = b.m.Timeouts.Call, max(b.m.Timeouts.CallMax, b.m.Timeouts.Call), req.ProgressToken
	// One deadline serves both limits: it is due when the call has gone idle without
	// progress or reaches call_max, whichever comes first; progress pushes it back.
	since := now.Sub(n.epoch)
	r.limit = since + r.hard
	r.deadline.Store(int64(min(since+r.idle, r.limit)))
	r.flight = flight{x: x, inst: inst, relay: r}
	c.notes.served = inst
	inst.busy.Add(1)
	// The flight is known before the bundle can name it: registered under the id the call
	// will go under, before it is sent.
	id, err := inst.client.ExpectTo(r)
	if err != nil {
		r.finish(nil, notSent(err))
		return
	}
	r.id, r.key = id, idKey(id)
	inst.mu.Lock()
	inst.flights[r.key] = &r.flight
	inst.sweepLocked(sweepEvery(r.idle))
	inst.mu.Unlock()
	// Every call gets a token of ours, so that its progress extends its timeout even when
	// the client asked for none (then the progress goes no further): the node's tag and the
	// call's id, by which its flight is found (see forwardProgress).
	edit := upstream.Edit{Name: rename, TokenTag: n.tokenTag, Caller: x.Caller().upstream()}
	if _, nop := n.cfg.Telemetry.(telemetry.Nop); !nop {
		target := rename
		if target == "" {
			target = req.Name
		}
		var ctx context.Context
		ctx, r.op = n.cfg.Telemetry.StartBundleCall(outer, telemetry.BundleCall{Bundle: b.name, Method: req.Method, Target: target, ID: json.RawMessage(id.String())})
		edit.Meta = n.cfg.Telemetry.TraceMeta(ctx)
	}
	r.mu.Lock()
	ended := r.ended // failed already
	if !ended && !x.Watch(r) {
		r.stopOuter = context.AfterFunc(outer, func() { r.Abandon(context.Cause(outer)) })
	}
	r.mu.Unlock()
	if ended {
		// It failed between Expect and the registration above (the process ended), and
		// its finish found nothing to forget: the flight goes now.
		r.forget()
	}
	carryToken(b, c, &edit)
	if err := inst.client.Send(id, req.Method, req.Params, edit); err != nil {
		r.finish(nil, notSent(err))
	}
}

// newToken returns a name unique to this node's run, such as a run's id.
func (n *Node) newToken() string {
	b := make([]byte, 0, len(n.tokenTag)+13)
	return string(strconv.AppendUint(append(b, n.tokenTag...), n.tokens.Add(1), 36))
}

// idKey is the key of a call's flight: its id with the process, always an integer of the
// connection's (rpc.Pending). Progress is only taken from the process a call went to (see
// forwardProgress), so the token made of it needs no secrecy.
func idKey(id rpc.ID) uint64 {
	n, _ := id.Uint()
	return n
}

// what names the request in errors: what it asked the bundle for.
func (r *relay) what() string {
	switch r.c.req.Method {
	case mcp.MethodToolsCall:
		return fmt.Sprintf("tool %q", r.c.req.Target())
	case mcp.MethodPromptsGet:
		return fmt.Sprintf("prompt %q", r.c.req.Target())
	case mcp.MethodResourcesRead, mcp.MethodResourcesSub, mcp.MethodResourcesUnsub:
		return fmt.Sprintf("resource %q", r.c.req.URI)
	}
	return r.c.req.Method
}

// touch pushes the call's deadline back: it showed progress.
func (r *relay) touch() {
	r.deadline.Store(int64(min(r.inst.sinceEpoch()+r.idle, r.limit)))
}

// expire gives up on a call past its deadline. The causes are built only then: the rest
// runs for every call.
func (r *relay) expire() {
	if time.Duration(r.deadline.Load()) >= r.limit {
		r.giveUp(timedOut(fmt.Sprintf("%s of bundle %q took longer than its call_max of %s; the bundle was told to cancel", r.what(), r.b.name, r.hard)))
		return
	}
	r.giveUp(timedOut(fmt.Sprintf("%s of bundle %q showed no progress for %s; the bundle was told to cancel", r.what(), r.b.name, r.idle)))
}

// Abandon gives up on a call its client no longer waits for (it implements Abandoner).
func (r *relay) Abandon(cause error) { r.giveUp(cause) }

// giveUp ends the call with err unless its answer came first: whoever takes the call from
// the connection first ends it.
func (r *relay) giveUp(err error) {
	if r.inst.client.Abandon(r.id, err.Error()) {
		r.finish(nil, err)
	}
}

// Answer implements rpc.Answerer: the process's answer to the call, or why there is none.
func (r *relay) Answer(res json.RawMessage, err error) { r.finish(res, r.inst.client.Failure(err)) }

// finish ends the call, once: the answer, or why there is none.
func (r *relay) finish(res json.RawMessage, err error) {
	r.mu.Lock()
	if r.ended {
		r.mu.Unlock()
		return
	}
	r.ended = true
	if r.stopOuter != nil {
		r.stopOuter()
	}
	endAsked := r.endAsked
	r.mu.Unlock()
	if endAsked != nil {
		endAsked(errCallEnded)
	}
	n, b, inst := r.n, r.b, r.inst
	r.forget()
	inst.busy.Add(-1)
	// Why the bundle was stopped matters only to a call its process's end took with it.
	reason := ""
	if err != nil && errors.Is(err, upstream.ErrGone) {
		n.mu.Lock()
		reason = b.stopReason
		n.mu.Unlock()
	}
	if err != nil && errors.Is(err, upstream.ErrGone) && reason != "" {
		err = fmt.Errorf("%w; the bundle was %s", err, reason)
	}
	if err != nil {
		b.log.Debug("call to the bundle ended in an error", "id", r.id.String(), "error", err)
	}
	// The caller is asked for only when its key is needed: most calls end well, with no
	// crash counted against anyone.
	switch {
	case err == nil:
		if b.blame.counted.Load() {
			b.blame.forgive(r.x.Caller().Key)
		}
	case errors.Is(err, upstream.ErrGone) && reason == "":
		b.blame.crashed(r.x.Caller().Key, inst) // the process died under this call, on its own
	}
	o := r.c.take(res, err)
	b.stats.record(r.n.clk.Now().Sub(r.start), o.failed())
	if r.op != nil {
		r.op.End(o.bundleErrorType())
	}
	r.c.done.CallDone(o)
}

// forget removes the call from its process's calls in flight.
func (r *relay) forget() {
	r.inst.mu.Lock()
	delete(r.inst.flights, r.key)
	r.inst.mu.Unlock()
}

// isRPCError reports whether err is a JSON-RPC error. Asked only of errors: the pointer
// errors.As fills escapes, and a call that succeeds should not pay for it.
func isRPCError(err error) bool {
	var rpcErr *rpc.Error
	return errors.As(err, &rpcErr)
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
