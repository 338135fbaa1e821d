package codemode

import (
	"encoding/json"
	"slices"
	"sort"
	"strings"

	"go.starlark.net/starlark"
)

// Names maps the tools of one catalog to the names a program calls them by: each dotted
// segment of a tool's name made a valid identifier (node-lamp.on is node_lamp.on). Tools
// whose names collide so (a.b-c and a.b_c), whose name is also the prefix of another's, or
// whose first segment is a builtin's name (json, print...) are no function of a program:
// call() reaches them by their names. A Names never changes; a catalog that changes gets
// a new one.
type Names struct {
	tools  []string            // the tools' names, as NewNames took them
	byPath map[string]string   // a callable path → the tool's name
	spaces map[string][]string // a namespace's path ("" for the top) → its members, sorted
	under  map[string][]string // a namespace's path → the tools it holds, at any depth
}

// NewNames maps the tools named tools.
func NewNames(tools []string) *Names {
	paths := map[string][]string{} // path → the tools that map to it
	for _, t := range tools {
		p := PathOf(t)
		paths[p] = append(paths[p], t)
	}
	n := &Names{tools: slices.Clone(tools), byPath: map[string]string{}, spaces: map[string][]string{}, under: map[string][]string{}}
	members := map[string]map[string]bool{}
	for p, ts := range paths {
		segs := strings.Split(p, ".")
		if len(ts) > 1 || reserved(segs[0]) {
			continue
		}
		n.byPath[p] = ts[0]
		for i := range segs {
			parent := strings.Join(segs[:i], ".")
			if members[parent] == nil {
				members[parent] = map[string]bool{}
			}
			members[parent][segs[i]] = true
		}
	}
	for parent, m := range members {
		n.spaces[parent] = slices.Sorted(func(yield func(string) bool) {
			for k := range m {
				if !yield(k) {
					return
				}
			}
		})
	}
	// A tool whose path is also a namespace is reached by call() alone: a name is one or
	// the other.
	for p := range n.byPath {
		if _, space := n.spaces[p]; space {
			delete(n.byPath, p)
		}
	}
	for p, t := range n.byPath {
		for i := strings.IndexByte(p, '.'); i >= 0; i = next(p, i) {
			n.under[p[:i]] = append(n.under[p[:i]], t)
		}
	}
	return n
}

// next is the index of the dot after the one at i in p, or -1.
func next(p string, i int) int {
	j := strings.IndexByte(p[i+1:], '.')
	if j < 0 {
		return -1
	}
	return i + 1 + j
}

// Tools lists the names the Names were made of, as NewNames took them: NewNames of them
// is the same mapping (how a worker process gets it). The slice must not be modified.
func (n *Names) Tools() []string { return n.tools }

// Under lists the tools a namespace holds, at any depth.
func (n *Names) Under(path string) []string { return n.under[path] }

// Tool returns the tool a path names, as a program calls it.
func (n *Names) Tool(path string) (string, bool) {
	t, ok := n.byPath[path]
	return t, ok
}

// Space reports whether path is a namespace of tools ("meos"), and its members.
func (n *Names) Space(path string) ([]string, bool) {
	m, ok := n.spaces[path]
	return m, ok
}

// builtins are the names a program has besides its tools.
var builtins = []string{"call", "search", "parallel", "is_error", "json"}

// reserved reports whether a top-level name is taken by a builtin of the language or of
// ours.
func reserved(name string) bool {
	_, universe := starlark.Universe[name]
	return universe || slices.Contains(builtins, name)
}

// keywords are the words a Starlark identifier may not be (its keywords and the words it
// reserves).
var keywords = map[string]bool{
	"and": true, "break": true, "continue": true, "def": true, "elif": true, "else": true, "for": true, "if": true,
	"in": true, "lambda": true, "load": true, "not": true, "or": true, "pass": true, "return": true, "while": true,
	"as": true, "assert": true, "async": true, "await": true, "class": true, "del": true, "except": true,
	"finally": true, "from": true, "global": true, "import": true, "is": true, "nonlocal": true, "raise": true,
	"try": true, "with": true, "yield": true,
}

// Ident makes one segment of a tool's name a valid identifier: every character but a
// letter, a digit or _ becomes _, a leading digit gets a _ before it, a keyword one after.
func Ident(seg string) string {
	var b strings.Builder
	for i, r := range seg {
		switch {
		case r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
			b.WriteRune(r)
		case r >= '0' && r <= '9':
			if i == 0 {
				b.WriteByte('_')
			}
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	s := b.String()
	if s == "" || keywords[s] {
		s += "_"
	}
	return s
}

// validIdent reports whether s can be written as a keyword argument.
func validIdent(s string) bool { return s != "" && Ident(s) == s }

// PathOf is the path a program calls a tool by: each segment of its name made an
// identifier.
func PathOf(tool string) string {
	segs := strings.Split(tool, ".")
	for i, s := range segs {
		segs[i] = Ident(s)
	}
	return strings.Join(segs, ".")
}

// Signature writes how a program calls the tool name whose input schema is schema, e.g.
// meos.speed(point: str, unit: str = None). A tool that is no function of a program, or
// has an argument that cannot be a keyword, is written as a call(): call("odd.tool",
// {"a-b": int}).
func (n *Names) Signature(name string, schema json.RawMessage) string {
	var s struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	_ = json.Unmarshal(schema, &s)
	props := make([]string, 0, len(s.Properties))
	kw := true
	for p := range s.Properties {
		props = append(props, p)
		kw = kw && validIdent(p)
	}
	// Required ones first, as the schema orders them; then the rest by name.
	sort.Strings(props)
	required := map[string]bool{}
	var ordered []string
	for _, r := range s.Required {
		if _, ok := s.Properties[r]; ok && !required[r] {
			required[r] = true
			ordered = append(ordered, r)
		}
	}
	for _, p := range props {
		if !required[p] {
			ordered = append(ordered, p)
		}
	}
	path := PathOf(name)
	if t, ok := n.byPath[path]; !ok || t != name {
		kw = false
	}
	var b strings.Builder
	if kw {
		b.WriteString(path + "(")
	} else {
		q, _ := json.Marshal(name)
		b.WriteString("call(" + string(q) + ", {")
	}
	for i, p := range ordered {
		if i > 0 {
			b.WriteString(", ")
		}
		typ := typeName(s.Properties[p].Type)
		if kw {
			b.WriteString(p + ": " + typ)
		} else {
			q, _ := json.Marshal(p)
			b.WriteString(string(q) + ": " + typ)
		}
		if !required[p] {
			b.WriteString(" = None")
		}
	}
	if kw {
		b.WriteString(")")
	} else {
		b.WriteString("})")
	}
	return b.String()
}

// typeName writes a JSON Schema type as the Starlark type a program gives for it.
func typeName(t any) string {
	name := func(s string) string {
		switch s {
		case "string":
			return "str"
		case "integer":
			return "int"
		case "number":
			return "float"
		case "boolean":
			return "bool"
		case "array":
			return "list"
		case "object":
			return "dict"
		case "null":
			return "None"
		}
		return "any"
	}
	switch t := t.(type) {
	case string:
		return name(t)
	case []any:
		var parts []string
		for _, x := range t {
			if s, ok := x.(string); ok {
				parts = append(parts, name(s))
			}
		}
		if len(parts) > 0 {
			return strings.Join(parts, " | ")
		}
	}
	return "any"
}
