package front

import (
	"time"

	"github.com/toolnode/toolnode/runtime/internal/audit"
	"github.com/toolnode/toolnode/runtime/internal/node"
	"github.com/toolnode/toolnode/runtime/internal/rpc"
	"github.com/toolnode/toolnode/sdk-go/mcp"
	"github.com/toolnode/toolnode/sdk-go/rawjson"
)

// Every tools/call is recorded in the audit log as the node decided and did it: the tool
// it ran or refused (through toolnode.execute, the one execute named), read from the
// request once, never read again from params.

// audit writes the record of a tools/call req of the caller id, begun at start, that ended
// as o says, or was cancelled.
func (s *Server) audit(req *node.Request, id Identity, start time.Time, o node.Outcome, cancelled bool) {
	log := s.opts.Audit
	if log == nil || req.Method != mcp.MethodToolsCall {
		return
	}
	log.Record(s.auditRecord(req, id, start, o, cancelled))
}

// auditRecord is the audit record of a tools/call (see audit): what the client asked, read
// from req, and what the node did, read from o.
func (s *Server) auditRecord(req *node.Request, id Identity, start time.Time, o node.Outcome, cancelled bool) audit.Record {
	rec := audit.Record{Time: start, Duration: time.Since(start), Client: id.Client, Tool: o.Ran, Bundle: o.Bundle,
		Arguments: req.Arguments, Result: o.Result, Outcome: o.Kind, Via: o.Via, Run: o.Run}
	if cancelled {
		rec.Outcome = audit.Cancelled
	}
	if o.Via == node.ExecuteToolName {
		rec.Arguments, _ = rawjson.Member(req.Arguments, "arguments")
	}
	if rec.Tool == "" {
		rec.Tool = req.Target()
	}
	return rec
}

// refuse records in the audit log a request refused before it could be served (its params
// could not be read, err says why; see Admit): every tools/call is recorded.
func (s *Server) refuse(req *node.Request, id Identity, err *rpc.Error) {
	if req == nil {
		return
	}
	s.audit(req, id, time.Now(), node.Refusal(req, audit.InvalidArguments, err), false)
}
