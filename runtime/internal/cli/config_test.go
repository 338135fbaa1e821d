package cli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/reload"
	"github.com/toolnode/toolnode/runtime/internal/serve"
	"github.com/toolnode/toolnode/runtime/internal/testkit"
	"github.com/toolnode/toolnode/runtime/internal/testkit/nodekit"
)

// TestRealServersFromAClaudeDesktopConfig runs two MCP servers nobody here wrote, started
// with npx as Claude Desktop would, through an mcpServers file, and checks that nothing of
// them is left once the node stops.
func TestRealServersFromAClaudeDesktopConfig(t *testing.T) {
	npm, _ := filepath.Abs("../../../build/npm")
	if _, err := os.Stat(filepath.Join(npm, "node_modules", "@modelcontextprotocol", "server-everything")); err != nil {
		t.Skipf("the npm test peers are not installed in %s (make test installs them): %v", npm, err)
	}
	files := t.TempDir()
	os.WriteFile(filepath.Join(files, "hello.txt"), []byte("hi"), 0o644)
	k, v := testkit.Mark(t)
	cfg := map[string]any{"mcpServers": map[string]any{
		"everything": map[string]any{"command": "npx", "args": []string{"--no-install", "@modelcontextprotocol/server-everything"},
			"cwd": npm, "env": map[string]string{k: v}},
		"filesystem": map[string]any{"command": "npx", "args": []string{"--no-install", "@modelcontextprotocol/server-filesystem", files},
			"cwd": npm, "env": map[string]string{k: v}},
	}}
	path := filepath.Join(t.TempDir(), "claude_desktop_config.json")
	b, _ := json.Marshal(cfg)
	os.WriteFile(path, b, 0o644)

	n := nodekit.Start(t, serve.Config{Source: reload.Source{Config: path}, Stdio: true})
	s := n.Client(t, "", nil)
	tools := nodekit.Tools(t, s)
	for _, want := range []string{"everything.echo", "filesystem.list_directory", "filesystem.read_text_file"} {
		if tools[want] == nil {
			t.Errorf("%s missing; have %v", want, nodekit.Names(tools))
		}
	}
	if got, isErr := nodekit.CallText(t, s, "everything.echo", map[string]any{"message": "through the node"}); isErr || !strings.Contains(got, "through the node") {
		t.Errorf("everything.echo: %q (isError %v)", got, isErr)
	}
	if got, isErr := nodekit.CallText(t, s, "filesystem.list_directory", map[string]any{"path": files}); isErr || !strings.Contains(got, "hello.txt") {
		t.Errorf("filesystem.list_directory: %q (isError %v)", got, isErr)
	}
	if running := len(testkit.Marked(k, v)); running < 2 {
		t.Fatalf("found %d marked processes, want the two servers at least", running)
	}
	n.Stop(t)
	testkit.Eventually(t, 5*time.Second, func() string {
		if left := testkit.Marked(k, v); len(left) > 0 {
			return fmt.Sprintf("processes of the npx-started servers left after the node exited: %v", left)
		}
		return ""
	})
}
