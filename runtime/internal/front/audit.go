package front

import (
	"encoding/json"
	"errors"
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
// with res or err, or was cancelled.
func (s *Server) audit(req *node.Request, id Identity, start time.Time, res json.RawMessage, err error, cancelled bool) {
	log := s.opts.Audit
	if log == nil || req.Method != mcp.MethodToolsCall {
		return
	}
	log.Record(s.auditRecord(req, id, start, res, err, cancelled))
}

// auditRecord is the audit record of a tools/call (see audit).
func (s *Server) auditRecord(req *node.Request, id Identity, start time.Time, res json.RawMessage, err error, cancelled bool) audit.Record {
	rec := audit.Record{Time: start, Duration: time.Since(start), Client: id.Client, Tool: req.Ran, Bundle: req.Bundle,
		Arguments: req.Arguments, Result: res, Outcome: auditOutcome(req, res, err, cancelled), Via: req.Via, Run: req.Run}
	if req.Via == node.ExecuteToolName {
		rec.Arguments, _ = rawjson.Member(req.Arguments, "arguments")
	}
	if rec.Tool == "" {
		rec.Tool = req.Target()
	}
	return rec
}

// auditOutcome names how a call ended, for the audit log, from what the node noted on req.
func auditOutcome(req *node.Request, res json.RawMessage, err error, cancelled bool) string {
	var rpcErr *rpc.Error
	switch {
	case cancelled:
		return audit.Cancelled
	case req.Refused != "":
		return req.Refused
	case errors.As(err, &rpcErr) && rpcErr.Code == mcp.CodeInvalidParams:
		return audit.InvalidArguments
	case err != nil:
		return audit.Failed
	}
	if v, ok := rawjson.Member(res, "isError"); !ok || string(v) != "true" {
		return audit.OK
	}
	return audit.ToolError
}

// refuse records in the audit log a request refused before it could be served (its params
// could not be read, err says why; see Admit): every tools/call is recorded.
func (s *Server) refuse(req *node.Request, id Identity, err *rpc.Error) {
	if req == nil {
		return
	}
	req.Refused = audit.InvalidArguments
	s.audit(req, id, time.Now(), nil, err, false)
}
