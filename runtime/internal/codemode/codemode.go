// Package codemode runs the programs of toolnode.run: short Starlark programs
// (go.starlark.net: no I/O, no clock, deterministic) that call the node's tools, so that a
// model makes many calls in one step and sees only what the program returns.
//
// Every tool the caller may call is a function of the program, named by its dotted name
// made valid (meos.tpoint_length, node_lamp.on); call(name, args) reaches any tool by its
// name, search(query, limit) finds tools, and parallel(calls) makes several calls at once.
// Before anything runs, the program's calls with literal arguments are checked against the
// tools' input schemas (check.go): a program that cannot run fails with nothing done. While
// it runs, every call goes through a Host (the node), which makes it as a call of the
// caller's own: access, argument checks, audit, telemetry, progress, cancellation.
//
// A run is bounded in execution steps, wall time, inner calls, calls at once and bytes
// (Bounds); the error of a run a bound stopped names that bound.
package codemode

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Bounds limit one run. Zero fields take the defaults.
type Bounds struct {
	// Steps bounds the Starlark execution steps (bytecode instructions). Default
	// DefaultSteps.
	Steps uint64
	// Time bounds the run's wall time, inner calls included. Default DefaultTime.
	Time time.Duration
	// Calls bounds the inner calls (tool calls and searches) of one run. Default
	// DefaultCalls.
	Calls int
	// Parallel bounds the calls one parallel() makes at once. Default DefaultParallel.
	Parallel int
	// Bytes bounds the bytes of the inner calls' results a run takes in, together, and
	// of each of what it sends and answers: a call's arguments, its printed output, its
	// value. Default DefaultBytes.
	Bytes int64
}

// Defaults of Bounds.
const (
	DefaultSteps    = 1_000_000
	DefaultTime     = 60 * time.Second
	DefaultCalls    = 200
	DefaultParallel = 10
	DefaultBytes    = 4 << 20
)

// WithDefaults returns b with its zero fields set to the defaults.
func (b Bounds) WithDefaults() Bounds {
	if b.Steps == 0 {
		b.Steps = DefaultSteps
	}
	if b.Time <= 0 {
		b.Time = DefaultTime
	}
	if b.Calls <= 0 {
		b.Calls = DefaultCalls
	}
	if b.Parallel <= 0 {
		b.Parallel = DefaultParallel
	}
	if b.Bytes <= 0 {
		b.Bytes = DefaultBytes
	}
	return b
}

// Names of the bounds, as a run's error names the one that stopped it, with the serve
// flag that sets each.
const (
	BoundSteps    = "steps"
	BoundTime     = "time"
	BoundCalls    = "calls"
	BoundParallel = "parallel"
	BoundBytes    = "bytes"
	// BoundMemory is the memory of the process a program runs in (a worker's, see
	// package worker): the kernel holds it, not this package.
	BoundMemory = "memory"
)

// Flag is the `toolnode serve` flag that sets the bound named bound.
func Flag(bound string) string { return "--run-max-" + bound }

// Host makes the inner calls of a run for its caller: the node, with the caller's access.
// Its methods may be called from several goroutines at once (parallel).
type Host interface {
	// Tool returns the input schema of the tool name when the caller may call it from a
	// program; false when there is no such tool or the caller may not call it.
	Tool(name string) (inputSchema json.RawMessage, ok bool)
	// Check validates arguments (a JSON object) against the tool's input schema; nil when
	// they are valid.
	Check(name string, args json.RawMessage) []Problem
	// Call calls the tool name with args, a JSON object, and waits for the outcome.
	Call(ctx context.Context, name string, args json.RawMessage) CallResult
	// Search searches the tools the caller may call, as toolnode.search does, and returns
	// the results array.
	Search(query string, limit int) (json.RawMessage, error)
}

// Problem is one way a call's arguments break its tool's schema.
type Problem struct {
	// Path is where in the arguments, as arguments.points[0].x.
	Path string `json:"path"`
	// Reason says what is wrong, in plain words.
	Reason string `json:"reason"`
}

// CallResult is the outcome of one inner call: the tool's result, or why there is none.
type CallResult struct {
	// Result is the tools/call result the tool gave, isError ones included; nil when
	// Failure is set.
	Result json.RawMessage
	// Failure says why the node could not make the call, or how it failed once sent.
	Failure *Failure
}

// Failure is an inner call that did not give a result, in toolnode.execute's terms: its
// Kind, and whether it was sent (Dispatched; false: nothing ran).
type Failure struct {
	Kind       string `json:"kind"`
	Dispatched bool   `json:"dispatched"`
	Message    string `json:"message"`
	Details    any    `json:"details,omitempty"`
}

// Kinds of a run's own failures (Outcome.Error.Kind); an inner call's failure has the
// kinds of toolnode.execute, and "tool_error" when the tool answered isError.
const (
	// KindInvalidProgram: the program does not parse, names what does not exist, or
	// calls a tool with arguments its schema refuses. Nothing ran.
	KindInvalidProgram = "invalid_program"
	// KindProgramError: the program failed while it ran (a Starlark error, fail()).
	KindProgramError = "program_error"
	// KindBound: a bound stopped the run; Error.Bound names it.
	KindBound = "bound"
	// KindCancelled: the run's caller cancelled it.
	KindCancelled = "cancelled"
	// KindToolError is an inner call whose tool answered with isError.
	KindToolError = "tool_error"
)

// Outcome is what a run gives back.
type Outcome struct {
	// Value is the program's value: its last statement, when that is an expression, as
	// JSON; null otherwise.
	Value json.RawMessage `json:"value"`
	// Output is what the program printed.
	Output string `json:"output,omitempty"`
	// Calls is how many inner calls it made (searches included); Sent how many of them
	// reached a tool.
	Calls int `json:"calls"`
	Sent  int `json:"-"`
	// Error is why the run failed; nil when it ran to its end.
	Error *RunError `json:"error,omitempty"`
}

// RunError is a failed run.
type RunError struct {
	Kind string `json:"kind"`
	// Dispatched says whether any inner call was sent: when true, tools may have acted.
	Dispatched bool   `json:"dispatched"`
	Message    string `json:"message"`
	// Bound names the bound that stopped the run (KindBound).
	Bound string `json:"bound,omitempty"`
	// Line and Column locate the error in the program, when it has a place.
	Line   int `json:"line,omitempty"`
	Column int `json:"column,omitempty"`
	// Problems are each problem found before the run (KindInvalidProgram).
	Problems []ProgramProblem `json:"problems,omitempty"`
}

func (e *RunError) Error() string { return e.Message }

// ProgramProblem is one problem found in a program before it ran, at its line and column.
type ProgramProblem struct {
	Line   int    `json:"line"`
	Column int    `json:"column"`
	Tool   string `json:"tool,omitempty"`
	Path   string `json:"path,omitempty"`
	Reason string `json:"reason"`
}

func (p ProgramProblem) String() string {
	s := fmt.Sprintf("line %d:%d: ", p.Line, p.Column)
	if p.Tool != "" {
		s += p.Tool + ": "
	}
	if p.Path != "" {
		s += p.Path + ": "
	}
	return s + p.Reason
}

// BoundError is the error of a run the bound named bound stopped, what saying how the run
// passed it. A run whose caller's context ends with such an error as its cause
// (context.WithCancelCause) ends with it: how the process a program runs in stops a run at
// a bound this package does not hold itself.
func BoundError(bound, what string) *RunError { return boundError(bound, what) }

// boundError is the error of a run a bound stopped.
func boundError(bound, what string) *RunError {
	return &RunError{Kind: KindBound, Bound: bound, Message: fmt.Sprintf("the run was stopped by its %s bound: %s (%s)", bound, what, Flag(bound))}
}
