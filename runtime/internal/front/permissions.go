package front

import (
	"slices"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/access"
	"github.com/toolnode/toolnode/runtime/internal/catalog"
	"github.com/toolnode/toolnode/runtime/internal/node"
)

// Identity is who a request comes from, as the node knows it: what a transport learned by
// the request's credentials and where it came from. It decides what the caller may see and
// call (Client), which process of an isolated bundle serves it, whose requestState it may
// resume, and what it is counted against.
type Identity struct {
	// Client is the access file's client the request comes from; "" without an access
	// file.
	Client string
	// Subject is the subject of the request's OAuth token; "" without one.
	Subject string
	// Source is where the request came from over the network (the peer's host); "" over
	// stdio.
	Source string
	// Groups are the groups of the request's OAuth token (its `groups` claim); nil
	// without one. They name approvers only.
	Groups []string
}

// same reports whether id and o are one identity.
func (id Identity) same(o Identity) bool {
	return id.Client == o.Client && id.Subject == o.Subject && id.Source == o.Source && slices.Equal(id.Groups, o.Groups)
}

// key names the caller for isolation and ownership: its OAuth subject, else its access
// client; "" for an anonymous caller, which only a session can tell apart from another.
func (id Identity) key() string {
	switch {
	case id.Subject != "":
		return "subject:" + id.Subject
	case id.Client != "":
		return "client:" + id.Client
	}
	return ""
}

// Bound is the name a per-client bound counts the caller under: its OAuth subject or
// access client when it has one, else the address it came from.
func (id Identity) Bound() string {
	if k := id.key(); k != "" {
		return k
	}
	return "source:" + id.Source
}

// client is the access file's entry of the caller; nil without an access file. A client
// that a reload removed from the file may do nothing.
func (s *Server) client(id Identity) *access.Client {
	h := s.opts.Access
	if h == nil {
		return nil
	}
	if c, ok := h.Policy().Client(id.Client); ok {
		return c
	}
	return &access.Client{Name: id.Client}
}

// allow is the caller's filter for the node, nil when it may reach everything.
func (s *Server) allow(id Identity) node.Allow {
	c := s.client(id)
	if c == nil {
		return nil
	}
	return c.Allowed
}

// listFilter is what tools/list shows the caller of cat: its allowed tools, all of them in
// the full view, the node's own and the pinned ones in the search view, and in the auto
// view all of them when they fit the budget, else the node's own, pinned and featured
// ones (see chooseView), but to a client that picks tools itself (selects). nil shows
// everything.
func (s *Server) listFilter(id Identity, cat *catalog.Catalog, selects bool) func(catalog.Entry) bool {
	c := s.client(id)
	switch s.viewOf(c) {
	case access.ViewAuto:
		if selects {
			break // it picks the tools it gives a model itself, from the whole list
		}
		return s.autoFilter(cat, c)
	case access.ViewSearch:
		return func(e catalog.Entry) bool {
			return c.Allowed(e.Name) && (node.IsOwnTool(e.Name) || s.pinned(e.Name))
		}
	}
	if c == nil {
		return nil
	}
	return func(e catalog.Entry) bool { return c.Allowed(e.Name) }
}

// ClientByScopes finds the access file's client an OAuth token stands for: the first whose
// scopes, all of them, the token was granted; nil for none.
func ClientByScopes(p *access.Policy, granted []string) *access.Client {
	for _, c := range p.Clients() {
		if len(c.Scopes) == 0 {
			continue
		}
		all := true
		for _, s := range c.Scopes {
			all = all && slices.Contains(granted, s)
		}
		if all {
			return c
		}
	}
	return nil
}

// guard is what the access file says of the approval of the caller's calls, nil when it
// has no approval rules. A call is bound to its caller by its OAuth subject, else its
// access client (key); an approver is named by either.
func (s *Server) guard(id Identity) *node.Guard {
	h := s.opts.Access
	if h == nil {
		return nil
	}
	p := h.Policy()
	if len(p.Approvals()) == 0 {
		return nil
	}
	caller := id.Client
	if id.Subject != "" {
		caller = "sub:" + id.Subject
	}
	return &node.Guard{Caller: caller, Version: p.Version(),
		Rule: func(tool string) ([]string, time.Duration, bool) {
			a, ok := p.Approval(tool)
			if !ok {
				return nil, 0, false
			}
			return a.Approvers, a.TTL, true
		},
		Approves: func(approvers []string) bool {
			a := access.Approval{Approvers: approvers}
			return a.Approves(id.Client, id.Subject, id.Groups)
		}}
}

// Pending lists the calls waiting for a decision the caller id may give (the approvals
// page of the HTTP front shows them).
func (s *Server) Pending(id Identity) []node.PendingApproval { return s.node.Pending(s.guard(id)) }

// Decide approves or refuses a request for approval as the caller id, as toolnode.approve
// does.
func (s *Server) Decide(id Identity, request string, approve bool, reason string) (string, error) {
	return s.node.Decide(s.guard(id), request, approve, reason)
}
