package cli_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/toolnode/toolnode/runtime/internal/testkit/nodekit"
)

// runTSClient runs the official TypeScript MCP client (installed by make under build/npm)
// and decodes what it printed.
func runTSClient(t *testing.T, env []string, args ...string) (tools []string, text string) {
	t.Helper()
	npm, _ := filepath.Abs("../../../build/npm")
	if _, err := os.Stat(filepath.Join(npm, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		t.Skipf("the TypeScript MCP SDK is not installed in %s (make test installs it): %v", npm, err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skipf("node is not on PATH: %v", err)
	}
	cmd := exec.Command(node, append([]string{"../../../testdata/ts-client/client.mjs"}, args...)...)
	cmd.Env = append(append(os.Environ(), "TOOLNODE_NPM="+npm), env...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("TypeScript client: %v\n%s", err, out)
	}
	var got struct {
		Tools  []string
		Result struct {
			Content []struct{ Text string }
			IsError bool
		}
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("TypeScript client printed %q: %v", out, err)
	}
	if got.Result.IsError || len(got.Result.Content) == 0 {
		t.Fatalf("call failed: %s", out)
	}
	return got.Tools, got.Result.Content[0].Text
}

func TestTypeScriptClient(t *testing.T) {
	dir := nodekit.Examples(t, "go", "python")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Run("http", func(t *testing.T) {
		tools, text := runTSClient(t, nil, "http", httpNode(t, dir), "python.greet", `{"name":"TS"}`)
		if !slices.Contains(tools, "go.greet") || text != "Hello, TS!" {
			t.Errorf("tools %v, answer %q", tools, text)
		}
	})
	t.Run("stdio", func(t *testing.T) {
		// The node as the client's child process, over its stdin and stdout, with the default
		// flags: the TypeScript SDK's client is not known to take dotted names, so it is shown
		// the underscore form, and calls by it.
		tools, text := runTSClient(t, []string{mainEnv + "=1"}, "stdio", "go_greet", `{"name":"TS"}`, exe, "serve", "--bundles", dir)
		if !slices.Contains(tools, "python_greet") || slices.Contains(tools, "python.greet") || text != "Hello, TS!" {
			t.Errorf("tools %v, answer %q", tools, text)
		}
	})
}
