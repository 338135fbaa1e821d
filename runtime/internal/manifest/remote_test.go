package manifest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRemoteManifests(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		json    string
		wantErr string // substring; "" means valid
	}{
		{"url", `{"name": "r", "url": "https://mcp.example.com/mcp"}`, ""},
		{"url with headers", `{"name": "r", "url": "http://127.0.0.1:8080/mcp", "headers": {"Authorization": "Bearer ${API_TOKEN}", "X-Team": "a-${TEAM}-b"}}`, ""},
		{"both", `{"name": "r", "url": "https://h/mcp", "command": ["./run"]}`, `both "command" and "url"`},
		{"neither", `{"name": "r"}`, `or the "url" of a remote MCP server`},
		{"not http", `{"name": "r", "url": "ftp://h/mcp"}`, "give an http:// or https:// address"},
		{"no host", `{"name": "r", "url": "https:///mcp"}`, "give an http:// or https:// address"},
		{"credentials in the address", `{"name": "r", "url": "https://u:pw@h/mcp"}`, `put credentials in "headers"`},
		{"headers without url", `{"name": "r", "command": ["./run"], "headers": {"A": "b"}}`, `"headers" are sent to a "url"`},
		{"env with url", `{"name": "r", "url": "https://h/mcp", "env": {"A": "b"}}`, `a "url" bundle has none`},
		{"bad header name", `{"name": "r", "url": "https://h/mcp", "headers": {"A B": "x"}}`, `header name "A B"`},
		{"unclosed variable", `{"name": "r", "url": "https://h/mcp", "headers": {"A": "${TOKEN"}}`, `without its closing`},
		{"bad variable name", `{"name": "r", "url": "https://h/mcp", "headers": {"A": "${1X}"}}`, `a variable name is`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Parse([]byte(tt.json), dir)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
			case err == nil && !m.Remote():
				t.Fatal("a url manifest is not remote")
			}
		})
	}
}

func TestRequestHeadersTakeTheNodesEnvironment(t *testing.T) {
	m, err := Parse([]byte(`{"name": "r", "url": "https://h/mcp", "headers": {"Authorization": "Bearer ${API_TOKEN}", "X-Pair": "${A}${B}", "X-Plain": "v"}}`), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"API_TOKEN": "secret-1", "A": "x", "B": "y"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	h, err := m.RequestHeaders(lookup)
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"Authorization": "Bearer secret-1", "X-Pair": "xy", "X-Plain": "v"} {
		if got := h.Get(k); got != want {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
	delete(env, "API_TOKEN")
	_, err = m.RequestHeaders(lookup)
	if err == nil || !strings.Contains(err.Error(), "API_TOKEN is not set") || !strings.Contains(err.Error(), `"Authorization"`) {
		t.Errorf("unset variable: %v", err)
	}
	env["API_TOKEN"] = "a\r\nX-Evil: 1"
	if _, err = m.RequestHeaders(lookup); err == nil || strings.Contains(err.Error(), "Evil") {
		t.Errorf("a value with a line break: %v (the value must not be in the error)", err)
	}
}

func TestLoadConfigWithRemoteServers(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "mcp.json")
	os.WriteFile(p, []byte(`{"servers": {
		"gh": {"type": "http", "url": "https://api.example.com/mcp", "headers": {"Authorization": "Bearer ${GH_TOKEN}"}},
		"plain": {"url": "http://127.0.0.1:9/mcp"},
		"local": {"command": "npx", "args": ["x"]}}}`), 0o644)
	ms, notes, err := LoadConfig(p)
	if err != nil || len(notes) != 0 {
		t.Fatal(err, notes)
	}
	if len(ms) != 3 || ms[0].Name != "gh" || !ms[0].Remote() || ms[0].Headers["Authorization"] != "Bearer ${GH_TOKEN}" ||
		ms[1].Name != "local" || ms[1].Remote() || ms[2].Name != "plain" || ms[2].URL != "http://127.0.0.1:9/mcp" {
		t.Errorf("unexpected manifests: %+v %+v %+v", ms[0], ms[1], ms[2])
	}
	for body, want := range map[string]string{
		`{"mcpServers": {"s": {"type": "sse", "url": "https://h/sse"}}}`:                  `type "sse"`,
		`{"mcpServers": {"s": {"type": "http", "command": "x", "url": "https://h/mcp"}}}`: `both "command" and "url"`,
		`{"mcpServers": {"s": {"type": "http"}}}`:                                         `missing "command"`,
		`{"mcpServers": {"s": {"url": "https://h/mcp", "isolation": "client"}}}`:          `a "url" bundle has none`,
	} {
		os.WriteFile(p, []byte(body), 0o644)
		ms, notes, err := LoadConfig(p)
		if err != nil || len(ms) != 0 || len(notes) != 1 || !strings.Contains(notes[0].Reason, want) {
			t.Errorf("%s: %v %v %v, want it skipped with a reason containing %q", body, ms, notes, err, want)
		}
	}
}
