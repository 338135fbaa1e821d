package access

import (
	"fmt"
	"strings"
)

// A Pattern is a glob over exposed tool names:
//
//   - * matches any run of characters, dots included, so "meos.*" matches "meos.speed"
//     and "go.*" matches "go.node-lamp.on"; "*.status" matches "node-lamp.status";
//   - ? matches exactly one character;
//   - every other character matches itself, case-sensitively, as tool names are.
//
// A Pattern without * or ? names one tool. Patterns hold only the characters of tool
// names (A-Z a-z 0-9 _ - .) and the two wildcards.
type Pattern string

// maxPattern bounds a pattern's length: a tool name has at most 128 characters, and a
// pattern longer than twice that is a mistake, not a need.
const maxPattern = 256

// ParsePattern checks a pattern written in an access file or given to --pin, and says how
// to fix it when it is bad.
func ParsePattern(s string) (Pattern, error) {
	if s == "" {
		return "", fmt.Errorf("empty pattern; write \"*\" for every tool")
	}
	if len(s) > maxPattern {
		return "", fmt.Errorf("pattern is %d characters long, at most %d", len(s), maxPattern)
	}
	for _, r := range s {
		switch {
		case r == '*' || r == '?' || r == '_' || r == '-' || r == '.':
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		default:
			return "", fmt.Errorf("pattern %q holds %q, which no tool name has; names use A-Z a-z 0-9 _ - . and patterns add * (any run of characters, dots included) and ? (one character)", s, r)
		}
	}
	return Pattern(s), nil
}

// Match reports whether name matches the pattern. It backtracks only to the last *, so it
// runs in time proportional to len(pattern) * len(name) at worst.
func (p Pattern) Match(name string) bool {
	if !strings.ContainsAny(string(p), "*?") {
		return string(p) == name
	}
	pi, ni := 0, 0
	star, mark := -1, 0
	for ni < len(name) {
		switch {
		case pi < len(p) && p[pi] == '*': // a wildcard even where the name has a '*'
			star, mark = pi, ni
			pi++
		case pi < len(p) && (p[pi] == '?' || p[pi] == name[ni]):
			pi++
			ni++
		case star >= 0:
			pi = star + 1
			mark++
			ni = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}
