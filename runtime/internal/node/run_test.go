package node_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolnode/toolnode/runtime/internal/node"
	"github.com/toolnode/toolnode/runtime/internal/testkit"
)

// runProgram calls toolnode.run with code and returns its result's structured content and
// whether it is an error.
func runProgram(t *testing.T, call func(json.RawMessage) (json.RawMessage, error), code string) (map[string]any, bool) {
	t.Helper()
	args, _ := json.Marshal(map[string]any{"name": "toolnode.run", "arguments": map[string]any{"code": code}})
	res, err := call(args)
	if err != nil {
		t.Fatalf("toolnode.run: %v", err)
	}
	var r struct {
		IsError           bool           `json:"isError"`
		StructuredContent map[string]any `json:"structuredContent"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		t.Fatalf("toolnode.run answered %s: %v", res, err)
	}
	return r.StructuredContent, r.IsError
}

// A program calls tools of two bundles, as functions and by name, and gets the search's
// signatures; its value is its last line.
func TestRunCallsToolsOfBundles(t *testing.T) {
	t.Parallel()
	n, _ := startMemory(t, node.Config{}, testkit.Memory{Name: "a"}, testkit.Memory{Name: "b"})
	s := &testkit.Session{}
	call := func(p json.RawMessage) (json.RawMessage, error) { return n.Call(context.Background(), s, p) }
	out, isErr := runProgram(t, call, `
x = a.echo(text="one")
y = call("b.echo", {"text": "two"})
hits = search("echo", limit=3)
[x, y, hits[0]["signature"]]`)
	if isErr {
		t.Fatalf("the run failed: %v", out)
	}
	got, _ := json.Marshal(out["value"])
	if want := `["a:one","b:two","a.echo(text: str = None)"]`; string(got) != want {
		t.Errorf("value %s, want %s", got, want)
	}
	if out["calls"] != float64(3) {
		t.Errorf("calls %v, want 3", out["calls"])
	}
	out, isErr = runProgram(t, call, `a.echo(text=1)`)
	if !isErr || !strings.Contains(out["error"].(map[string]any)["message"].(string), "line 1:") {
		t.Errorf("a wrong literal argument: %v", out)
	}
}
