package codemode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"go.starlark.net/resolve"
	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// MaxCode bounds a program's text, in bytes: a program a model writes is a few hundred.
const MaxCode = 64 << 10

// fileName names the program in its errors' positions.
const fileName = "program"

// valueName is the global the program's last expression is assigned to: no program can
// name it, for an identifier has no space.
const valueName = "value of the program"

// fileOptions are the language a program is written in: Starlark with while loops, sets,
// and if/for/while at the top level (a program is a script, not a module of definitions).
var fileOptions = syntax.FileOptions{Set: true, While: true, TopLevelControl: true, GlobalReassign: true}

// run is one program running.
type run struct {
	parent context.Context // the caller's: its end is a cancellation
	ctx    context.Context
	host   Host
	names  *Names
	b      Bounds
	thread *starlark.Thread

	calls     int          // inner calls made or begun; the Starlark thread alone counts them
	sent      atomic.Int64 // of them, those that reached a tool
	taken     atomic.Int64 // bytes of results taken in
	output    strings.Builder
	halted    atomic.Pointer[RunError] // the bound that stopped the run, first come
	stop      context.CancelFunc
	reachable map[string]bool // namespaces the caller may call a tool under (see reach)
}

// Run runs the program code for host's caller, within bounds b (zero fields take the
// defaults), and returns its outcome. names maps the catalog's tools to the program's
// names; host decides which of them the caller may call.
func Run(ctx context.Context, host Host, names *Names, b Bounds, code string) Outcome {
	b = b.WithDefaults()
	if len(code) > MaxCode {
		return Outcome{Error: &RunError{Kind: KindInvalidProgram, Message: fmt.Sprintf("the program is %d bytes long, more than the %d it may have", len(code), MaxCode)}}
	}
	if !utf8.ValidString(code) {
		return Outcome{Error: &RunError{Kind: KindInvalidProgram, Message: "the program is not valid UTF-8"}}
	}
	r := &run{parent: ctx, host: host, names: names, b: b}
	prog, predeclared, rerr := r.compile(code)
	if rerr != nil {
		return Outcome{Error: rerr}
	}
	ctx, cancel := context.WithTimeout(ctx, b.Time)
	defer cancel()
	r.ctx, r.stop = ctx, cancel
	r.thread = &starlark.Thread{Name: fileName, Print: r.print, OnMaxSteps: func(t *starlark.Thread) {
		r.halt(boundError(BoundSteps, fmt.Sprintf("it ran %d execution steps", b.Steps)))
	}}
	r.thread.SetMaxExecutionSteps(b.Steps)
	stopWatch := context.AfterFunc(ctx, func() { r.thread.Cancel("the run's context ended") })
	defer stopWatch()
	if ctx.Err() != nil {
		// Ended already: AfterFunc's goroutine may be scheduled only after a busy program
		// has met its steps bound, which would then be reported instead of the cancel.
		r.thread.Cancel("the run's context ended")
	}

	globals, err := prog.Init(r.thread, predeclared)
	out := Outcome{Calls: r.calls, Sent: int(r.sent.Load()), Output: r.output.String()}
	if err == nil {
		out.Value, err = toJSON(valueOf(globals), b.Bytes)
		if errors.Is(err, errTooLarge) {
			r.halt(boundError(BoundBytes, fmt.Sprintf("its value is more than %d bytes of JSON", b.Bytes)))
		} else if err != nil {
			err = fmt.Errorf("the program's value cannot be answered: %w", err)
		}
	}
	if err != nil || r.halted.Load() != nil {
		out.Value = nil
		out.Error = r.failure(err)
		out.Error.Dispatched = out.Sent > 0
	}
	return out
}

// valueOf is the program's value: its last expression's, None when it did not end with one.
func valueOf(globals starlark.StringDict) starlark.Value {
	if v, ok := globals[valueName]; ok && v != nil {
		return v
	}
	return starlark.None
}

// compile parses, resolves and checks the program; the error lists every problem found.
func (r *run) compile(code string) (*starlark.Program, starlark.StringDict, *RunError) {
	opts := fileOptions
	f, err := opts.Parse(fileName, code, 0)
	if err != nil {
		var serr syntax.Error
		if errors.As(err, &serr) {
			return nil, nil, invalid([]ProgramProblem{{Line: int(serr.Pos.Line), Column: int(serr.Pos.Col), Reason: serr.Msg}})
		}
		return nil, nil, &RunError{Kind: KindInvalidProgram, Message: err.Error()}
	}
	// The last statement, when an expression, is the program's value.
	if n := len(f.Stmts); n > 0 {
		if es, ok := f.Stmts[n-1].(*syntax.ExprStmt); ok {
			start, _ := es.Span()
			f.Stmts[n-1] = &syntax.AssignStmt{OpPos: start, Op: syntax.EQ, LHS: &syntax.Ident{NamePos: start, Name: valueName}, RHS: es.X}
		}
	}
	predeclared := r.predeclared()
	prog, err := starlark.FileProgram(f, predeclared.Has)
	if err != nil {
		var list resolve.ErrorList
		if errors.As(err, &list) {
			probs := make([]ProgramProblem, len(list))
			for i, e := range list {
				probs[i] = ProgramProblem{Line: int(e.Pos.Line), Column: int(e.Pos.Col), Reason: e.Msg}
			}
			return nil, nil, invalid(probs)
		}
		return nil, nil, &RunError{Kind: KindInvalidProgram, Message: err.Error()}
	}
	if probs := r.check(f); len(probs) > 0 {
		return nil, nil, invalid(probs)
	}
	return prog, predeclared, nil
}

// invalid is the error of a program that cannot run.
func invalid(probs []ProgramProblem) *RunError {
	msgs := make([]string, len(probs))
	for i, p := range probs {
		msgs[i] = p.String()
	}
	return &RunError{Kind: KindInvalidProgram, Line: probs[0].Line, Column: probs[0].Column, Problems: probs,
		Message: "the program cannot run; nothing was called: " + strings.Join(msgs, "; ")}
}

// failure says why a run that began did not end well.
func (r *run) failure(err error) *RunError {
	if h := r.halted.Load(); h != nil {
		e := *h
		return &e
	}
	var bound *RunError
	switch {
	case r.parent.Err() != nil && errors.As(context.Cause(r.parent), &bound) && bound.Kind == KindBound:
		e := *bound
		return &e
	case r.parent.Err() != nil:
		return &RunError{Kind: KindCancelled, Message: "the run was cancelled: " + context.Cause(r.parent).Error()}
	case r.ctx.Err() != nil:
		return boundError(BoundTime, fmt.Sprintf("it ran longer than %s", r.b.Time))
	}
	e := &RunError{Kind: KindProgramError, Message: err.Error()}
	var eval *starlark.EvalError
	if errors.As(err, &eval) {
		e.Message = eval.Msg
		// The innermost place in the program's own text.
		for i := len(eval.CallStack) - 1; i >= 0; i-- {
			if pos := eval.CallStack[i].Pos; pos.IsValid() && pos.Filename() == fileName {
				e.Line, e.Column = int(pos.Line), int(pos.Col)
				e.Message = fmt.Sprintf("line %d:%d: %s", pos.Line, pos.Col, eval.Msg)
				break
			}
		}
	}
	return e
}

// halt stops the run for err, a bound's: the first one to come is the run's error.
func (r *run) halt(err *RunError) error {
	r.halted.CompareAndSwap(nil, err)
	r.thread.Cancel(err.Message)
	r.stop()
	return r.halted.Load()
}

// print takes what the program prints, within the bytes bound.
func (r *run) print(_ *starlark.Thread, msg string) {
	if int64(r.output.Len()+len(msg)+1) > r.b.Bytes {
		r.halt(boundError(BoundBytes, fmt.Sprintf("it printed more than %d bytes", r.b.Bytes)))
		return
	}
	r.output.WriteString(msg)
	r.output.WriteByte('\n')
}

// begin counts an inner call before it is made, within the calls bound.
func (r *run) begin() error {
	if r.calls >= r.b.Calls {
		return r.halt(boundError(BoundCalls, fmt.Sprintf("it called more than %d times", r.b.Calls)))
	}
	r.calls++
	return nil
}

// take counts the bytes of a result taken in, within the bytes bound.
func (r *run) take(n int) error {
	if r.taken.Add(int64(n)) > r.b.Bytes {
		return r.halt(boundError(BoundBytes, fmt.Sprintf("its calls' results came to more than %d bytes", r.b.Bytes)))
	}
	return nil
}

// invoke makes one inner call, counted, and returns its result as a program's value; a
// failed call is a *toolError value, not an error of the program. The error is the run's
// end: a bound, or its context.
func (r *run) invoke(name string, args json.RawMessage) (starlark.Value, error) {
	if err := r.begin(); err != nil {
		return nil, err
	}
	return r.settle(name, r.call(name, args))
}

// call makes one inner call that begin counted; it may run on any goroutine.
func (r *run) call(name string, args json.RawMessage) CallResult {
	res := r.host.Call(r.ctx, name, args)
	if res.Failure == nil || res.Failure.Dispatched {
		r.sent.Add(1)
	}
	return res
}

// settle turns a call's outcome into the program's value, on the program's thread.
func (r *run) settle(name string, res CallResult) (starlark.Value, error) {
	if r.ctx.Err() != nil {
		if h := r.halted.Load(); h != nil {
			return nil, h
		}
		return nil, context.Cause(r.ctx)
	}
	if err := r.take(len(res.Result)); err != nil {
		return nil, err
	}
	return resultValue(name, res)
}

// parallelCall is one call of parallel(), ready to go.
type parallelCall struct {
	name string
	args json.RawMessage
	res  CallResult
}

// parallel makes calls at once (parallelBuiltin holds them to the parallel bound) and
// returns their results in order.
func (r *run) parallel(calls []*parallelCall) (starlark.Value, error) {
	for range calls {
		if err := r.begin(); err != nil {
			return nil, err
		}
	}
	var wg sync.WaitGroup
	for _, c := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.res = r.call(c.name, c.args)
		}()
	}
	wg.Wait()
	out := make([]starlark.Value, len(calls))
	for i, c := range calls {
		v, err := r.settle(c.name, c.res)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return starlark.NewList(out), nil
}
