package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigWithARemoteServerStartsTheOthers: a Claude Desktop style file with a server of
// a transport the node does not speak (the old HTTP+SSE one) and server keys that are not
// bundle names. The SSE one is skipped with a warning naming it; the others run under
// names derived from their keys, logged.
func TestConfigWithARemoteServerStartsTheOthers(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	fakeEnv := func(name string) map[string]string {
		return map[string]string{"TOOLNODE_FAKE_BUNDLE": "1", "FAKE_NAME": name}
	}
	cfg := map[string]any{"mcpServers": map[string]any{
		"remote":       map[string]any{"type": "sse", "url": "https://mcp.example.com/sse"},
		"github.com/x": map[string]any{"command": exe, "env": fakeEnv("dotted")},
		"plain":        map[string]any{"command": exe, "env": fakeEnv("plain"), "isolation": "shared"},
	}}
	path := filepath.Join(t.TempDir(), "claude_desktop_config.json")
	b, _ := json.Marshal(cfg)
	os.WriteFile(path, b, 0o644)

	run := startNode(t, nil, nil, "--config", path)
	for tool, want := range map[string]string{"plain.echo": "plain:hi", "github-com-x.echo": "dotted:hi"} {
		if got, isErr := callText(t, run.session, tool, map[string]any{"text": "hi"}); isErr || got != want {
			t.Errorf("%s answered %q (isError %v), want %q", tool, got, isErr, want)
		}
	}
	logs := run.logs.String()
	for _, want := range []string{
		`config server skipped: server=remote why="type \"sse\": the node runs stdio servers and Streamable HTTP`,
		`config server renamed: server=github.com/x bundle=github-com-x`,
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("the log lacks %q", want)
		}
	}
}
