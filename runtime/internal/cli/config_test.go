package cli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRealServersFromAClaudeDesktopConfig runs two MCP servers nobody here wrote, started
// with npx as Claude Desktop would, through --config, and checks that nothing of them is
// left once the node exits.
func TestRealServersFromAClaudeDesktopConfig(t *testing.T) {
	npm, _ := filepath.Abs("../../../build/npm")
	if _, err := os.Stat(filepath.Join(npm, "node_modules", "@modelcontextprotocol", "server-everything")); err != nil {
		t.Skipf("the npm test peers are not installed in %s (make test installs them): %v", npm, err)
	}
	files := t.TempDir()
	os.WriteFile(filepath.Join(files, "hello.txt"), []byte("hi"), 0o644)
	mark := fmt.Sprintf("%d", time.Now().UnixNano())
	cfg := map[string]any{"mcpServers": map[string]any{
		"everything": map[string]any{"command": "npx", "args": []string{"--no-install", "@modelcontextprotocol/server-everything"},
			"cwd": npm, "env": map[string]string{"TOOLNODE_MARK": mark}},
		"filesystem": map[string]any{"command": "npx", "args": []string{"--no-install", "@modelcontextprotocol/server-filesystem", files},
			"cwd": npm, "env": map[string]string{"TOOLNODE_MARK": mark}},
	}}
	path := filepath.Join(t.TempDir(), "claude_desktop_config.json")
	b, _ := json.Marshal(cfg)
	os.WriteFile(path, b, 0o644)

	run := startNode(t, nil, nil, "--config", path)
	tools := toolNames(t, run.session)
	for _, want := range []string{"everything.echo", "filesystem.list_directory", "filesystem.read_text_file"} {
		if tools[want] == nil {
			t.Errorf("%s missing; have %v", want, keys(tools))
		}
	}
	if got, isErr := callText(t, run.session, "everything.echo", map[string]any{"message": "through the node"}); isErr || !strings.Contains(got, "through the node") {
		t.Errorf("everything.echo: %q (isError %v)", got, isErr)
	}
	if got, isErr := callText(t, run.session, "filesystem.list_directory", map[string]any{"path": files}); isErr || !strings.Contains(got, "hello.txt") {
		t.Errorf("filesystem.list_directory: %q (isError %v)", got, isErr)
	}
	if n := len(processesWithMark(t, "TOOLNODE_MARK="+mark)); n < 2 {
		t.Fatalf("found %d marked processes, want the two servers at least", n)
	}
	run.session.Close()
	if !exitedWithin(run.cmd.Process.Pid, 20*time.Second) {
		t.Fatal("node did not exit")
	}
	eventually(t, 5*time.Second, func() string {
		if left := processesWithMark(t, "TOOLNODE_MARK="+mark); len(left) > 0 {
			return fmt.Sprintf("processes of the npx-started servers left after the node exited: %v", left)
		}
		return ""
	})
}
