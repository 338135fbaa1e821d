package node

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/toolnode/toolnode/runtime/internal/upstream"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// One value per call, as the go-sdk's ServerRequest carries its session and extras: the
// node serves every call for an Exchange, which says who the caller is (a plain Caller) and
// takes what a bundle sends about the call (progress, log messages, requests of the
// client) and the call's outcome. A front's call, a task, a run's inner call and a call
// from another node of a cluster each implement it; the node never asks what an Exchange
// is. A Session is the other way to a client: the messages of no one call (list changes,
// resource updates), to the sessions attached.

// Caller is who a call is made for, as the node reads it: plain data that the front fills
// once per call. The zero Caller is an anonymous caller without a session, of whom nothing
// is known.
type Caller struct {
	// Subject is the OAuth subject of the caller's token; "" without one.
	Subject string
	// Client is the access file's client the caller is; "" without an access file.
	Client string
	// Key names the client for isolated bundles, crash blame and kept results: calls of
	// one client share a process of an isolated bundle; "" is an anonymous caller without
	// a session, whose every call gets a process of its own (and who is never blamed for
	// crashes).
	Key string
	// Bound names what the client counts against for the per-client bound of isolated
	// processes: its identity, or for an anonymous one where it comes from. Default
	// "anonymous".
	Bound string
	// Ended is closed when the client is gone and its processes may stop; nil when only
	// the end of its calls stops them.
	Ended <-chan struct{}
	// Session is the session the call came in, for which resources/subscribe watches a
	// resource, and whose calls in flight may share what a bundle does not relate to one
	// of them; nil for a call without one (a stateless request, a task, a run, a call of
	// another node).
	Session Session
	// Caps is the client's capabilities object as it sent it; nil when unknown. A bundle
	// of the 2026-07-28 revision is told those, rather than everything the node could
	// relay: it then asks only for input the client can give.
	Caps json.RawMessage
	// LogLevel is the least level of the log messages the client wants; "" when unknown.
	LogLevel string
	// NoLogs says the client wants no log messages: a bundle of the 2026-07-28 revision is
	// asked for none, and makes none that the node would drop.
	NoLogs bool
}

// upstream is what a stateless bundle is told of the caller.
func (c Caller) upstream() upstream.Caller {
	return upstream.Caller{Caps: c.Caps, LogLevel: c.LogLevel, NoLogs: c.NoLogs}
}

// bound is what the caller counts against (see Bound).
func (c Caller) bound() string {
	if c.Bound == "" {
		return "anonymous"
	}
	return c.Bound
}

// Exchange is one call as the node serves it: who it is for, where what its bundle sends
// about it goes, and where its outcome goes. Implementations must be safe for concurrent
// use: Progress, Log and Ask are called from the goroutines that read bundles, while the
// call runs.
type Exchange interface {
	// Caller is who the call is made for; it does not change while the call runs.
	Caller() Caller
	// Progress passes on the bundle's progress of the call, under the client's own token.
	// It must not block for long.
	Progress(p mcp.ProgressParams)
	// Log passes on a log message the bundle sent about the call, its logger qualified by
	// the bundle's name. It must not block for long.
	Log(m mcp.LoggingMessageParams)
	// Ask sends the client a request about the call (sampling, elicitation, roots) and
	// waits for its answer; ctx ends when the bundle no longer waits or the call ends.
	Ask(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
	// Done receives the outcome of the call, once, from CallTool and CallToolTask (the
	// methods that return their answer, such as GetPrompt, leave it alone).
	Done
	// Watch arranges for a to be told, once, when the client stops waiting for the call,
	// from a goroutine that holds none of the exchange's locks. It reports false when it
	// cannot (the call is cancelled already, or only its context knows its end): the
	// relay then watches the call's context, which costs every relayed call five
	// allocations and two locks for an end few calls meet.
	Watch(a Abandoner) bool
}

// Client is a caller without a front (the command line, a test): what bundles send about
// its calls comes to it as notifications and requests (see Detached).
type Client interface {
	Session
	// Request sends the client a request (sampling, elicitation, roots) and waits for its
	// answer.
	Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
}

// Detached is a call of caller for a client without a front: progress and log messages go
// to c as notifications, what the bundle asks as c's requests, the outcome to done.
func Detached(c Client, caller Caller, done Done) Exchange {
	return &detached{c: c, caller: caller, done: done}
}

type detached struct {
	c      Client
	caller Caller
	done   Done
}

func (d *detached) Caller() Caller { return d.caller }
func (d *detached) Progress(p mcp.ProgressParams) {
	_ = d.c.Notify(context.Background(), mcp.NotifyProgress, p)
}
func (d *detached) Log(m mcp.LoggingMessageParams) {
	_ = d.c.Notify(context.Background(), mcp.NotifyMessage, m)
}
func (d *detached) Ask(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	return d.c.Request(ctx, method, params)
}
func (d *detached) CallDone(o Outcome)   { d.done.CallDone(o) }
func (d *detached) Watch(Abandoner) bool { return false }

// Await serves a call for x, made by call with the Exchange it is given, and waits for its
// Outcome, which goes to the caller rather than to x's Done: a call made again under the
// call of x (with the client's input), or one of several under it.
func Await(x Exchange, call func(Exchange)) Outcome {
	a := &awaiting{Exchange: x, done: make(chan Outcome, 1)}
	call(a)
	return <-a.done
}

// awaiting is an exchange whose Outcome goes to done. It watches nothing: several calls
// may be made under one exchange at once, and it can tell only one relay.
type awaiting struct {
	Exchange
	done chan Outcome
}

func (a *awaiting) CallDone(o Outcome)   { a.done <- o }
func (a *awaiting) Watch(Abandoner) bool { return false }

// sameClient reports whether the calls of x and y come from one client's session (or are
// one call): what a bundle does not relate to a call may go to either.
func sameClient(x, y Exchange) bool {
	if x == y {
		return true
	}
	s := x.Caller().Session
	return s != nil && s == y.Caller().Session
}

// errNoSession refuses resources/subscribe of a call that came in no session.
var errNoSession = errors.New("resources/subscribe needs a session to send the resource's updates to")
