// Package worker runs the programs of toolnode.run in worker processes: the node's own
// binary started again as a worker, one program at a time, each worker serving the runs of
// one caller only. A worker holds no tool and no credential: its program's inner calls (a
// tool's schema, an argument check, a search, a call) come back to the node as requests,
// and the node makes them as it makes a call of the run's caller, with its access, audit,
// progress, input requests and cancellation. What the worker holds back from the node is
// the program's memory and CPU: the kernel bounds the worker's memory (a program that passes
// the bound ends the worker, not the node), and the worker has no network and no files.
//
// The protocol is JSON-RPC 2.0, one message per line (package rpc), over the worker's stdin
// and stdout; stderr is the worker's log. The node asks:
//
//	run      {code, bounds, names?}   → outcome      one program; names when the worker lacks them
//	cancel   {id, reason}             (notification) the run of request id ends, for reason
//
// and the worker asks, while a run goes:
//
//	tool     {name}                   → {schema, ok}   codemode.Host.Tool
//	check    {name, arguments}        → {problems}     codemode.Host.Check
//	search   {query, limit}           → results        codemode.Host.Search
//	call     {name, arguments}        → {result, failure}  codemode.Host.Call
//	cancel   {id, reason}             (notification) the worker no longer waits for call id
//
// pool.go is the node's side, serve.go the worker's.
package worker

import (
	"encoding/json"

	"github.com/toolnode/toolnode/runtime/internal/codemode"
	"github.com/toolnode/toolnode/runtime/internal/rpc"
)

// Methods of the protocol.
const (
	methodRun    = "run"
	methodCancel = "cancel"
	methodTool   = "tool"
	methodCheck  = "check"
	methodSearch = "search"
	methodCall   = "call"
)

// runParams are a run's: the program, its bounds, and the tools' names when the worker does
// not have them yet (a new worker, or a catalog that changed).
type runParams struct {
	Code   string          `json:"code"`
	Bounds codemode.Bounds `json:"bounds"`
	Names  []string        `json:"names,omitempty"`
	// SameNames says the names are those of the worker's last run.
	SameNames bool `json:"same_names,omitempty"`
}

// outcome is a run's outcome on the wire: codemode.Outcome with the count of the calls
// that reached a tool, which its JSON leaves out.
type outcome struct {
	codemode.Outcome
	Sent int `json:"sent"`
}

// cancelParams end a run (node to worker) or an inner call (worker to node).
type cancelParams struct {
	ID     json.RawMessage `json:"id"`
	Reason string          `json:"reason,omitempty"`
}

type toolParams struct {
	Name string `json:"name"`
}

type toolResult struct {
	Schema json.RawMessage `json:"schema,omitempty"`
	OK     bool            `json:"ok"`
}

type checkParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

type checkResult struct {
	Problems []codemode.Problem `json:"problems,omitempty"`
}

type searchParams struct {
	Query string `json:"query"`
	Limit int    `json:"limit"`
}

// idOf is an id as the cancel notification names it.
func idOf(id rpc.ID) json.RawMessage { return json.RawMessage(id.String()) }
