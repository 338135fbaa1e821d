package node

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/toolnode/toolnode/runtime/internal/oauth"
	"github.com/toolnode/toolnode/runtime/internal/rpc"
	"github.com/toolnode/toolnode/runtime/internal/telemetry"
	"github.com/toolnode/toolnode/sdk-go/mcp"
	"github.com/toolnode/toolnode/sdk-go/rawjson"
)

// An Outcome is what became of one request: its answer as the client is to get it, how it
// ended in one word, and what the node did to serve it. It is made once, where the answer
// is taken (outcomeOf: call.take for a call the node routed, Answer and Refusal for what a
// front answers itself), and handed on by value: stats, the bundle's and the request's
// spans, the audit log, tasks and the translation into a stateless client's revision all
// read it, never the answer again.
type Outcome struct {
	// Result is the result; nil when Err is set.
	Result json.RawMessage
	// Err is why there is no result: a JSON-RPC error, the caller's cancellation (its
	// cause), or a failure on the node's side; nil with a result.
	Err error
	// Code is the JSON-RPC error code the client gets for Err; 0 with a result.
	Code int64
	// Kind says how the request ended, in the words of the audit log: KindOK, KindToolError
	// (a result with isError), KindCancelled, a refusal (Refused: KindUnknownTool,
	// KindForbidden, KindInvalidArguments, KindNeedsApproval, KindRefused,
	// KindMissingCapability), or a failure (KindFailed, KindTimeout, KindInvalidArguments
	// for a -32602 of the bundle's).
	Kind string
	// Refused says the node did not make the call, for the reason Kind names.
	Refused bool
	// IsError says the result is a tool's error (isError true): read once, from a
	// tools/call result.
	IsError bool
	// ResultType is the result's resultType, "" when it has none: input_required asks the
	// client for input (2026-07-28), task names a task a bundle made of the call.
	ResultType string

	// What the node did to serve the request.
	noted

	exec *ExecError // the failure of a call settled as toolnode.execute settles it
}

// noted is what the node notes of a request as it serves it, for its Outcome.
type noted struct {
	// Bundle is the bundle the request went to ("" when none was reached), Ran the tool the
	// node called or meant to (through toolnode.execute, the one execute names), Via
	// toolnode.execute or toolnode.run when the call came through one, Run the toolnode.run
	// the call is or was made by, and Skill the node's URI of the skill (skills/get) or
	// skill file (resources/read) the request reached or was refused.
	Bundle, Ran, Via, Run, Skill string

	served *instance // the process that answered; nil for none (see BundleTaskOf)
}

// Kinds of an Outcome besides those of toolnode.execute's errors (KindUnknownTool...): the
// audit log's words.
const (
	// KindOK is a result that is not an error.
	KindOK = "ok"
	// KindToolError is a tools/call result with isError true.
	KindToolError = "tool_error"
	// KindCancelled is a request its client cancelled, or left.
	KindCancelled = "cancelled"
	// KindMissingCapability is a call of a tool that requires a task from a client that did
	// not declare MCP's tasks extension.
	KindMissingCapability = "missing_capability"
)

// Answer is what a front gives a client: the result, or the error as JSON-RPC has it.
func (o Outcome) Answer() (json.RawMessage, error) { return o.Result, o.Err }

// RPCError is Err as the client gets it; nil with a result.
func (o Outcome) RPCError() *rpc.Error { return rpc.AsError(o.Err) }

// ErrorType names how the request failed for its span and metric, in the conventions'
// terms ("" when it did not); cancelled says the client cancelled it or left, whatever
// error its end made up.
func (o Outcome) ErrorType(cancelled bool) string {
	switch {
	case cancelled || o.Kind == KindCancelled:
		return telemetry.Cancelled
	case o.Err != nil:
		return telemetry.ErrorCode(o.Code)
	case o.IsError:
		return telemetry.ToolError
	}
	return ""
}

// bundleErrorType names how the bundle's side of a call ended, for its span: a failure
// the node turned into a tool result is named as the failure.
func (o Outcome) bundleErrorType() string {
	switch o.Kind {
	case KindTimeout:
		return telemetry.Timeout
	case KindFailed:
		if o.Err != nil {
			return telemetry.ErrorCode(o.Code)
		}
		return telemetry.ErrorCode(mcp.CodeInternalError)
	}
	return o.ErrorType(false)
}

// failed reports whether the call counts as failed in its bundle's stats: the bundle
// failed, timed out or was given up on, or answered a tool error; a JSON-RPC error it
// answered is an answer.
func (o Outcome) failed() bool {
	switch o.Kind {
	case KindTimeout, KindCancelled, KindToolError:
		return true
	case KindFailed:
		return o.Err == nil || !isRPCError(o.Err)
	}
	return o.IsError
}

// InputRequired reports whether the result asks the client for input (2026-07-28).
func (o Outcome) InputRequired() bool {
	return o.Err == nil && o.ResultType == mcp.ResultTypeInputRequired
}

// Answer is the Outcome of a request of method that a front or the node answered with res or
// err without routing it as a call: a list, a prompt, a resource, a completion.
func Answer(method string, res json.RawMessage, err error) Outcome {
	return outcomeOf(noted{}, method, res, err, "")
}

// Refusal is the Outcome of req refused before it was served, for the reason kind names
// (a Kind), with err the error its client gets.
func Refusal(req *Request, kind string, err error) Outcome {
	return outcomeOf(noted{}, req.Method, nil, err, kind)
}

// A call is the node's own record of one request it routes, from the front's hand-off to
// its Outcome: the request as the client asked it (read, never written), how failures are
// settled and where the Outcome goes, and what the node notes as it serves it. Made once
// per request, with the relay to a bundle process in it, so that the record costs no
// allocation of its own.
type call struct {
	ctx  context.Context
	x    Exchange
	req  *Request
	how  settling
	done Done

	notes    noted        // what the node did, for the Outcome
	refused  string       // the Kind of the refusal that kept the call from being made; "" for none
	upstream oauth.Secret // the token exchanged for the caller, for the bundle it goes to

	relay  relay // the relay to a bundle process, when there is one (see send)
	shaper *Node // the node that shapes the result, when done does (see shapedCall)
}

// newCall is the record of req, a request of x, whose Outcome goes to done, failures settled
// as how says.
func newCall(ctx context.Context, x Exchange, req *Request, how settling, done Done) *call {
	return &call{ctx: ctx, x: x, req: req, how: how, done: done}
}

// refuse ends the call refused for the reason kind names, with res or err as its answer.
func (c *call) refuse(kind string, res json.RawMessage, err error) {
	c.refused = kind
	c.settle(res, err)
}

// settle gives done the Outcome of the call (see take).
func (c *call) settle(res json.RawMessage, err error) { c.done.CallDone(c.take(res, err)) }

// take takes the answer of the call and makes its Outcome, as c.how says: results and
// JSON-RPC errors as they are, the caller's cancellation as its cause, and any other
// failure (the bundle's or the node's on its way there) as how turns it into a result.
func (c *call) take(res json.RawMessage, err error) Outcome {
	method, notes, refused := c.req.Method, c.notes, c.refused
	switch {
	case err == nil:
		return outcomeOf(notes, method, res, nil, refused)
	case c.ctx.Err() != nil:
		return outcomeOf(notes, method, nil, context.Cause(c.ctx), KindCancelled)
	case c.how == settleAsIs || isRPCError(err):
		return outcomeOf(notes, method, nil, err, refused)
	case c.how == settleTool:
		kind := refused // a tool the node could not reach is noted as refused
		if kind == "" {
			kind = failure(err)
		}
		res, err := json.Marshal(mcp.ErrorResult(err.Error()))
		return outcomeOf(notes, method, res, err, kind)
	}
	e := &ExecError{Kind: failure(err), Dispatched: !errors.Is(err, ErrNotSent), Message: err.Error()}
	o := outcomeOf(notes, method, e.Result(), nil, e.Kind)
	o.exec = e
	return o
}

// Translated is o with its answer as a front gives it in its client's revision: res, or err
// (nil for none); what the node did and how the request ended stay.
func (o Outcome) Translated(res json.RawMessage, err error) Outcome {
	o.Result, o.Err, o.Code = res, err, 0
	if err != nil {
		o.Result, o.Code = nil, errorCode(err)
	}
	return o
}

// SettledAsTool is o with a failure that is no JSON-RPC error (the bundle's, or the node's
// on its way there) made a tool result with isError, as a tools/call without a task
// settles it: for a call made with CallToolTask that did not become a task.
func (o Outcome) SettledAsTool() Outcome {
	if o.Err == nil || isRPCError(o.Err) {
		return o
	}
	res, err := json.Marshal(mcp.ErrorResult(o.Err.Error()))
	kind, refused := o.Kind, o.Refused
	o = outcomeOf(o.noted, mcp.MethodToolsCall, res, err, kind)
	o.Refused = refused
	return o
}

// endedWith is o's request ended with err instead: a later step of its call failed (the
// client's input it asked for could not be had).
func (o Outcome) endedWith(method string, err error) Outcome {
	return outcomeOf(o.noted, method, nil, err, "")
}

// failure is the Kind of a call that failed with err, not a JSON-RPC error: the bundle's,
// or the node's on its way there.
func failure(err error) string {
	if errors.Is(err, ErrTimeout) {
		return KindTimeout
	}
	return KindFailed
}

// outcomeOf makes the Outcome of a request of method: what the node noted of it and its
// answer, res or err, read once; kind, unless "", is how the request ended as its caller
// knows it (a refusal, the client's cancellation, a failure the node made a result of).
// Every Outcome is made here.
func outcomeOf(notes noted, method string, res json.RawMessage, err error, kind string) Outcome {
	o := Outcome{Result: res, Err: err, noted: notes}
	switch {
	case err != nil:
		o.Result = nil
		o.Code = errorCode(err)
		switch {
		case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
			o.Kind = KindCancelled
		case errors.Is(err, ErrTimeout):
			o.Kind = KindTimeout
		case o.Code == mcp.CodeInvalidParams:
			o.Kind = KindInvalidArguments
		default:
			o.Kind = KindFailed
		}
	case pageMethod(method):
		// A page of the node's own: nothing in it to read.
		o.Kind = KindOK
	default:
		o.IsError, o.ResultType = scanResult(res)
		o.Kind = KindOK
		if o.IsError {
			o.Kind = KindToolError
		}
	}
	if kind != "" {
		o.Kind = kind
		o.Refused = refusalKind(kind)
	}
	return o
}

// refusalKind reports whether kind says the node did not make a call: it was refused.
func refusalKind(kind string) bool {
	switch kind {
	case KindUnknownTool, KindForbidden, KindInvalidArguments, KindNeedsApproval, KindRefused, KindMissingCapability:
		return true
	}
	return false
}

// errorCode is the JSON-RPC error code a client gets for err.
func errorCode(err error) int64 {
	var e *rpc.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return mcp.CodeInternalError
}

// scanResult reads the members of a result every reader on its way back asks about, in one
// pass: isError, and resultType.
func scanResult(res json.RawMessage) (isError bool, resultType string) {
	rawjson.Members(res, func(name rawjson.Name, value []byte) {
		switch {
		case name.Is("isError"):
			isError = string(value) == "true"
		case name.Is("resultType"):
			resultType = knownResultType(value)
		}
	})
	return isError, resultType
}

// knownResultType is the resultType value v (a JSON string), without a copy for the types
// the node knows.
func knownResultType(v []byte) string {
	for _, t := range [...]string{mcp.ResultTypeComplete, mcp.ResultTypeInputRequired, mcp.ResultTypeTask} {
		if rawjson.StringIs(v, t) {
			return t
		}
	}
	s, _ := rawjson.String(v)
	return s
}

// pageMethod reports whether method's results are pages the node makes itself, which carry
// nothing a reader on the way back asks about.
func pageMethod(method string) bool {
	switch method {
	case mcp.MethodToolsList, mcp.MethodPromptsList, mcp.MethodResourcesList, mcp.MethodResourceTemplates, mcp.MethodSkillsList:
		return true
	}
	return false
}

// awaitOutcome makes a call with call and waits for its Outcome: for callers that need the
// answer before going on.
func awaitOutcome(call func(done Done)) Outcome {
	ch := make(chan Outcome, 1)
	call(DoneFunc(func(o Outcome) { ch <- o }))
	return <-ch
}
