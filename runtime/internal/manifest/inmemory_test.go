package manifest

import (
	"context"
	"io"
	"strings"
	"testing"
)

// An in-memory bundle is checked as a bundle.json is, but has no command, URL or sandbox:
// it runs in the node's process.
func TestParseInMemory(t *testing.T) {
	serve := func(context.Context, io.Reader, io.Writer) error { return nil }
	m, err := ParseInMemory([]byte(`{"name":"a","instances":2}`), serve)
	if err != nil || m.InMemory == nil || m.Pool() != 2 || m.Timeouts.Start != DefaultStartTimeout || m.Isolation != IsolationShared {
		t.Fatalf("%+v %v", m, err)
	}
	for _, bad := range []string{`{"name":"a","command":["./x"]}`, `{"name":"a","url":"https://h/mcp"}`, `{"name":"a","sandbox":{"pids":1}}`} {
		if _, err := ParseInMemory([]byte(bad), serve); err == nil || !strings.Contains(err.Error(), "in-memory") {
			t.Errorf("%s: %v, want it refused as in-memory", bad, err)
		}
	}
	if _, err := ParseInMemory([]byte(`{"name":"a"}`), nil); err == nil {
		t.Error("an in-memory bundle without its server was taken")
	}
	if _, err := Parse([]byte(`{"name":"a"}`), t.TempDir()); err == nil {
		t.Error("a bundle.json without a command was taken")
	}
}
