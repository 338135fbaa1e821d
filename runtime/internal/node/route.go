package node

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/catalog"
	"github.com/toolnode/toolnode/runtime/internal/rpc"
	"github.com/toolnode/toolnode/runtime/internal/upstream"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// Routing: a client's request, read once into a Request, goes to the bundle serving what it
// names: a tool or a prompt by its name in the merged catalog, a resource by its URI, a
// completion by its ref. The caller's filter (Request.Allow) decides first: what it may not
// reach is answered as if it did not exist, and never sent to a bundle.

// Allow reports whether a caller may see and use what a name stands for; nil allows
// everything. Tools and prompts are named as clients see them (meos.speed); a bundle's
// resources and resource templates as "<bundle>.<uri>" (see resourceName).
type Allow func(name string) bool

func (a Allow) allows(name string) bool { return a == nil || a(name) }

// resourceName is the name a caller's filter sees a resource or resource template of a
// bundle by: its URI (or URI template) under the bundle's name, so that "pub.*" covers
// everything bundle pub serves, and a pattern naming one tool covers no resource.
func resourceName(bundle, uri string) string { return bundle + "." + uri }

// Resource reports whether the caller may read (list, watch, complete) a resource of bundle.
func (a Allow) Resource(bundle, uri string) bool { return a == nil || a(resourceName(bundle, uri)) }

// Done receives the outcome of a request the node served, once. It may run on the
// goroutine that reads the bundle, and must not block. A front's call is one, so that
// routing a call makes no function value of its own.
type Done interface {
	CallDone(o Outcome)
}

// An Abandoner is a request on its way to a bundle: the Exchange of its call tells it when
// the client stops waiting (see Exchange.Watch), and it gives up on the call (the bundle is
// told to cancel).
type Abandoner interface {
	Abandon(cause error)
}

// DoneFunc is a function as a Done.
type DoneFunc func(o Outcome)

// CallDone calls f.
func (f DoneFunc) CallDone(o Outcome) { f(o) }

// CallTool routes a tools/call of x to the bundle serving the tool req names, as req.Allow
// lets the caller, and gives x the Outcome, once: the bundle's result as it sent it, or
// a JSON-RPC error (an unknown or forbidden tool, bad params), or the caller's
// cancellation; a bundle that fails or times out gives a result with isError set, naming
// the bundle, so that the model on the other side can act on it. The Outcome says what the
// node did (Bundle, Ran, Via, Kind); req is only read.
//
// A result whose text passes the node's budget is cut, its whole kept for the caller (see
// ResultBounds).
func (n *Node) CallTool(ctx context.Context, x Exchange, req *Request) {
	n.CallFound(ctx, x, req, n.FindTool(req))
}

// A Tool is the catalog's entry of the tool a tools/call names, found once, where the call
// is routed (FindTool), and carried to what asks about the tool on the call's way: its span,
// whether it may become a task, whether it may ask the client, and the call itself. The
// zero Tool is a tool the catalog does not hold.
type Tool struct {
	e *catalog.Entry // the catalog's own; nil for a tool it does not hold
}

// FindTool finds the tool req (a tools/call) names in the catalog, by its catalog name.
func (n *Node) FindTool(req *Request) Tool { return Tool{e: n.Catalog().Find(req.Target())} }

// Known reports whether the catalog holds the tool: its name is one the node serves.
func (t Tool) Known() bool { return t.e != nil }

// entry is the tool's catalog entry, and whether the catalog holds one.
func (t Tool) entry() (catalog.Entry, bool) {
	if t.e == nil {
		return catalog.Entry{}, false
	}
	return *t.e, true
}

// CallFound is CallTool for the tool t, which FindTool found for req.
func (n *Node) CallFound(ctx context.Context, x Exchange, req *Request, t Tool) {
	n.callTool(n.shapedCall(new(call), ctx, x, req, settleTool), t)
}

// CallRecord is room for the node's record of one tools/call (the relay to a bundle
// process in it), for a caller to hold in a value it makes for the call anyway, such as a
// front's: CallIn then makes no allocation for the record. A record serves one call; the
// zero CallRecord is ready to.
type CallRecord struct{ c call }

// CallIn is CallFound with the node's record of the call made in rec, which must serve no
// other call.
func (n *Node) CallIn(rec *CallRecord, ctx context.Context, x Exchange, req *Request, t Tool) {
	n.callTool(n.shapedCall(&rec.c, ctx, x, req, settleTool), t)
}

// Call reads params as a tools/call and serves it as CallTool does, for an anonymous
// caller that may call every tool, waiting for the outcome: for callers without a front,
// such as the command line. What the bundle sends about the call goes to c.
func (n *Node) Call(ctx context.Context, c Client, params json.RawMessage) (json.RawMessage, error) {
	req, err := ReadRequest(mcp.MethodToolsCall, params)
	if err != nil {
		return nil, err
	}
	o := awaitOutcome(func(done Done) { n.CallTool(ctx, Detached(c, Caller{}, done), req) })
	return o.Answer()
}

// callTool routes the tools/call c of the tool t, failures settled as c says.
func (n *Node) callTool(c *call, t Tool) {
	req := c.req
	name := req.Target()
	c.notes.Ran = name
	e, ok := t.entry()
	if !ok {
		var err *rpc.Error
		if e, ok, err = n.viewCall(name, req.Allow); err != nil {
			c.refuse(KindUnknownTool, nil, err)
			return
		}
		if ok {
			name, c.notes.Ran = e.Name, e.Name
		}
	}
	if !ok || !req.Allow.allows(name) {
		c.refused = KindUnknownTool
		if ok {
			c.refused = KindForbidden
		} else if err := n.notRunning(name); err != nil && req.Allow.allows(name) {
			c.settle(nil, err)
			return
		}
		msg := fmt.Sprintf("unknown tool %q", name)
		if why := n.heldWhy(name); !ok && why != "" && req.Allow.allows(name) {
			msg += fmt.Sprintf(" (held back: %s; toolnode pin --diff shows how, toolnode pin --accept %s serves it)", why, name)
		}
		c.settle(nil, invalidParams(msg))
		return
	}
	if xerr, waiting := n.admitCall(req.Guard, name, req.Arguments); xerr != nil {
		if waiting != nil && canAsk(c.x) {
			go func() { // the call waits for its approval
				xerr, err := n.awaitApproval(c.ctx, c.x, waiting)
				switch {
				case err != nil:
					c.settle(nil, err)
				case xerr != nil:
					c.refuse(xerr.Kind, xerr.Result(), nil)
				default:
					n.providerOf(e.Bundle).call(c, e)
				}
			}()
			return
		}
		if waiting != nil {
			xerr.Message += " (this client declared no elicitation capability, so the call cannot wait for the decision)"
		}
		c.refuse(xerr.Kind, xerr.Result(), nil)
		return
	}
	n.providerOf(e.Bundle).call(c, e)
}

// Guarded reports whether the tools/call req names a tool whose calls need approval.
func (n *Node) Guarded(req *Request) bool {
	if req.Guard == nil || req.Guard.Rule == nil {
		return false
	}
	_, _, ok := req.Guard.Rule(req.Target())
	return ok
}

// notRunning says why the catalog may lack the tool name: the bundle that would serve it
// (the bundle its prefix names, or one declaring the seat it names) has no process running,
// and failed last; nil when there is no such bundle.
func (n *Node) notRunning(name string) error {
	prefix, _, found := strings.Cut(name, ".")
	if !found {
		return nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, b := range n.bundles {
		if b.err == nil || live(b) > 0 || (b.name != prefix && !slices.Contains(b.m.Seats, prefix)) {
			continue
		}
		how := "failed"
		if strings.HasPrefix(b.err.Error(), "start: ") {
			how = "failed to start"
		}
		return fmt.Errorf("tool %q is not available: bundle %q %s (state %s): %v", name, b.name, how, b.state, b.err)
	}
	return nil
}

// AsksClients reports whether a call to the tool t may bring requests from its bundle to
// the client (elicitation, sampling, roots) while it runs: false only when no running
// process of the bundle serving it may (see upstream.Client.AsksClients). A front spares
// other calls what waiting for a client's input takes. It is asked before every call of a
// stateless client, so it reads what noteQuiet keeps rather than taking the node's lock.
func (n *Node) AsksClients(t Tool) bool {
	return t.e == nil || n.providerOf(t.e.Bundle).asksClients()
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

// GetPrompt routes prompts/get of x to the bundle serving the prompt req names, and
// returns its Outcome.
func (n *Node) GetPrompt(ctx context.Context, x Exchange, req *Request) Outcome {
	name := req.Target()
	e, ok := n.Prompts().Lookup(name)
	if !ok || !req.Allow.allows(name) {
		return Answer(req.Method, nil, invalidParams(fmt.Sprintf("unknown prompt %q", name)))
	}
	rename := ""
	if e.Tool != name {
		rename = e.Tool
	}
	return n.forwardOutcome(ctx, x, e.Bundle, rename, req, noted{})
}

// ReadResource routes resources/read by the resource's URI, and returns its Outcome; a
// view exposed under a namespaced URI is read from its bundle by the URI the bundle names it.
//
// A kept result (toolnode://result/...) is read from the node's store, for its owner only.
func (n *Node) ReadResource(ctx context.Context, x Exchange, req *Request) Outcome {
	if IsResultURI(req.URI) {
		res, err := n.readResult(ctx, x.Caller().Key, req.URI)
		return Answer(req.Method, res, err)
	}
	if o, ok := n.readSkill(ctx, x, req); ok {
		return o
	}
	bundle, own, err := n.viewBundle(req)
	if err != nil {
		return Answer(req.Method, nil, err)
	}
	if own == req.URI {
		return n.forwardOutcome(ctx, x, bundle, "", req, noted{})
	}
	return n.readRenamed(ctx, x, bundle, own, req, noted{})
}

// resourceBundle finds the bundle serving the resource req names, when the caller may
// read it; else the error of an unknown resource.
func (n *Node) resourceBundle(req *Request) (string, error) {
	return n.routeResource(req.URI, req.Allow, false)
}

// Complete routes completion/complete by what it completes: a prompt's argument or a
// resource template's.
func (n *Node) Complete(ctx context.Context, x Exchange, req *Request) (json.RawMessage, error) {
	switch req.Ref.Type {
	case "ref/prompt":
		e, ok := n.Prompts().Lookup(req.Ref.Name)
		if !ok || !req.Allow.allows(req.Ref.Name) {
			return nil, invalidParams(fmt.Sprintf("unknown prompt %q", req.Ref.Name))
		}
		if e.Tool != req.Ref.Name {
			// The bundle's own name of the prompt, in the ref the bundle reads.
			var p map[string]json.RawMessage
			var ref map[string]json.RawMessage
			if json.Unmarshal(req.Params, &p) != nil || json.Unmarshal(p["ref"], &ref) != nil {
				return nil, invalidParams("completion/complete needs a \"ref\" object")
			}
			ref["name"], _ = json.Marshal(e.Tool)
			p["ref"], _ = json.Marshal(ref)
			inner := *req
			inner.Params, _ = json.Marshal(p)
			req = &inner
		}
		return n.forward(ctx, x, e.Bundle, "", req)
	case "ref/resource":
		bundle, err := n.routeResource(req.Ref.URI, req.Allow, true)
		if err != nil {
			return nil, err
		}
		return n.forward(ctx, x, bundle, "", req)
	}
	return nil, invalidParams(fmt.Sprintf("unknown completion ref type %q", req.Ref.Type))
}

// forward is forwardAsync waiting for the answer, failures as they are.
func (n *Node) forward(ctx context.Context, x Exchange, bundleName, rename string, req *Request) (json.RawMessage, error) {
	return n.forwardOutcome(ctx, x, bundleName, rename, req, noted{}).Answer()
}

// forwardOutcome is forwardAsync waiting for the Outcome, failures as they are; notes are
// what the node noted of the request before.
func (n *Node) forwardOutcome(ctx context.Context, x Exchange, bundleName, rename string, req *Request, notes noted) Outcome {
	return awaitOutcome(func(done Done) {
		c := newCall(ctx, x, req, settleAsIs, done)
		c.notes = notes
		n.forwardAsync(c, bundleName, rename)
	})
}

// forwardAsync sends the request of c to the least busy process of a bundle and gives c's
// done its Outcome, failures settled as c says; rename, unless "", is put as the name in
// params. The request's progress token is replaced by one unique across sessions and the
// bundle's progress comes back to c's exchange under the client's token. The call may go
// without progress for the bundle's call timeout, and lasts at most its call_max; past
// either, or when the client cancels, the bundle is told to cancel.
func (n *Node) forwardAsync(c *call, bundleName, rename string) {
	// One reading of the clock serves the bundle's last use and the call's start, when
	// it goes at once.
	now := n.clk.Now()
	b, inst := n.liveBundle(bundleName, now)
	if b == nil {
		c.settle(nil, notSent(fmt.Errorf("bundle %q is not running", bundleName)))
		return
	}
	// The caller is asked for its key only when some client is refused the bundle.
	if b.blame.any.Load() {
		if err := b.blame.refused(c.x.Caller().Key, b.name); err != nil {
			c.settle(nil, notSent(err))
			return
		}
	}
	if exchanging(b) {
		n.exchange(c, b, func(err error) {
			if err != nil {
				c.settle(nil, notSent(err))
				return
			}
			// The exchange took its time: the process is picked, and the call starts, now.
			n.dispatch(c, b, rename, n.pickNow(b), n.clk.Now())
		})
		return
	}
	n.dispatch(c, b, rename, inst, now)
}

// dispatch sends the request of c to a process of b: its client's own (isolation), inst,
// the least busy one running as of now (nil for none), or the first to be ready.
func (n *Node) dispatch(c *call, b *bundle, rename string, inst *instance, now time.Time) {
	if isolatedBundle(b) {
		go func() {
			inst, err := n.pickIsolated(c.ctx, b, c.x)
			if err != nil {
				c.settle(nil, notSent(err))
				return
			}
			n.send(c, b, inst, rename, n.clk.Now())
		}()
		return
	}
	if inst != nil {
		n.send(c, b, inst, rename, now)
		return
	}
	// Asleep, starting or restarting: wait for a process without holding up the caller.
	n.wake(b)
	go func() {
		inst, err := n.pick(b, min(b.m.Timeouts.Call, b.m.Timeouts.Start))
		if err != nil {
			c.settle(nil, notSent(err))
			return
		}
		n.send(c, b, inst, rename, n.clk.Now())
	}()
}

func invalidParams(msg string) *rpc.Error {
	return rpc.Errorf(mcp.CodeInvalidParams, "%s", msg)
}

func resourceNotFound(uri string) *rpc.Error {
	data, _ := json.Marshal(map[string]string{"uri": uri})
	return rpc.Errorf(mcp.CodeResourceNotFound, "resource %q not found", uri).WithData(data)
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
