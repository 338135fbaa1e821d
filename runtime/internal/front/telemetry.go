package front

import (
	"encoding/json"

	"github.com/toolnode/toolnode/runtime/internal/rpc"
	"github.com/toolnode/toolnode/runtime/internal/telemetry"
	"github.com/toolnode/toolnode/sdk-go/mcp"
	"github.com/toolnode/toolnode/sdk-go/rawjson"
)

// recorder is the front's telemetry, a no-op when none is configured.
func (s *Server) recorder() telemetry.Recorder {
	if s.opts.Telemetry == nil {
		return telemetry.Nop{}
	}
	return s.opts.Telemetry
}

// traced starts the request's span and metric (continuing the client's traceparent from
// _meta) and returns the context the call runs in, and reply wrapped to end them.
func (c *Call) traced(method string, params json.RawMessage, reply func(json.RawMessage, *rpc.Error)) func(json.RawMessage, *rpc.Error) {
	rec := c.sess.srv.recorder()
	if _, nop := rec.(telemetry.Nop); nop {
		return reply
	}
	req := telemetry.Request{Method: method, ID: json.RawMessage(c.id.String()), SessionID: c.sess.sessionID,
		ProtocolVersion: c.sess.Version(), Transport: c.sess.transport}
	req.Meta, _ = rawjson.Member(params, "_meta")
	if method == mcp.MethodToolsCall || method == mcp.MethodPromptsGet {
		var name string
		if raw, ok := rawjson.Member(params, "name"); ok && json.Unmarshal(raw, &name) == nil {
			// Only names the node serves label metrics: a client must not mint series.
			cat := c.sess.srv.node.Catalog()
			if method == mcp.MethodPromptsGet {
				cat = c.sess.srv.node.Prompts()
			}
			if _, known := cat.Lookup(name); known {
				req.Target = name
			}
		}
	}
	var op *telemetry.Op
	c.ctx, op = rec.StartRequest(c.ctx, req)
	return func(res json.RawMessage, err *rpc.Error) {
		op.End(errorType(c.cancelledByClient(), res, err))
		reply(res, err)
	}
}

// cancelledByClient reports whether the client cancelled the call: by a cancellation, or
// for a request over stateless HTTP by going away. Its context alone does not say: the end
// of every call begun in a session (stdio's, whatever the revision) cancels it, before the
// answer is sent.
func (c *Call) cancelledByClient() bool {
	return c.Cancelled() || c.owner.stateless && c.ctx.Err() != nil
}

// errorType names how a request failed, in the conventions' terms; "" when it did not.
// A cancelled request is cancelled whatever error its end made up: none is sent.
func errorType(cancelled bool, res json.RawMessage, err *rpc.Error) string {
	switch {
	case cancelled:
		return telemetry.Cancelled
	case err != nil:
		return telemetry.ErrorCode(err.Code)
	}
	if v, ok := rawjson.Member(res, "isError"); ok && string(v) == "true" {
		return telemetry.ToolError
	}
	return ""
}
