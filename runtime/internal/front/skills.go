package front

import (
	"context"
	"encoding/json"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/audit"
	"github.com/toolnode/toolnode/runtime/internal/node"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// Skills (MCP's skills extension) for both eras: the node serves skills/list and skills/get
// over the skills of its bundles (node/skills.go), and declares the extension, with the
// resources capability its files are read by, while some bundle has skills. The extension
// is written against 2026-07-28; a session client of an earlier revision that sends these
// methods gets the same answers. Every skills/get and every read of a skill's file is
// audited, allowed or refused.

// skillsExtension is the member of capabilities.extensions that declares skills: no
// optional feature (resources/directory/read is not served).
var skillsExtension = json.RawMessage(`{}`)

// serveSkills answers skills/list, with what the caller may read only. skills/get is
// node.GetSkill's, whose Outcome notes the skill for the audit log.
func (s *Server) serveSkills(req *node.Request) (any, error) {
	n := s.node
	return listPage(req, func(cursor string) ([]json.RawMessage, string, error) {
		return n.Skills().Page(cursor, s.opts.PageSize, req.Allow.Resource)
	}, "skills")
}

// withSkills adds the skills extension to caps when some bundle has skills.
func (s *Server) withSkills(caps mcp.ServerCapabilities) mcp.ServerCapabilities {
	if !s.node.OffersSkills() {
		return caps
	}
	ext := make(map[string]json.RawMessage, len(caps.Extensions)+1)
	for k, v := range caps.Extensions {
		ext[k] = v
	}
	ext[mcp.ExtensionSkills] = skillsExtension
	caps.Extensions = ext
	if caps.Resources == nil {
		caps.Resources = &mcp.ResourcesCapability{ListChanged: true}
	}
	return caps
}

// auditSkill records a skills/get or a read of a skill's file that the node noted
// (Outcome.Skill), once its call ends as o says.
func (s *Server) auditSkill(ctx context.Context, req *node.Request, id Identity, start time.Time, o node.Outcome) {
	log := s.opts.Audit
	if log == nil || req == nil || o.Skill == "" {
		return
	}
	outcome := audit.OK
	switch {
	case o.Refused:
		outcome = o.Kind
	case ctx.Err() != nil:
		outcome = audit.Cancelled
	case o.Err != nil:
		outcome = audit.Failed
	}
	log.Record(audit.Record{Time: start, Duration: time.Since(start), Client: id.Client, Tool: req.Method, Skill: o.Skill,
		Bundle: o.Bundle, Outcome: outcome})
}
