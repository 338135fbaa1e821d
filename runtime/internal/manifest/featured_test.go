package manifest

import (
	"strings"
	"testing"
)

func TestFeatured(t *testing.T) {
	m, err := Parse([]byte(`{"name": "x", "command": ["./run"], "featured": ["greet", "tpoint_*", "node-lamp.on"]}`), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for tool, want := range map[string]bool{"greet": true, "tpoint_length": true, "node-lamp.on": true, "greeting": false, "speed": false} {
		if got := m.IsFeatured(tool); got != want {
			t.Errorf("IsFeatured(%q) = %v, want %v", tool, got, want)
		}
	}
	for _, bad := range []struct{ featured, want string }{
		{`[""]`, "empty entry"},
		{`["a?"]`, "only *"},
		{`"*"`, "featured"},
	} {
		_, err := Parse([]byte(`{"name": "x", "command": ["./run"], "featured": `+bad.featured+`}`), t.TempDir())
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("featured %s: %v; want an error saying %q", bad.featured, err, bad.want)
		}
	}
}
