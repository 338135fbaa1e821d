// Package provider renders MCP tools for model APIs: function names OpenAI, Anthropic and
// Gemini accept (and the way back), each API's schema rules, tool definitions in each API's
// request format, and tool results as each API's messages. It holds no state and does no
// I/O; package app runs the calls.
//
// The rules are the Python library's (toolnode_sdk.app): the vectors in testdata/app hold
// both to the same output.
package provider

import (
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"strconv"
	"strings"
)

// MaxName is the longest function name the model APIs accept.
const MaxName = 64

const hashHex = 8

func allowed(r rune) bool {
	return r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
}

func leads(r rune) bool { return r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' }

// IsName reports whether every model API accepts name as a function name: 1 to 64
// characters of A-Z a-z 0-9 _ -, the first a letter or _.
func IsName(name string) bool {
	if name == "" || len(name) > MaxName {
		return false
	}
	for i, r := range name {
		if !allowed(r) || i == 0 && !leads(r) {
			return false
		}
	}
	return true
}

// base is name with every other character made _, and a leading _ where the first is not a
// letter or _. Characters are runes, as Python's str iterates them.
func base(name string) string {
	var b strings.Builder
	first := true
	for _, r := range name {
		if first && !leads(r) {
			b.WriteByte('_')
		}
		first = false
		if allowed(r) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	if first {
		return "_"
	}
	return b.String()
}

func hashed(name, b string, attempt int) string {
	seed := name
	if attempt > 0 {
		seed = name + "#" + strconv.Itoa(attempt)
	}
	sum := sha256.Sum256([]byte(seed))
	h := hex.EncodeToString(sum[:])[:hashHex]
	return b[:min(len(b), MaxName-hashHex-1)] + "_" + h
}

// Names is a set of tool names rendered for the model APIs, with the way back. No two
// names share a rendering.
type Names struct {
	rendered map[string]string // tool name -> rendering
	names    map[string]string // rendering -> tool name
}

// MapNames renders a set of tool names: a name the APIs accept is kept; any other
// character becomes _, a name not starting with a letter or _ gets a leading _, and a
// rendering longer than 64 or shared by two names is cut and given eight hex digits of the
// SHA-256 of the full name (of the name and "#N" in the rare case that meets another).
func MapNames(names []string) *Names {
	unique := append([]string(nil), names...)
	sort.Strings(unique)
	unique = dedupe(unique)
	bases := make(map[string]string, len(unique))
	count := map[string]int{}
	for _, n := range unique {
		b := base(n)
		bases[n] = b
		count[b]++
	}
	m := &Names{rendered: make(map[string]string, len(unique)), names: make(map[string]string, len(unique))}
	var pending []string
	for _, n := range unique {
		if b := bases[n]; len(b) <= MaxName && count[b] == 1 {
			m.rendered[n], m.names[b] = b, n
		} else {
			pending = append(pending, n)
		}
	}
	for _, n := range pending {
		r := hashed(n, bases[n], 0)
		for attempt := 1; ; attempt++ {
			if _, taken := m.names[r]; !taken {
				break
			}
			r = hashed(n, bases[n], attempt)
		}
		m.rendered[n], m.names[r] = r, n
	}
	return m
}

func dedupe(sorted []string) []string {
	out := sorted[:0]
	for i, s := range sorted {
		if i == 0 || s != sorted[i-1] {
			out = append(out, s)
		}
	}
	return out
}

// Render returns the rendering of a tool name of the set, or "" for a name not in it.
func (m *Names) Render(name string) string { return m.rendered[name] }

// Tool returns the tool a rendering stands for, and whether it stands for one.
func (m *Names) Tool(rendered string) (string, bool) {
	n, ok := m.names[rendered]
	return n, ok
}

// Len is the number of names in the set.
func (m *Names) Len() int { return len(m.rendered) }
