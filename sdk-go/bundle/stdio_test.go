package bundle_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/toolnode/toolnode/sdk-go/bundle"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// stdioChildEnv makes the test binary run runStdioChild instead of the tests.
const stdioChildEnv = "BUNDLE_TEST_STDIO_CHILD"

// runStdioChild is a bundle whose tool prints to stdout in every way a careless one can.
func runStdioChild() int {
	s := bundle.NewServer(bundle.Options{Name: "child"})
	err := s.AddTool(mcp.Tool{Name: "noisy"}, func(ctx context.Context, _ *bundle.Call) (*mcp.CallToolResult, error) {
		fmt.Println("stray print")
		cmd := exec.CommandContext(ctx, "sh", "-c", "echo from a child process")
		cmd.Stdout = os.Stdout
		if err := cmd.Run(); err != nil {
			return nil, err
		}
		return mcp.TextResult("quiet"), nil
	})
	if err == nil {
		err = s.ServeStdio(context.Background())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("stdout is back")
	return 0
}

func TestServeStdio(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows: ServeStdio does not move stray prints out of stdout (stdio_other.go)")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), stdioChildEnv+"=1")
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"noisy"}}` + "\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("bundle: %v\nstderr:\n%s", err, stderr.String())
	}

	lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
	var got []any
	for _, line := range lines[:len(lines)-1] {
		var m any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Errorf("stdout line is not JSON: %q", line)
		}
		got = append(got, m)
	}
	diff(t, []any{
		decode(t, `{"jsonrpc":"2.0","id":1,"result":{}}`),
		decode(t, `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"quiet"}]}}`),
	}, got)
	if last := lines[len(lines)-1]; last != "stdout is back" {
		t.Errorf("after ServeStdio, stdout got %q, want %q", last, "stdout is back")
	}
	for _, want := range []string{"stray print\n", "from a child process\n"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr %q does not hold %q", stderr.String(), want)
		}
	}
}
