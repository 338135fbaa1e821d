package front

import (
	"encoding/json"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/telemetry"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// trace starts the call's span and metric, continuing the client's traceparent from its
// _meta; the call's context carries the span to the node. Only names the node serves label
// them: a client must not mint series.
func (c *Call) trace() {
	base := c.peer.base()
	if base.srv.opts.Audit != nil {
		c.start = time.Now()
	}
	rec := base.srv.recorder()
	if _, nop := rec.(telemetry.Nop); nop {
		return
	}
	n := base.srv.node
	req := telemetry.Request{Method: c.req.Method, ID: json.RawMessage(c.id.String()), SessionID: base.sessionID,
		ProtocolVersion: c.peer.protocol(), Transport: base.transport, Meta: c.req.Meta}
	switch c.req.Method {
	case mcp.MethodToolsCall:
		if c.tool.Known() {
			req.Target = c.req.Target()
		}
	case mcp.MethodPromptsGet:
		if _, known := n.Prompts().Lookup(c.req.Target()); known {
			req.Target = c.req.Target()
		}
	}
	c.ctx, c.op = rec.StartRequest(c.ctx, req)
}
