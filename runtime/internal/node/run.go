package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/argcheck"
	"github.com/toolnode/toolnode/runtime/internal/catalog"
	"github.com/toolnode/toolnode/runtime/internal/codemode"
	"github.com/toolnode/toolnode/runtime/internal/codemode/worker"
	"github.com/toolnode/toolnode/runtime/internal/search"
	"github.com/toolnode/toolnode/sdk-go/mcp"
	"github.com/toolnode/toolnode/sdk-go/rawjson"
)

// toolnode.run: a Starlark program that calls tools (runtime/internal/codemode runs it).
// Every inner call is made as a call of the run's caller: its filter, the tool's argument
// checks, the relay with its time limits, telemetry under the run's span (the run's
// context carries it), progress to the run's client, cancellation with the run, and input
// a bundle asks for passed to the client. Each inner call is reported to the front's
// InnerCalls hook, which audits it under the run.

// RunToolName is the name of toolnode.run.
const RunToolName = "toolnode.run"

// InnerCall is what the node tells of a call a run made: the request it made, when it
// began, and its Outcome (Ran, Bundle, Via toolnode.run, Run, Kind as for any call).
type InnerCall struct {
	Caller  Caller // the run's caller
	Request *Request
	Start   time.Time
	Outcome Outcome
	// Cancelled says the run ended (its client cancelled it, or a bound stopped it)
	// before the call did.
	Cancelled bool
}

// SetInnerCalls sets what is told of every call a run makes (the front audits them); nil
// for nothing. It is set once, before calls are served.
func (n *Node) SetInnerCalls(f func(InnerCall)) { n.innerCalls = f }

// RunTool returns the tools/list entry of toolnode.run, its description naming the bounds
// b.
func RunTool(b codemode.Bounds) json.RawMessage {
	b = b.WithDefaults()
	desc := "Run a short Starlark program (Python-like; no imports, I/O or clock) that calls this node's tools, and get the value of its last line. " +
		"Every tool you may call is a function taking keyword arguments: meos.speed(point=p) (characters other than letters, digits and _ in a name become _, e.g. node_lamp.on); call(\"name\", {args}) calls any tool by name. " +
		"search(query, limit=10) finds tools, each with its signature; parallel([(meos.speed, {\"point\": p}), ...]) makes calls at once and gives their results in order. " +
		"A result is the tool's structuredContent, else its text (json.decode reads JSON text). A failed call gives an error value, not an exception: is_error(r); r.kind, r.dispatched (false: nothing ran), r.message. " +
		"print() adds to the output; fail(msg) stops the program. Calls whose arguments are literals are checked before anything runs. " +
		fmt.Sprintf("Bounds: %d steps, %s, %d calls, %d calls at once in parallel(), %d bytes of results.", b.Steps, b.Time, b.Calls, b.Parallel, b.Bytes)
	d, _ := json.Marshal(desc)
	return json.RawMessage(`{"name":"` + RunToolName + `","title":"Run a program over the tools",` +
		`"description":` + string(d) + `,` +
		`"inputSchema":{"type":"object","properties":{` +
		`"code":{"type":"string","maxLength":` + fmt.Sprint(codemode.MaxCode) + `,"description":"The Starlark program; its last line, when an expression, is its value."}},` +
		`"required":["code"],"additionalProperties":false},` +
		`"outputSchema":{"type":"object","properties":{` +
		`"value":{"description":"The program's value."},"output":{"type":"string","description":"What it printed."},` +
		`"calls":{"type":"integer","description":"The calls it made."},` +
		`"error":{"type":"object","description":"Why it failed: kind (invalid_program: nothing ran; program_error; bound; cancelled), dispatched, message, bound, line, column, problems."}},` +
		`"required":["calls"]}}`)
}

// ParseRun reads toolnode.run's arguments: the program's text.
func ParseRun(args json.RawMessage) (string, error) {
	var code string
	var has bool
	err := decodeExact(args, map[string]func([]byte) error{
		"code": func(v []byte) error {
			has = true
			return jsonString(v, &code)
		},
	})
	if err != nil {
		return "", fmt.Errorf("%s arguments: %w", RunToolName, err)
	}
	if !has {
		return "", fmt.Errorf("%s arguments: code is missing; give the program's text", RunToolName)
	}
	return code, nil
}

// runProgram serves toolnode.run: req is its tools/call. The program runs on a goroutine of its
// own, its inner calls waiting on it; done gets the run's result.
func (n *Node) runProgram(c *call) {
	req := c.req
	c.notes.Run = n.newToken()
	code, err := ParseRun(req.Arguments)
	if err != nil {
		res, err := json.Marshal(mcp.ErrorResult(err.Error()))
		c.refuse(KindInvalidArguments, res, err)
		return
	}
	mi := n.metaIndex()
	h := &runHost{n: n, mi: mi, outer: req, id: c.notes.Run, run: &runCaller{Exchange: c.x, token: req.ProgressToken}}
	caller := c.x.Caller()
	go func() {
		out := n.workers.Run(c.ctx, worker.Caller{Key: caller.Key, Ended: caller.Ended}, h, mi.names, n.cfg.Run, code)
		if out.Error != nil && out.Error.Kind == codemode.KindInvalidProgram {
			c.refused = KindInvalidArguments
		}
		c.settle(runResult(out))
	}()
}

// runResult is the tools/call result of a run: its outcome as structured content, its
// value (or its error's message) and its output as text.
func runResult(out codemode.Outcome) (json.RawMessage, error) {
	if out.Value == nil && out.Error == nil {
		out.Value = json.RawMessage("null")
	}
	structured, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("encode the run's outcome: %w", err)
	}
	text := string(out.Value)
	if out.Error != nil {
		text = out.Error.Message
	}
	if out.Output != "" {
		text = out.Output + text
	}
	res := mcp.TextResult(text)
	res.StructuredContent = structured
	res.IsError = out.Error != nil
	return json.Marshal(res)
}

// runHost makes the inner calls of one run for its caller.
type runHost struct {
	n     *Node
	mi    *metaIndex
	outer *Request   // the run's tools/call
	id    string     // the run's id, which its inner calls are audited under
	run   *runCaller // its call, progress made the run's
}

// Tool implements codemode.Host: a tool the caller may call from a program (not the
// node's own execute and run: a run does not nest).
func (h *runHost) Tool(name string) (json.RawMessage, bool) {
	if name == RunToolName || name == ExecuteToolName || !h.outer.Allow.allows(name) {
		return nil, false
	}
	e, ok := h.mi.cat.Lookup(name)
	if !ok {
		return nil, false
	}
	schema, _ := rawjson.Member(e.JSON, "inputSchema")
	return schema, true
}

// Check implements codemode.Host with the catalog's argument checks.
func (h *runHost) Check(name string, args json.RawMessage) []codemode.Problem {
	var invalid *argcheck.InvalidError
	if err := h.mi.check.Check(name, args); errors.As(err, &invalid) {
		probs := make([]codemode.Problem, len(invalid.Problems))
		for i, p := range invalid.Problems {
			probs[i] = codemode.Problem{Path: p.Path, Reason: p.Reason}
		}
		return probs
	}
	return nil
}

// Search implements codemode.Host: toolnode.search for the caller.
func (h *runHost) Search(query string, limit int) (json.RawMessage, error) {
	if err := checkLen(SearchToolName, "query", query, MaxQueryLen); err != nil {
		return nil, err
	}
	if limit < 1 || limit > search.MaxLimit {
		return nil, fmt.Errorf("search: limit is %d, must be from 1 to %d", limit, search.MaxLimit)
	}
	res := h.n.searchIn(h.mi, search.Query{Text: query, Limit: limit, Allow: h.outer.Allow})
	return json.Marshal(res.Results)
}

// Call implements codemode.Host: one inner call, as toolnode.execute makes it, under the
// run.
func (h *runHost) Call(ctx context.Context, name string, args json.RawMessage) codemode.CallResult {
	inner := innerRequest(h.outer, name, args)
	start := time.Now()
	o, fail := h.call(ctx, inner, noted{Ran: name, Via: RunToolName, Run: h.id})
	if f := h.n.innerCalls; f != nil {
		f(InnerCall{Caller: h.run.Caller(), Request: inner, Start: start, Outcome: o, Cancelled: ctx.Err() != nil})
	}
	h.run.step(name)
	if fail != nil {
		return codemode.CallResult{Failure: fail}
	}
	return codemode.CallResult{Result: o.Result}
}

// call makes an inner call, noted as notes say: its Outcome, and a Failure saying why it has
// no result the program can use, if it has none.
func (h *runHost) call(ctx context.Context, inner *Request, notes noted) (Outcome, *codemode.Failure) {
	name := inner.Name
	if name == RunToolName || name == ExecuteToolName {
		return outcomeOf(notes, inner.Method, nil, nil, KindForbidden), &codemode.Failure{Kind: KindForbidden, Message: name + " cannot be called from a program"}
	}
	e, xerr, refused := gate(h.mi, inner.Allow, name, inner.Arguments, "search() finds tools")
	if xerr == nil {
		if xerr = h.n.admit(inner.Guard, name, inner.Arguments); xerr != nil {
			refused = xerr.Kind
		}
	}
	if xerr != nil {
		// What the audit log records: forbidden for a denied tool.
		return outcomeOf(notes, inner.Method, nil, nil, refused), (*codemode.Failure)(xerr)
	}
	p := h.n.providerOf(e.Bundle)
	call := func(req *Request) Outcome {
		return Await(h.run, func(x Exchange) {
			c := newCall(ctx, x, req, settleExecute, x)
			c.notes = notes
			p.call(c, e)
		})
	}
	o := call(inner)
	if o.InputRequired() {
		o = FulfilInput(ctx, h.run, inner, o, call)
	}
	switch {
	case o.exec != nil:
		// Settled as toolnode.execute settles: the result is an ExecError.
		return o, (*codemode.Failure)(o.exec)
	case o.Err != nil && ctx.Err() != nil: // the front names it cancelled (InnerCall.Cancelled)
		return o, &codemode.Failure{Kind: codemode.KindCancelled, Dispatched: true, Message: o.Err.Error()}
	case o.Err != nil:
		return o, &codemode.Failure{Kind: KindFailed, Dispatched: true, Message: o.Err.Error()}
	}
	return o, nil
}

// maxInputRounds bounds the rounds of input one call may ask for.
const maxInputRounds = 16

// FulfilInput serves the input a bundle of the 2026-07-28 revision asks for in o, the
// input_required Outcome of req: each input request is asked of x's client (a session's
// client gets it as a request; a run's stateless client as the run's own input_required
// answer), and the call is made again with call, the answers and the bundle's
// requestState, until the bundle answers in full.
func FulfilInput(ctx context.Context, x Exchange, req *Request, o Outcome, call func(*Request) Outcome) Outcome {
	for round := 0; o.InputRequired(); round++ {
		if round == maxInputRounds {
			return o.endedWith(req.Method, fmt.Errorf("%s asked for input %d times in a row; giving up", req.Method, maxInputRounds))
		}
		var ir mcp.InputRequiredResult
		if err := json.Unmarshal(o.Result, &ir); err != nil {
			return o.endedWith(req.Method, fmt.Errorf("the bundle's input_required result: %w", err))
		}
		answers := make(mcp.InputResponses, len(ir.InputRequests))
		for key, r := range ir.InputRequests {
			ans, err := x.Ask(ctx, r.Method, r.Params)
			if err != nil {
				return o.endedWith(req.Method, err)
			}
			answers[key] = ans
		}
		b, _ := json.Marshal(answers)
		params, _ := rawjson.PutMember(req.Params, "inputResponses", b)
		if ir.RequestState != "" {
			s, _ := json.Marshal(ir.RequestState)
			params, _ = rawjson.PutMember(params, "requestState", s)
		} else {
			params = rawjson.DeleteMember(params, "requestState")
		}
		next := *req
		next.Params = params
		req = &next
		o = call(req)
	}
	return o
}

// runCaller is the run's call as its inner calls see it (each made under it with Await):
// progress of any of them is the run's progress, under the client's token and counting
// up, as the protocol wants it; all else is the run's own.
type runCaller struct {
	Exchange
	token json.RawMessage // the run's progress token; nil when the client asked for none

	mu    sync.Mutex
	steps int
}

// Progress makes an inner call's progress the run's.
func (r *runCaller) Progress(p mcp.ProgressParams) { r.progress(p.Message) }

// step reports an inner call done as the run's progress.
func (r *runCaller) step(tool string) { r.progress(tool + " done") }

func (r *runCaller) progress(msg string) {
	if r.token == nil {
		return
	}
	r.mu.Lock()
	r.steps++
	r.Exchange.Progress(mcp.ProgressParams{ProgressToken: r.token, Progress: float64(r.steps), Message: msg})
	r.mu.Unlock() // held while sending: the client sees the counts in order
}

// programNames maps the tools of a catalog to their names in a program.
func programNames(cat *catalog.Catalog) *codemode.Names {
	entries := cat.Entries()
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name
	}
	return codemode.NewNames(names)
}

// searchIn searches the catalog of mi, each result with its signature in a program.
func (n *Node) searchIn(mi *metaIndex, q search.Query) search.Results {
	res := mi.index.Search(q)
	for i := range res.Results {
		h := &res.Results[i]
		if sig, ok := mi.sigs.Load(h.Name); ok {
			h.Signature = sig.(string)
			continue
		}
		h.Signature = mi.names.Signature(h.Name, h.InputSchema)
		mi.sigs.Store(h.Name, h.Signature)
	}
	return res
}

// runBounds are the bounds of toolnode.run, for toolnode.status: with workers, their memory
// and how many run and wait idle.
func (n *Node) runBounds() []Bound {
	b := n.cfg.Run.WithDefaults()
	out := []Bound{
		{Name: "run.steps", Limit: int64(b.Steps)},
		{Name: "run.time_ms", Limit: b.Time.Milliseconds()},
		{Name: "run.calls", Limit: int64(b.Calls)},
		{Name: "run.parallel", Limit: int64(b.Parallel)},
		{Name: "run.bytes", Limit: b.Bytes},
	}
	if cfg := n.workers.Config(); !cfg.Off {
		st := n.workers.Stats()
		out = append(out, Bound{Name: "run.memory_bytes", Limit: cfg.MaxMemory},
			Bound{Name: "run.workers", Limit: int64(cfg.MaxLive), Used: int64(st.Live)},
			Bound{Name: "run.idle_workers", Limit: int64(cfg.MaxIdle), Used: int64(st.Idle)})
	}
	return out
}
