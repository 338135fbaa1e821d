// Package catalog merges the tools of every bundle under one namespace and routes names back
// to the bundle that serves them.
//
// A tool named <seat>.<verb> by a bundle that declares the seat keeps its name, as do all the
// tools of a bundle exposed without prefix; any other tool is exposed as <bundle>.<tool>.
// Names beginning <bundle>. belong to that bundle: no other can take one, whether by a seat,
// without prefix, or by a bundle name with a dot in it; such a claim falls back to the
// claimer's own prefix, and a source whose name is not a bundle name (1 to 64 of
// A-Z a-z 0-9 _ -) is left out whole. When names
// collide otherwise, the outcome depends only on the set of bundles, never on the order
// they started in: a name a bundle claims as is beats a prefixed one, then the bundle whose
// name sorts first wins. A claimed name that loses falls back to its prefixed form, so the
// tool stays reachable; every collision is reported, as is a name a bundle lists twice (the
// first is kept). Prompts follow the same rules.
package catalog

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/toolnode/toolnode/runtime/internal/manifest"
	"github.com/toolnode/toolnode/sdk-go/mcp"
	"github.com/toolnode/toolnode/sdk-go/rawjson"
)

// Source is the tool (or prompt) list of one bundle.
type Source struct {
	Bundle string
	// Namespace is the prefix of the names that belong to this source (names beginning
	// "<Namespace>."), and to no source of another namespace. Default: Bundle.
	Namespace string
	Seats     []string
	// NoPrefix exposes every tool under its own name, as long as it collides with nothing.
	NoPrefix bool
	Tools    []json.RawMessage
	// Views maps the ui:// URIs of the bundle's views to the URIs they are exposed at (see
	// Views.Of): a tool naming a view exposed under another URI is listed with that URI,
	// and without it when the view is left out.
	Views map[string]string
	// Featured reports whether the bundle features its tool named tool (its own name): one
	// listed directly when the catalog is served by search. nil features none.
	Featured func(tool string) bool
}

// Entry is one exposed tool.
type Entry struct {
	// Name is the name clients see.
	Name string
	// Bundle serves the tool, under its own name Tool.
	Bundle string
	Tool   string
	// JSON is the bundle's tool object with only "name" changed to Name.
	JSON json.RawMessage
	// Mirrors is whether the tool's schema marks arguments with x-mcp-header, which a
	// 2026-07-28 HTTP call mirrors into headers that must then be checked.
	Mirrors bool
	// View is the ui:// URI of the tool's view as its bundle names it; "" when it has none.
	View string
	// AppOnly is set when the tool's _meta.ui.visibility leaves the model out: it is
	// listed to nobody, and called by the views that know it.
	AppOnly bool
	// Featured is set when its bundle features the tool (bundle.json "featured").
	Featured bool

	noView json.RawMessage // JSON without the view's URI, for a caller who may not read it
}

// Notice reports a tool that was refused or renamed while merging.
type Notice struct {
	Bundle string
	Tool   string
	// Exposed is the name the tool got instead, or "" when it was left out.
	Exposed string
	Reason  string
	// Whole is set when every tool of the bundle was left out, Tool then being "".
	Whole bool
	// Shared is set when two bundles claim one name (both implement a seat's verb, say):
	// the one whose name sorts first serves it and this one keeps its tool under its
	// prefixed name, as designed, rather than anything being wrong.
	Shared bool
	// Kind names what Tool is when it is not a tool ("view"); "" for a tool.
	Kind string
}

func (n Notice) String() string {
	if n.Whole {
		return fmt.Sprintf("bundle %q left out: %s", n.Bundle, n.Reason)
	}
	kind := n.Kind
	if kind == "" {
		kind = "tool"
	}
	if n.Exposed == "" {
		return fmt.Sprintf("%s %q of bundle %q left out: %s", kind, n.Tool, n.Bundle, n.Reason)
	}
	return fmt.Sprintf("%s %q of bundle %q exposed as %q: %s", kind, n.Tool, n.Bundle, n.Exposed, n.Reason)
}

// Catalog is an immutable merged tool list, sorted by name.
type Catalog struct {
	entries []Entry
	byName  map[string]int
	mirrors bool // some entry's Mirrors
	// byOwn finds the entries of bundles serving views by the bundles' own tool names: a
	// view calls its server's tools by those.
	byOwn map[string][]int

	strictOnce sync.Once
	strict     *NameMap

	hostOnce sync.Once
	host     map[string]hostTool // by name: the tools whose schema hosts get lowered (FormHosts)

	forms [4]rendering // by Form, up to FormHosts|FormStrict; 0 unused (the entries as they are)
}

type candidate struct {
	name, bundle, tool string
	claim              bool // keeps its own name: a seat verb, or a bundle without prefix
	raw                json.RawMessage
	why                string // why a claim fell back to the prefixed name
	shared             bool   // it fell back because another bundle claims the name too
	view               string // the tool's view as the bundle names it
	appOnly            bool
	featured           bool
}

// Build merges sources and returns the catalog with what it refused or renamed.
func Build(sources []Source) (*Catalog, []Notice) {
	b := &builder{cat: &Catalog{byName: map[string]int{}}}
	sources = b.valid(sources)
	cands, fallbacks := b.candidates(sources)
	b.place(cands, fallbacks)
	cat := b.cat
	sort.Slice(cat.entries, func(i, j int) bool { return cat.entries[i].Name < cat.entries[j].Name })
	for i, e := range cat.entries {
		cat.byName[e.Name] = i
	}
	cat.indexOwnNames()
	return cat, b.notices
}

// builder is a catalog being made, and the notices of its making in the order they come.
type builder struct {
	cat     *Catalog
	notices []Notice
}

// valid returns the sources whose names can prefix tools, in the order of their names (so
// that the notices do not depend on the order given), noting those left out.
func (b *builder) valid(sources []Source) []Source {
	sources = slices.Clone(sources)
	sort.SliceStable(sources, func(i, j int) bool { return sources[i].Bundle < sources[j].Bundle })
	valid := make([]Source, 0, len(sources))
	for _, s := range sources {
		// A dot in a prefix would put the source's names under another bundle's
		// ("pub.x" + "steal" is "pub.x.steal", a name of bundle "pub").
		if !manifest.ValidName(namespace(s)) || !s.NoPrefix && !manifest.ValidName(s.Bundle) {
			if len(s.Tools) > 0 {
				b.notices = append(b.notices, Notice{Bundle: s.Bundle, Whole: true,
					Reason: "not a bundle name (1 to 64 of A-Z a-z 0-9 _ -, no dots)"})
			}
			continue
		}
		valid = append(valid, s)
	}
	return valid
}

// candidates are the names the sources' tools ask for, sorted, and the prefixed names of
// those that claim a name another bundle owns.
func (b *builder) candidates(sources []Source) (cands, fallbacks []candidate) {
	owners := map[string][]string{} // namespace -> the bundles it belongs to, sorted
	for _, s := range sources {
		owners[namespace(s)] = append(owners[namespace(s)], s.Bundle)
	}
	for _, o := range owners {
		sort.Strings(o)
	}
	for _, s := range sources {
		for _, c := range b.sourceCandidates(s) {
			prefix, _, dotted := strings.Cut(c.tool, ".")
			if owner := owners[prefix]; c.claim && dotted && len(owner) > 0 && !slices.Contains(owner, s.Bundle) {
				c.claim, c.name = false, s.Bundle+"."+c.tool
				c.why = fmt.Sprintf("name %q belongs to bundle %q", c.tool, owner[0])
				fallbacks = append(fallbacks, c)
				continue
			}
			if !c.claim {
				c.name = s.Bundle + "." + c.tool
			}
			cands = append(cands, c)
		}
	}
	sort.SliceStable(cands, func(i, j int) bool {
		a, b := cands[i], cands[j]
		if a.name != b.name {
			return a.name < b.name
		}
		if a.claim != b.claim {
			return a.claim
		}
		return a.bundle < b.bundle
	})
	return cands, fallbacks
}

// sourceCandidates are the tools of one source, each claiming its own name when it is a
// verb of the source's seats or the source has no prefix; it notes the tools refused.
func (b *builder) sourceCandidates(s Source) []candidate {
	seats := map[string]bool{}
	for _, seat := range s.Seats {
		seats[seat] = true
	}
	listed := map[string]bool{}
	var out []candidate
	for _, raw := range s.Tools {
		var t struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(raw, &t); err != nil {
			b.notices = append(b.notices, Notice{Bundle: s.Bundle, Reason: fmt.Sprintf("not a tool object: %v", err)})
			continue
		}
		if !mcp.ValidToolName(t.Name) {
			b.notices = append(b.notices, Notice{Bundle: s.Bundle, Tool: t.Name,
				Reason: "name breaks the spec's rule (1 to 128 of A-Z a-z 0-9 _ - .)"})
			continue
		}
		if listed[t.Name] {
			b.notices = append(b.notices, Notice{Bundle: s.Bundle, Tool: t.Name, Reason: "listed twice by the bundle; the first is kept"})
			continue
		}
		listed[t.Name] = true
		prefix, _, dotted := strings.Cut(t.Name, ".")
		c := candidate{name: t.Name, bundle: s.Bundle, tool: t.Name, claim: dotted && seats[prefix] || s.NoPrefix, raw: raw,
			featured: s.Featured != nil && s.Featured(t.Name)}
		c.view, c.appOnly = toolView(raw)
		if exposed, ok := s.Views[c.view]; ok && exposed != c.view {
			c.raw = setToolView(raw, exposed) // without its view when the view is left out
			if exposed == "" {
				c.view = ""
			}
		}
		out = append(out, c)
	}
	return out
}

// add puts c in the catalog unless its name is taken (false); a name too long is noted
// and dropped (true).
func (b *builder) add(c candidate) bool {
	cat := b.cat
	if len(c.name) > mcp.MaxToolNameLen {
		b.notices = append(b.notices, Notice{Bundle: c.bundle, Tool: c.tool,
			Reason: fmt.Sprintf("exposed name %q is longer than %d characters", c.name, mcp.MaxToolNameLen)})
		return true
	}
	if _, taken := cat.byName[c.name]; taken {
		return false
	}
	cat.byName[c.name] = len(cat.entries)
	e := Entry{Name: c.name, Bundle: c.bundle, Tool: c.tool, JSON: rename(c.raw, c.name, c.tool),
		Mirrors: bytes.Contains(c.raw, []byte("x-mcp-header")), View: c.view, AppOnly: c.appOnly, Featured: c.featured}
	if e.View != "" {
		e.noView = setToolView(e.JSON, "")
	}
	cat.entries = append(cat.entries, e)
	cat.mirrors = cat.mirrors || e.Mirrors
	return true
}

// place adds the candidates in order, a claim that loses its name falling back to its
// prefixed one, then the fallbacks by bundle and tool, noting each renamed or refused.
func (b *builder) place(cands, fallbacks []candidate) {
	for _, c := range cands {
		if b.add(c) {
			continue
		}
		winner := b.cat.owner(c.name)
		if c.claim {
			c.claim, c.name, c.shared = false, c.bundle+"."+c.tool, true
			c.why = fmt.Sprintf("name %q is served by bundle %q, which sorts first", c.tool, winner)
			fallbacks = append(fallbacks, c)
			continue
		}
		b.notices = append(b.notices, Notice{Bundle: c.bundle, Tool: c.tool,
			Reason: fmt.Sprintf("name %q is already served by bundle %q", c.name, winner)})
	}
	sort.SliceStable(fallbacks, func(i, j int) bool {
		if fallbacks[i].bundle != fallbacks[j].bundle {
			return fallbacks[i].bundle < fallbacks[j].bundle
		}
		return fallbacks[i].tool < fallbacks[j].tool
	})
	for _, c := range fallbacks {
		if b.add(c) {
			b.notices = append(b.notices, Notice{Bundle: c.bundle, Tool: c.tool, Exposed: c.name, Reason: c.why, Shared: c.shared})
			continue
		}
		b.notices = append(b.notices, Notice{Bundle: c.bundle, Tool: c.tool,
			Reason: fmt.Sprintf("%s, and %q is taken too", c.why, c.name)})
	}
}

// namespace is the prefix whose names belong to s (and to any source that shares it).
func namespace(s Source) string {
	if s.Namespace != "" {
		return s.Namespace
	}
	return s.Bundle
}

func (c *Catalog) owner(name string) string {
	if e, ok := c.Lookup(name); ok {
		return e.Bundle
	}
	return ""
}

// rename returns the tool object with its "name" set to name, leaving every other member,
// schemas included, byte for byte as the bundle sent it.
func rename(raw json.RawMessage, name, orig string) json.RawMessage {
	if name == orig {
		return raw
	}
	quoted, _ := json.Marshal(name)
	if out, ok := rawjson.SetMember(raw, "name", quoted); ok {
		return out
	}
	return raw
}

// Keep returns the catalog of the entries of c that keep accepts: the same names and
// objects, fewer of them. c is left as it is.
func (c *Catalog) Keep(keep func(Entry) bool) *Catalog {
	out := &Catalog{byName: map[string]int{}}
	for _, e := range c.entries {
		if !keep(e) {
			continue
		}
		out.byName[e.Name] = len(out.entries)
		out.entries = append(out.entries, e)
		out.mirrors = out.mirrors || e.Mirrors
	}
	out.indexOwnNames()
	return out
}

// Len is the number of tools.
func (c *Catalog) Len() int { return len(c.entries) }

// Lookup finds the entry for an exposed name.
func (c *Catalog) Lookup(name string) (Entry, bool) {
	i, ok := c.byName[name]
	if !ok {
		return Entry{}, false
	}
	return c.entries[i], true
}

// Find returns the entry of the tool clients call name, nil when there is none. The entry is
// the catalog's own, which does not change: a caller that keeps it (a call on its way)
// keeps a pointer, not a copy.
func (c *Catalog) Find(name string) *Entry {
	i, ok := c.byName[name]
	if !ok {
		return nil
	}
	return &c.entries[i]
}

// Mirrors reports whether any tool mirrors arguments into headers (see Entry.Mirrors):
// when none does, a call's headers need no look at its tool.
func (c *Catalog) Mirrors() bool { return c.mirrors }

// Entries returns all entries sorted by name. The slice must not be modified.
func (c *Catalog) Entries() []Entry { return c.entries }

// Equal reports whether two catalogs expose the same tools, byte for byte.
func (c *Catalog) Equal(o *Catalog) bool {
	if c == nil || o == nil {
		return c == o
	}
	if len(c.entries) != len(o.entries) {
		return false
	}
	for i := range c.entries {
		a, b := c.entries[i], o.entries[i]
		if a.Name != b.Name || a.Bundle != b.Bundle || a.Featured != b.Featured || string(a.JSON) != string(b.JSON) {
			return false
		}
	}
	return true
}

// Page returns up to size tools after cursor, and the cursor of the next page ("" at the
// end). size <= 0 means all. A cursor holds the last name returned, so pages stay consistent
// while tools come and go between requests.
func (c *Catalog) Page(cursor string, size int) ([]json.RawMessage, string, error) {
	return c.PageWhere(cursor, size, nil)
}

const cursorPrefix = "after:"

func encodeCursor(name string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + name))
}

func decodeCursor(cursor string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || !strings.HasPrefix(string(b), cursorPrefix) {
		return "", fmt.Errorf("invalid cursor %q", cursor)
	}
	return strings.TrimPrefix(string(b), cursorPrefix), nil
}

// PageWhere is Page over the tools keep accepts (every listed tool when keep is nil).
// Tools only views may call (Entry.AppOnly) are listed to nobody.
func (c *Catalog) PageWhere(cursor string, size int, keep func(Entry) bool) ([]json.RawMessage, string, error) {
	return c.PageListed(cursor, size, keep, nil, 0)
}

// PageListed is PageWhere, each tool with a view listed with its view only when views
// accepts it, by the bundle and the view's URI as the bundle names it (always when views
// is nil): a caller who may not read a view is not shown it. The tools are in form.
func (c *Catalog) PageListed(cursor string, size int, keep func(Entry) bool, views func(bundle, uri string) bool, form Form) ([]json.RawMessage, string, error) {
	start := 0
	if cursor != "" {
		after, err := decodeCursor(cursor)
		if err != nil {
			return nil, "", err
		}
		start = sort.Search(len(c.entries), func(i int) bool { return c.entries[i].Name > after })
	}
	var r *rendering
	if form != 0 {
		r = c.rendered(form)
	}
	tools := make([]json.RawMessage, 0, min(len(c.entries)-start, max(size, 0)))
	for i := start; i < len(c.entries); i++ {
		e := c.entries[i]
		if e.AppOnly || keep != nil && !keep(e) {
			continue
		}
		if size > 0 && len(tools) == size {
			return tools, encodeCursor(c.entries[i-1].Name), nil
		}
		listed, noView := e.JSON, e.noView
		if r != nil {
			listed, noView = r.json[i], r.noView[i]
		}
		if e.View != "" && views != nil && !views(e.Bundle, e.View) {
			listed = noView
		}
		tools = append(tools, listed)
	}
	return tools, "", nil
}

// Form is how tools/list shows the tools to a client: 0 as the catalog holds them, else
// changed for what the client takes. Each form of a catalog is rendered once, by the first
// list that asks for it, rather than by every list.
type Form uint8

const (
	// FormHosts lowers input schemas for hosts (see hosts.go), for a client of the
	// revisions before 2026-07-28.
	FormHosts Form = 1 << iota
	// FormStrict shows the names in the underscore form (see Strict).
	FormStrict
)

// rendering is the JSON of every entry in one form, by the entry's index: as listed, and
// without its view for a caller who may not read it (nil for a tool without one). nil for
// the tools listed to nobody (Entry.AppOnly).
type rendering struct {
	once         sync.Once
	json, noView []json.RawMessage
}

// rendered returns the entries in form f (not 0), rendering them on first use.
func (c *Catalog) rendered(f Form) *rendering {
	r := &c.forms[f]
	r.once.Do(func() { c.render(f, r) })
	return r
}

// render renders the entries in form f into r: the schemas lowered first, then the names.
func (c *Catalog) render(f Form, r *rendering) {
	var names *NameMap
	if f&FormStrict != 0 {
		names = c.Strict()
	}
	var strict *rendering // the names alone: what a tool whose schema is kept shares
	if f&FormHosts != 0 {
		c.hostOnce.Do(c.lowerForHosts)
		if names != nil {
			strict = c.rendered(FormStrict)
		}
	}
	r.json, r.noView = make([]json.RawMessage, len(c.entries)), make([]json.RawMessage, len(c.entries))
	for i, e := range c.entries {
		if e.AppOnly {
			continue
		}
		listed, noView := e.JSON, e.noView
		if f&FormHosts != 0 {
			h, lowered := c.host[e.Name]
			switch {
			case lowered:
				listed = h.lower(listed)
				if noView != nil {
					noView = h.lower(noView)
				}
			case strict != nil:
				r.json[i], r.noView[i] = strict.json[i], strict.noView[i]
				continue
			}
		}
		if names != nil {
			name := names.Render(e.Name)
			listed = rename(listed, name, e.Name)
			if noView != nil {
				noView = rename(noView, name, e.Name)
			}
		}
		r.json[i], r.noView[i] = listed, noView
	}
}
