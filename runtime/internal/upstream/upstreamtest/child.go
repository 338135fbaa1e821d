package upstreamtest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ChildEnv, set in a test binary's environment, makes RunIfChild serve Recorder on stdin and
// stdout: its value is the revisions it serves, comma-separated, or "all" for every one the
// SDK knows.
const ChildEnv = "UPSTREAMTEST_RECORDER"

// RunIfChild serves Recorder on stdin and stdout and exits, when the test binary runs as
// that bundle (ChildEnv is set); otherwise it returns at once. Call it first in TestMain.
func RunIfChild() {
	v, ok := os.LookupEnv(ChildEnv)
	if !ok {
		return
	}
	var versions []string
	if v != "all" {
		versions = strings.Split(v, ",")
	}
	if err := Recorder(versions).Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(0)
}

// Write puts a bundle named name in dir/<name> whose process is the running test binary
// serving Recorder in both eras, and returns that folder.
func Write(t testing.TB, dir, name string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	folder := filepath.Join(dir, name)
	m, _ := json.Marshal(map[string]any{"name": name, "command": []string{exe}, "env": map[string]string{ChildEnv: "all"}})
	if err := os.MkdirAll(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(folder, "bundle.json"), m, 0o644); err != nil {
		t.Fatal(err)
	}
	return folder
}
