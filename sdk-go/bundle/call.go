package bundle

import (
	"encoding/json"
	"fmt"
	"maps"
	"sync/atomic"

	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// Call is one tools/call as its handler sees it. Its methods may be called from any
// goroutine while the handler runs.
type Call struct {
	// Name is the tool's name.
	Name string

	// Arguments are the call's arguments, already valid against the tool's input schema;
	// {} when the client sent none.
	Arguments json.RawMessage

	// Input asks the client for input on behalf of the call (Elicit, CreateMessage,
	// Request, Ask), in whichever era the call came.
	*Input

	progressToken json.RawMessage
	trace         TraceContext
	statuses      atomic.Int64 // status reports so far: the progress they count
}

// Bind decodes the arguments into v, as json.Unmarshal does.
func (c *Call) Bind(v any) error {
	if err := json.Unmarshal(c.Arguments, v); err != nil {
		return fmt.Errorf("arguments of %q: %w", c.Name, err)
	}
	return nil
}

// Progress reports how far the call has got with notifications/progress. total is omitted
// when it is 0 (unknown), message when it is empty. It does nothing when the client did not
// ask for progress (no _meta.progressToken). progress should grow from one report to the
// next.
func (c *Call) Progress(progress, total float64, message string) error {
	if c.progressToken == nil {
		return nil
	}
	p := mcp.ProgressParams{ProgressToken: c.progressToken, Progress: progress, Message: message}
	if total != 0 {
		p.Total = &total
	}
	return c.ss.notify(mcp.NotifyProgress, struct {
		mcp.ProgressParams
		Meta map[string]json.RawMessage `json:"_meta"`
	}{p, c.meta()})
}

// Status reports what the call is doing now, for a call that runs as a task: a node that
// holds the call's task (toolnode does, for any tool that allows one) makes message the
// task's status message, and makes the call a task at once if it is not one yet. It is
// sent as notifications/progress counting the reports, so a client calling the tool
// directly sees it as progress; like Progress it does nothing when the client asked for
// none. A handler that asks for input before its first report has it asked on the client's
// request itself, before any task is made.
func (c *Call) Status(message string) error {
	return c.Progress(float64(c.statuses.Add(1)), 0, message)
}

// CallError returns an error that, returned by a tool handler, answers the call with a
// JSON-RPC error of that code instead of a tool result: for a failure of the protocol
// rather than of the tool (a task fails with it, where a tool result with isError
// completes it). Any other error is a tool result with isError set.
func CallError(code int, message string) error {
	return &callError{RPCError{Code: code, Message: message}}
}

type callError struct{ RPCError }

func (e *callError) Error() string { return e.RPCError.Error() }

// Log sends data, any JSON value, to the client as a notifications/message at level (debug,
// info, notice, warning, error, critical, alert or emergency), with the tool's name as the
// logger. Levels below the one the client set with logging/setLevel are dropped; before it
// sets one, every level is sent. Under 2026-07-28 the level is the one the call's _meta
// asks for, and none is sent when it asks for none.
func (c *Call) Log(level string, data any) error {
	rank, ok := mcp.LogLevelRank(level)
	if !ok {
		return fmt.Errorf("bundle: unknown log level %q", level)
	}
	least := c.ss.minLevel.Load()
	if c.era.stateless {
		least = c.era.logMin
	}
	if int32(rank) < least {
		return nil
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("bundle: log data: %w", err)
	}
	return c.ss.notify(mcp.NotifyMessage, logParams{
		LoggingMessageParams: mcp.LoggingMessageParams{Level: level, Logger: c.Name, Data: raw},
		Meta:                 c.meta(),
	})
}

type logParams struct {
	mcp.LoggingMessageParams
	Meta map[string]json.RawMessage `json:"_meta"`
}

// withMeta encodes params with meta added to its _meta member.
func withMeta(params any, meta map[string]json.RawMessage) (json.RawMessage, error) {
	b, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	p := map[string]json.RawMessage{}
	if string(b) != "null" {
		if json.Unmarshal(b, &p) != nil {
			return nil, fmt.Errorf("must be a JSON object, not %.40s", b)
		}
	}
	merged := map[string]json.RawMessage{}
	if own := p["_meta"]; own != nil && string(own) != "null" {
		if json.Unmarshal(own, &merged) != nil {
			return nil, fmt.Errorf("_meta must be a JSON object, not %.40s", own)
		}
	}
	maps.Copy(merged, meta)
	if p["_meta"], err = json.Marshal(merged); err != nil {
		return nil, err
	}
	return json.Marshal(p)
}

// StructuredResult returns a result whose structuredContent is v as JSON, with the same
// JSON as a text block for clients that only read text. v must encode to a JSON object.
func StructuredResult(v any) (*mcp.CallToolResult, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("bundle: structured result: %w", err)
	}
	if len(b) == 0 || b[0] != '{' {
		return nil, fmt.Errorf("bundle: structured result must be a JSON object, not %s", b)
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{{Type: "text", Text: string(b)}},
		StructuredContent: b,
	}, nil
}
