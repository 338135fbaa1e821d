package cli

import (
	"path/filepath"
	"testing"
)

func TestSplitBundlePath(t *testing.T) {
	tests := []struct {
		arg, dir, name, parent string
	}{
		{"demo", ".", "demo", "."},
		{"path/to/demo", ".", "demo", "path/to"},
		{"path/to/demo/", "base", "demo", "base/path/to"},
		{"/abs/demo", "base", "demo", "/abs"},
		{"./demo", "base", "demo", "base"},
	}
	for _, tt := range tests {
		name, parent := splitBundlePath(tt.arg, tt.dir)
		if name != tt.name || parent != filepath.FromSlash(tt.parent) {
			t.Errorf("splitBundlePath(%q, %q) = %q, %q; want %q, %q", tt.arg, tt.dir, name, parent, tt.name, tt.parent)
		}
	}
}
