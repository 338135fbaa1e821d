package bundle

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"

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

	ss            *session
	id            json.RawMessage // of the tools/call, as received
	progressToken json.RawMessage
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
	return c.ss.notify(mcp.NotifyProgress, p)
}

// Log sends data, any JSON value, to the client as a notifications/message at level (debug,
// info, notice, warning, error, critical, alert or emergency), with the tool's name as the
// logger. Levels below the one the client set with logging/setLevel are dropped; before it
// sets one, every level is sent.
func (c *Call) Log(level string, data any) error {
	rank, ok := mcp.LogLevelRank(level)
	if !ok {
		return fmt.Errorf("bundle: unknown log level %q", level)
	}
	if int32(rank) < c.ss.minLevel.Load() {
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

// meta relates a message to the call, for a node that serves several clients with one
// bundle process.
func (c *Call) meta() map[string]json.RawMessage {
	return map[string]json.RawMessage{mcp.MetaRelatedRequest: c.id}
}

// Request sends the client a request of its own on behalf of the call, such as
// sampling/createMessage or elicitation/create, and waits for the answer: its result, or
// an *RPCError when the client answers with an error. params must encode to a JSON object
// (or be nil); its _meta is given the call's id under mcp.MetaRelatedRequest. When ctx
// ends first, the client is sent notifications/cancelled for the request.
func (c *Call) Request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	raw, err := withMeta(params, c.meta())
	if err != nil {
		return nil, fmt.Errorf("bundle: %s params: %w", method, err)
	}
	return c.ss.send(ctx, method, raw, c.meta())
}

// CreateMessage asks the client's model for a completion (sampling/createMessage).
func (c *Call) CreateMessage(ctx context.Context, p mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	return requestAs[mcp.CreateMessageResult](ctx, c, mcp.MethodSampling, p)
}

// Elicit asks the user for input shaped by p.RequestedSchema (elicitation/create).
func (c *Call) Elicit(ctx context.Context, p mcp.ElicitParams) (*mcp.ElicitResult, error) {
	return requestAs[mcp.ElicitResult](ctx, c, mcp.MethodElicitation, p)
}

func requestAs[T any](ctx context.Context, c *Call, method string, params any) (*T, error) {
	raw, err := c.Request(ctx, method, params)
	if err != nil {
		return nil, err
	}
	res := new(T)
	if err := json.Unmarshal(raw, res); err != nil {
		return nil, fmt.Errorf("bundle: %s: unreadable answer: %w", method, err)
	}
	return res, nil
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
