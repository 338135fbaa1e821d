package manifest

import (
	"fmt"
	"path"
	"strings"
)

// checkFeatured checks the "featured" key: each entry a tool name or a pattern.
func checkFeatured(featured []string) error {
	for _, pattern := range featured {
		if pattern == "" {
			return fmt.Errorf("featured: an empty entry names no tool; use \"*\" for every tool")
		}
		if strings.ContainsAny(pattern, "[]\\?") {
			return fmt.Errorf("featured: %q: a pattern knows only * (any run of characters)", pattern)
		}
		if _, err := path.Match(pattern, ""); err != nil {
			return fmt.Errorf("featured: %q: %w", pattern, err)
		}
	}
	return nil
}

// IsFeatured reports whether the "featured" key names the bundle's tool named tool (its
// own name, as the bundle lists it), exactly or by a pattern.
func (m *Manifest) IsFeatured(tool string) bool {
	for _, pattern := range m.Featured {
		if ok, _ := path.Match(pattern, tool); ok {
			return true
		}
	}
	return false
}
