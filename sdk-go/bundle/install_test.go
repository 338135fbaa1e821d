package bundle_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestUsableFromAnotherModule does what sdk-go/README.md tells a bundle author: a module of
// its own requires the SDK module (from this checkout, through a replace directive standing
// in for the published version), go mod tidy fetches what it needs, and a bundle builds there
// and answers a call. The bundle's module graph holds the SDK and what it needs, never the
// node's module.
func TestUsableFromAnotherModule(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command; not with -short")
	}
	_, here, _, _ := runtime.Caller(0)
	sdk := filepath.Join(filepath.Dir(here), "..")
	dir := t.TempDir()
	goCmd := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	// The commands of the README's "Getting it", with its placeholder made this checkout.
	readme, err := os.ReadFile(filepath.Join(sdk, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"go mod init example.com/hello",
		"go mod edit -replace github.com/toolnode/toolnode/sdk-go=/path/to/toolnode/sdk-go \\\n        -require github.com/toolnode/toolnode/sdk-go@v0.0.0-00010101000000-000000000000",
		"go mod tidy"} {
		if !strings.Contains(string(readme), line) {
			t.Errorf("sdk-go/README.md does not say %q, which this test runs", line)
		}
	}
	goCmd("mod", "init", "example.com/hello")
	goCmd("mod", "edit", "-replace", "github.com/toolnode/toolnode/sdk-go="+sdk,
		"-require", "github.com/toolnode/toolnode/sdk-go@v0.0.0-00010101000000-000000000000")
	src := `package main

import (
	"context"
	"log"

	"github.com/toolnode/toolnode/sdk-go/bundle"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

func main() {
	s := bundle.NewServer(bundle.Options{Name: "hello", Version: "1.0.0"})
	if err := s.AddTool(mcp.Tool{Name: "hi"}, func(context.Context, *bundle.Call) (*mcp.CallToolResult, error) {
		return mcp.TextResult("hi from outside"), nil
	}); err != nil {
		log.Fatal(err)
	}
	if err := s.ServeStdio(context.Background()); err != nil {
		log.Fatal(err)
	}
}
`
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	goCmd("mod", "tidy")
	if graph := goCmd("mod", "graph"); strings.Contains(graph, "github.com/toolnode/toolnode@") {
		t.Errorf("the bundle's module graph holds the node's module:\n%s", graph)
	}
	goCmd("build", "-o", "hello", ".")
	cmd := exec.Command(filepath.Join(dir, "hello"))
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hi"}}` + "\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi from outside"}]}}`; strings.TrimSpace(string(out)) != want {
		t.Errorf("got %s, want %s", out, want)
	}
}
