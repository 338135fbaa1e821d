package access

import (
	"fmt"

	"github.com/toolnode/toolnode/sdk-go/app/provider"
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

// Match reports whether name matches the pattern (provider.Match, which the application
// libraries share).
func (p Pattern) Match(name string) bool { return provider.Match(string(p), name) }
