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

// serveSkills answers skills/list and skills/get, with what the caller may read only.
func (s *Server) serveSkills(req *node.Request) (any, error) {
	n := s.node
	if req.Method == mcp.MethodSkillsGet {
		return n.GetSkill(req)
	}
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
// (req.Skill), once its call ends with err.
func (s *Server) auditSkill(ctx context.Context, req *node.Request, id Identity, start time.Time, err error) {
	log := s.opts.Audit
	if log == nil || req == nil || req.Skill == "" {
		return
	}
	outcome := audit.OK
	switch {
	case req.Refused != "":
		outcome = req.Refused
	case ctx.Err() != nil:
		outcome = audit.Cancelled
	case err != nil:
		outcome = audit.Failed
	}
	log.Record(audit.Record{Time: start, Duration: time.Since(start), Client: id.Client, Tool: req.Method, Skill: req.Skill,
		Bundle: req.Bundle, Outcome: outcome})
}
