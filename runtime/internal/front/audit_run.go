package front

import "github.com/toolnode/toolnode/runtime/internal/node"

// auditInner writes the audit record of a call a toolnode.run made, under the run (its
// "run" names the run's own record) and for the run's caller.
func (s *Server) auditInner(c node.InnerCall) {
	var id Identity
	switch p := c.Session.(type) {
	case *Session:
		id = p.id
	case *Stateless:
		id = p.id
	case *mrtrCall:
		id = p.id
	}
	s.audit(c.Request, id, c.Start, c.Result, c.Err, c.Cancelled)
}
