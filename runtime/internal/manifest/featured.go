package manifest

import "path"

// checkFeatured checks the "featured" key: each entry a tool name or a pattern.
func checkFeatured(featured []string) error {
	for _, pattern := range featured {
		if err := checkPattern("featured", "entry", pattern); err != nil {
			return err
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
