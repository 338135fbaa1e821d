package front

import "github.com/toolnode/toolnode/runtime/internal/node"

// auditInner writes the audit record of a call a toolnode.run made, under the run (its
// "run" names the run's own record) and for the run's caller.
func (s *Server) auditInner(c node.InnerCall) {
	s.audit(c.Request, Identity{Client: c.Caller.Client, Subject: c.Caller.Subject}, c.Start, c.Outcome, c.Cancelled)
}
