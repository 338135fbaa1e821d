package app

import (
	"fmt"

	"github.com/toolnode/toolnode/sdk-go/app/provider"
)

// Filter returns what allow and deny patterns let through, as the node's access files: *
// matches any run of characters (dots included), ? one character, anything else itself.
// No allow pattern allows every tool.
func Filter(allow, deny []string) (func(string) bool, error) {
	if len(allow) == 0 {
		allow = []string{"*"}
	}
	for _, list := range [][]string{allow, deny} {
		for _, p := range list {
			if err := checkPattern(p); err != nil {
				return nil, err
			}
		}
	}
	return func(name string) bool { return matchAny(allow, name) && !matchAny(deny, name) }, nil
}

func checkPattern(p string) error {
	if p == "" {
		return fmt.Errorf(`app: empty pattern; write "*" for every tool`)
	}
	if len(p) > 256 {
		return fmt.Errorf("app: pattern is %d characters long, at most 256", len(p))
	}
	for _, r := range p {
		if !(r == '*' || r == '?' || r == '_' || r == '-' || r == '.' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return fmt.Errorf("app: pattern %q holds %q, which no tool name has; names use A-Z a-z 0-9 _ - . and patterns add * and ?", p, r)
		}
	}
	return nil
}

func matchAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if provider.Match(p, name) {
			return true
		}
	}
	return false
}
