// Package skills merges the skills of bundles (MCP's skills extension, SEP-2640,
// io.modelcontextprotocol/skills) as the node serves them: those a bundle's SDK lists
// itself (skills/list), and those a bundle ships as files, a folder of skill folders each
// holding a SKILL.md, which the node reads and serves for it.
//
// Skills are namespaced as tools are, by bundle: the node serves a bundle's skill
// skill://<path>/SKILL.md as skill://<bundle>/<path>/SKILL.md, which the extension allows
// (a server-chosen prefix before the skill's name), so skills of two bundles never
// collide and each URI says which bundle a skill comes from. Every file of a skill keeps
// its digest and size: the node passes a bundle's entries on with their URIs renamed and
// nothing else changed, and computes the entries of the skills it reads itself.
package skills

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// Extension is the extension's identifier, under capabilities.extensions.
const Extension = mcp.ExtensionSkills

// Scheme is the URI scheme of skills and their files.
const Scheme = "skill://"

// Limits of one skill the extension fixes: the files it lists, SKILL.md included, and their
// bytes together. The node serves no skill of its own reading past either.
const (
	MaxFiles = 512
	MaxBytes = 16 << 20
)

// Resource is one file of a skill, as an entry lists it.
type Resource struct {
	URI    string `json:"uri"`
	Digest string `json:"digest"`
	Size   int64  `json:"size"`
}

// Entry is a skill as skills/list and skills/get give it. Resources is a list of
// Resource, or the string "dynamic".
type Entry struct {
	URI         string          `json:"uri"`
	Frontmatter json.RawMessage `json:"frontmatter"`
	Resources   json.RawMessage `json:"resources"`
}

// Skill is one skill the node serves: its entry under the node's URIs, and where it comes
// from.
type Skill struct {
	// Bundle serves the skill.
	Bundle string
	// Entry is the entry clients get, its URIs the node's.
	Entry json.RawMessage
	// URI is the node's URI of its SKILL.md.
	URI string
	// Local is the skill read from the bundle's skills folder; nil for a skill the
	// bundle's SDK serves.
	Local *Local
}

// Namespaced is the node's URI of a bundle's own skill URI (skill://x/y → skill://b/x/y),
// and false for a URI of another scheme, which the node does not serve.
func Namespaced(bundle, own string) (string, bool) {
	rest, ok := strings.CutPrefix(own, Scheme)
	if !ok || rest == "" {
		return "", false
	}
	return Scheme + bundle + "/" + rest, true
}

// Split is the bundle of a node's skill URI and the bundle's own URI of it.
func Split(uri string) (bundle, own string, ok bool) {
	rest, ok := strings.CutPrefix(uri, Scheme)
	if !ok {
		return "", "", false
	}
	bundle, rest, ok = strings.Cut(rest, "/")
	if !ok || bundle == "" || rest == "" {
		return "", "", false
	}
	return bundle, Scheme + rest, true
}

// Rename gives a bundle's own skills/list entry under the node's URIs: the entry's uri and
// each of its resources'. An entry that is not one the extension defines, or names a URI
// of another scheme, is an error.
func Rename(bundle string, raw json.RawMessage) (Skill, error) {
	var e Entry
	if err := json.Unmarshal(raw, &e); err != nil {
		return Skill{}, fmt.Errorf("not a skill entry: %w", err)
	}
	uri, ok := Namespaced(bundle, e.URI)
	if !ok || !strings.HasSuffix(e.URI, "/"+SkillFile) {
		return Skill{}, fmt.Errorf("skill %q: the node serves skill:// URIs ending in /%s only", e.URI, SkillFile)
	}
	if len(e.Frontmatter) == 0 || e.Frontmatter[0] != '{' {
		return Skill{}, fmt.Errorf("skill %q: no frontmatter object", e.URI)
	}
	var files []Resource
	switch {
	case string(e.Resources) == `"dynamic"`:
	case json.Unmarshal(e.Resources, &files) == nil && files != nil:
		for i, f := range files {
			if files[i].URI, ok = Namespaced(bundle, f.URI); !ok {
				return Skill{}, fmt.Errorf("skill %q: file %q is not a skill:// URI", e.URI, f.URI)
			}
		}
		e.Resources, _ = json.Marshal(files)
	default:
		return Skill{}, fmt.Errorf("skill %q: resources is neither a list of files nor \"dynamic\"", e.URI)
	}
	e.URI = uri
	out, err := json.Marshal(e)
	if err != nil {
		return Skill{}, fmt.Errorf("skill %q: %w", uri, err)
	}
	return Skill{Bundle: bundle, Entry: out, URI: uri}, nil
}

// Set is the skills of every bundle, sorted by URI.
type Set struct {
	skills []Skill
	byURI  map[string]int
}

// NewSet holds skills; of two with one URI (a bundle cannot have two), the first stays.
func NewSet(skills []Skill) *Set {
	sort.SliceStable(skills, func(i, j int) bool { return skills[i].URI < skills[j].URI })
	s := &Set{byURI: make(map[string]int, len(skills))}
	for _, sk := range skills {
		if _, dup := s.byURI[sk.URI]; dup {
			continue
		}
		s.byURI[sk.URI] = len(s.skills)
		s.skills = append(s.skills, sk)
	}
	return s
}

// Len is how many skills s holds.
func (s *Set) Len() int { return len(s.skills) }

// Get is the skill whose SKILL.md is at uri.
func (s *Set) Get(uri string) (Skill, bool) {
	i, ok := s.byURI[uri]
	if !ok {
		return Skill{}, false
	}
	return s.skills[i], true
}

// Page is the entries of up to size skills (0: all) after cursor that keep allows, and
// the cursor of the next page ("" at the end). The cursor is opaque to clients: the URI
// of the last skill given.
func (s *Set) Page(cursor string, size int, keep func(bundle, uri string) bool) ([]json.RawMessage, string, error) {
	after := ""
	if cursor != "" {
		b, err := base64.RawURLEncoding.DecodeString(cursor)
		if err != nil {
			return nil, "", fmt.Errorf("invalid cursor")
		}
		after = string(b)
	}
	out := []json.RawMessage{}
	last := ""
	for i := sort.Search(len(s.skills), func(i int) bool { return s.skills[i].URI > after }); i < len(s.skills); i++ {
		sk := s.skills[i]
		if keep != nil && !keep(sk.Bundle, sk.URI) {
			continue
		}
		if size > 0 && len(out) == size {
			return out, base64.RawURLEncoding.EncodeToString([]byte(last)), nil
		}
		out, last = append(out, sk.Entry), sk.URI
	}
	return out, "", nil
}
