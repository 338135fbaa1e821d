package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"

	"github.com/toolnode/toolnode/runtime/internal/rpc"
	"github.com/toolnode/toolnode/runtime/internal/skills"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// Skills (MCP's skills extension) of every listed bundle, under skill://<bundle>/: those a
// bundle's own server lists (asked with its other lists when it starts, see fetchLists),
// and, for a bundle whose server serves none, those its bundle.json's "skills" folder
// holds, which the node reads when asked, hashing only files that changed. A caller sees
// and reads a bundle's skills as it does the bundle's resources (Allow.Resource, by the
// node's URI): one that may not is answered as if they did not exist.

// skillState is what the node keeps of skills: the reader of skills folders, and the last
// problem logged for each bundle's skills, so that a listing does not log it again.
type skillState struct {
	once   sync.Once
	reader *skills.Reader
	mu     sync.Mutex
	logged map[string]string
}

// source is one listed bundle's skills as the node finds them.
type skillSource struct {
	bundle string
	listed []json.RawMessage // its server's own entries; nil when it serves none
	folder string            // its skills folder, "" for none
}

// OffersSkills reports whether some listed bundle has skills: its server declares the
// extension, or its bundle.json names a skills folder.
func (n *Node) OffersSkills() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, b := range n.bundles {
		if listed(b) && (b.m.Skills != "" || b.lists.skills != nil) {
			return true
		}
	}
	return false
}

// Skills is the skills of every listed bundle now, namespaced by bundle.
func (n *Node) Skills() *skills.Set {
	st := &n.skill
	st.once.Do(func() {
		st.reader, st.logged = skills.NewReader(), map[string]string{}
	})
	n.mu.Lock()
	var sources []skillSource
	for name, b := range n.bundles {
		if listed(b) && (b.m.Skills != "" || b.lists.skills != nil) {
			sources = append(sources, skillSource{bundle: name, listed: b.lists.skills, folder: b.m.SkillsPath()})
		}
	}
	n.mu.Unlock()
	var all []skills.Skill
	for _, src := range sources {
		var errs []error
		if src.listed != nil {
			for _, raw := range src.listed {
				sk, err := skills.Rename(src.bundle, raw)
				if err != nil {
					errs = append(errs, err)
					continue
				}
				all = append(all, sk)
			}
			if src.folder != "" {
				errs = append(errs, fmt.Errorf("its server serves skills, so the node does not serve those of its skills folder %s", src.folder))
			}
		} else {
			var got []skills.Skill
			got, errs = st.reader.Read(src.bundle, src.folder)
			all = append(all, got...)
		}
		n.logSkillProblems(src.bundle, errs)
	}
	return skills.NewSet(all)
}

// logSkillProblems logs what is wrong with a bundle's skills, when it differs from what was
// logged last for the bundle.
func (n *Node) logSkillProblems(bundle string, errs []error) {
	msg := errors.Join(errs...)
	text := ""
	if msg != nil {
		text = msg.Error()
	}
	st := &n.skill
	st.mu.Lock()
	same := st.logged[bundle] == text
	st.logged[bundle] = text
	st.mu.Unlock()
	if !same && text != "" {
		n.log.Warn("skills left out", "bundle", bundle, "why", strings.ReplaceAll(text, "\n", "; "))
	}
}

// GetSkill answers skills/get, with its Outcome: the entry of the skill whose SKILL.md is at
// req.URI, which the caller may read; else -32602, as the extension says for a skill not
// served. The Outcome names the skill, for the audit log.
func (n *Node) GetSkill(req *Request) Outcome {
	sk, ok := n.Skills().Get(req.URI)
	if !ok {
		return Answer(req.Method, nil, rpc.Errorf(mcp.CodeInvalidParams, "no skill is served at %s", req.URI))
	}
	if !req.Allow.Resource(sk.Bundle, sk.URI) {
		return outcomeOf(noted{Skill: sk.URI}, req.Method, nil, rpc.Errorf(mcp.CodeInvalidParams, "no skill is served at %s", req.URI), KindForbidden)
	}
	res, err := json.Marshal(struct {
		Skill json.RawMessage `json:"skill"`
	}{sk.Entry})
	return outcomeOf(noted{Bundle: sk.Bundle, Skill: sk.URI}, req.Method, res, err, "")
}

// readSkill serves resources/read of a file of a skill, with its Outcome: read by the node
// from a bundle's skills folder, or from the bundle whose server serves the skill, by its
// own URI. It reports false for a URI that is not a skill's, which is routed as any
// resource.
func (n *Node) readSkill(ctx context.Context, x Exchange, req *Request) (Outcome, bool) {
	bundle, own, ok := skills.Split(req.URI)
	if !ok {
		return Outcome{}, false
	}
	set := n.Skills()
	var sk skills.Skill
	found := false
	for i := len(req.URI); i > 0 && !found; i = strings.LastIndexByte(req.URI[:i], '/') {
		sk, found = set.Get(req.URI[:i] + "/" + skills.SkillFile)
	}
	if !found {
		// Not a file of a skill listed now; a bundle serving its own skills may still
		// serve it (a skill its listing leaves out).
		if n.servesOwnSkills(bundle) && req.Allow.Resource(bundle, req.URI) {
			return n.readRenamed(ctx, x, bundle, own, req, noted{Bundle: bundle, Skill: req.URI}), true
		}
		return Outcome{}, false
	}
	if !req.Allow.Resource(sk.Bundle, sk.URI) {
		return outcomeOf(noted{Skill: req.URI}, req.Method, nil, rpc.Errorf(mcp.CodeResourceNotFound, "resource %q not found", req.URI), KindForbidden), true
	}
	notes := noted{Bundle: sk.Bundle, Skill: req.URI}
	if sk.Local == nil {
		return n.readRenamed(ctx, x, bundle, own, req, notes), true
	}
	rel := strings.TrimPrefix(req.URI, strings.TrimSuffix(sk.URI, skills.SkillFile))
	res, err := sk.Local.Contents(req.URI, rel)
	if errors.Is(err, fs.ErrNotExist) {
		err = rpc.Errorf(mcp.CodeResourceNotFound, "resource %q not found: not a file of skill %s", req.URI, sk.URI)
	} else if err != nil {
		err = rpc.Errorf(mcp.CodeInternalError, "skill file %s: %v", req.URI, err)
	}
	return outcomeOf(notes, req.Method, res, err, ""), true
}

// servesOwnSkills reports whether bundle is listed and its server lists skills.
func (n *Node) servesOwnSkills(bundle string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	b, ok := n.bundles[bundle]
	return ok && listed(b) && b.lists.skills != nil
}
