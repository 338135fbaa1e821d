package telemetry

import (
	"context"
	"encoding/json"
	"time"

	"github.com/toolnode/toolnode/sdk-go/rawjson"
)

// Recorder is what the node reports to. Every method is safe for concurrent use and
// cheap when telemetry is off (Nop).
type Recorder interface {
	// StartRequest starts the server span of one MCP request or notification the node
	// serves, continuing the trace whose context the client put in req.Meta, and starts
	// the clock of mcp.server.operation.duration. End the returned Op when the answer is
	// sent. The returned context carries the span: pass it to StartBundleCall.
	StartRequest(ctx context.Context, req Request) (context.Context, *Op)
	// StartBundleCall starts a client span, child of ctx's, for a message the node sends
	// a bundle, and counts the call in flight until the Op ends.
	StartBundleCall(ctx context.Context, call BundleCall) (context.Context, *Op)
	// TraceMeta returns the _meta members that carry ctx's trace context (traceparent,
	// tracestate, baggage), sorted by name, so that the bundle's spans join the trace: the
	// node puts them in the request's _meta in the one edit that readies it for its bundle
	// (upstream.Edit.Meta). nil when tracing is off or ctx has no span.
	TraceMeta(ctx context.Context) []rawjson.Edit

	// SessionOpened counts a client session (Streamable HTTP or stdio) as open.
	SessionOpened()
	// SessionClosed counts it closed and records mcp.server.session.duration.
	SessionClosed(protocolVersion string, lifetime time.Duration)
	// BundleState records a bundle's state (e.g. "starting", "ready", "failed").
	BundleState(bundle, state string)
	// BundleRestarted counts a restart of a bundle.
	BundleRestarted(bundle string)
	// QueueDepth records how many calls wait for a bundle.
	QueueDepth(bundle string, depth int)
}

// Request describes one MCP request or notification the node received.
type Request struct {
	// Method is the JSON-RPC method, e.g. "tools/call". One the node does not serve is
	// recorded as Other.
	Method string
	// Target is the tool or prompt name of tools/call and prompts/get; it completes the
	// span name ("tools/call greet") and labels the duration metric. Leave it empty for
	// names the node's catalogs do not hold, or a client could mint a series per name.
	Target string
	// ID is the JSON-RPC id as it came on the wire (a string or a number); empty for a
	// notification.
	ID json.RawMessage
	// SessionID is the Mcp-Session-Id, or the node's name for a stdio session.
	SessionID string
	// ProtocolVersion is the MCP revision the session (or, from 2026-07-28, the
	// request's _meta) speaks; one the node does not speak is recorded as Other.
	ProtocolVersion string
	// Transport is "tcp" (Streamable HTTP) or "pipe" (stdio).
	Transport string
	// Meta is the request's params._meta object, which may carry traceparent and
	// tracestate; nil when it has none.
	Meta json.RawMessage
}

// BundleCall describes one message the node sends to a bundle.
type BundleCall struct {
	// Bundle is the bundle's name.
	Bundle string
	// Method is the JSON-RPC method sent.
	Method string
	// Target is the bundle's own name of the tool or prompt, if any.
	Target string
	// ID is the JSON-RPC id the node gave the call.
	ID json.RawMessage
}

// Error types for Op.End besides JSON-RPC error codes (ErrorCode).
const (
	// ToolError is a tools/call result with isError: true, as the conventions name it.
	ToolError = "tool_error"
	// Cancelled is a request the client cancelled.
	Cancelled = "cancelled"
	// Timeout is a request the node gave up waiting for.
	Timeout = "timeout"
)

// Nop is the Recorder that records nothing.
type Nop struct{}

// StartRequest returns ctx and a nil Op, whose End does nothing.
func (Nop) StartRequest(ctx context.Context, _ Request) (context.Context, *Op) { return ctx, nil }

// StartBundleCall returns ctx and a nil Op, whose End does nothing.
func (Nop) StartBundleCall(ctx context.Context, _ BundleCall) (context.Context, *Op) {
	return ctx, nil
}

// TraceMeta returns nil.
func (Nop) TraceMeta(context.Context) []rawjson.Edit { return nil }

// SessionOpened does nothing.
func (Nop) SessionOpened() {}

// SessionClosed does nothing.
func (Nop) SessionClosed(string, time.Duration) {}

// BundleState does nothing.
func (Nop) BundleState(string, string) {}

// BundleRestarted does nothing.
func (Nop) BundleRestarted(string) {}

// QueueDepth does nothing.
func (Nop) QueueDepth(string, int) {}
