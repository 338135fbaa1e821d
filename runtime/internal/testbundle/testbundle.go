// Package testbundle is a small MCP server for the in-process tests of the node's packages:
// a test binary re-runs itself as the bundle (TestMain calls RunIfChild), so the tests
// supervise real processes over real pipes without building anything.
package testbundle

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/toolnode/toolnode/runtime/internal/manifest"
)

// childEnv marks a test binary run as the bundle; its value is the bundle's name.
const childEnv = "TOOLNODE_TESTBUNDLE"

// statelessEnv, set to 1, makes the bundle speak MCP 2026-07-28 (WriteStateless).
const statelessEnv = "TOOLNODE_TESTBUNDLE_STATELESS"

// RunIfChild serves MCP on stdin and stdout and exits when the test binary runs as the
// bundle; otherwise it returns at once. Call it first in TestMain.
func RunIfChild() {
	name := os.Getenv(childEnv)
	if name == "" {
		return
	}
	Serve(os.Stdin, os.Stdout, name, os.Getenv(statelessEnv) == "1")
	os.Exit(0)
}

// Write puts a bundle named name in dir/name whose process is the running test binary,
// speaking MCP of the initialize era.
func Write(t testing.TB, dir, name string) { write(t, dir, name, map[string]string{childEnv: name}) }

// WriteStateless is Write for a bundle that speaks MCP 2026-07-28 too: it answers
// server/discover, so the node speaks to it without a session.
func WriteStateless(t testing.TB, dir, name string) {
	write(t, dir, name, map[string]string{childEnv: name, statelessEnv: "1"})
}

func write(t testing.TB, dir, name string, env map[string]string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	m, _ := json.Marshal(map[string]any{"name": name, "command": []string{exe}, "env": env})
	if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name, "bundle.json"), m, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Manifests loads the manifests of the bundles named names in dir, as Write and
// WriteStateless put them there.
func Manifests(t testing.TB, dir string, names ...string) []*manifest.Manifest {
	t.Helper()
	ms := make([]*manifest.Manifest, 0, len(names))
	for _, name := range names {
		m, err := manifest.Load(filepath.Join(dir, name, "bundle.json"))
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	return ms
}

// Serve answers initialize, tools/list and tools/call of two tools: echo, which returns
// "<name>:<text>", and talk, which first sends a log message about the call (tagged with
// its id, as toolnode's SDKs do) and progress under the call's token. A stateless bundle
// also answers server/discover offering 2026-07-28, types its results as that revision
// wants, and sends talk's log message only when the request's _meta names a log level (any
// level: the message says nothing of its own); it reads nothing else of a request's _meta.
func Serve(in io.Reader, out io.Writer, name string, stateless bool) {
	var mu sync.Mutex
	send := func(v any) {
		b, _ := json.Marshal(v)
		mu.Lock()
		defer mu.Unlock()
		out.Write(append(b, '\n'))
	}
	r := bufio.NewReader(in)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return
		}
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name      string `json:"name"`
				Arguments struct {
					Text string `json:"text"`
				} `json:"arguments"`
				Meta struct {
					ProgressToken json.RawMessage `json:"progressToken"`
					LogLevel      string          `json:"io.modelcontextprotocol/logLevel"`
				} `json:"_meta"`
			} `json:"params"`
		}
		if json.Unmarshal(line, &req) != nil || req.ID == nil || req.Method == "" {
			continue
		}
		reply := func(result map[string]any) {
			if stateless {
				result["resultType"] = "complete"
			}
			send(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
		}
		switch req.Method {
		case "server/discover":
			if !stateless {
				send(map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": -32601, "message": "method not found"}})
				continue
			}
			reply(map[string]any{"supportedVersions": []string{"2026-07-28", "2025-11-25"},
				"capabilities": map[string]any{"tools": map[string]any{}, "logging": map[string]any{}},
				"_meta":        map[string]any{"io.modelcontextprotocol/serverInfo": map[string]any{"name": name, "version": "1"}}})
		case "initialize":
			reply(map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{"tools": map[string]any{}, "logging": map[string]any{}},
				"serverInfo": map[string]any{"name": name, "version": "1"}})
		case "tools/list":
			schema := map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}}
			reply(map[string]any{"tools": []any{
				map[string]any{"name": "echo", "inputSchema": schema},
				map[string]any{"name": "talk", "inputSchema": schema},
			}})
		case "tools/call":
			if req.Params.Name == "talk" {
				if !stateless || req.Params.Meta.LogLevel != "" {
					send(map[string]any{"jsonrpc": "2.0", "method": "notifications/message", "params": map[string]any{
						"level": "info", "data": req.Params.Arguments.Text, "_meta": map[string]any{"io.toolnode/request": req.ID}}})
				}
				if req.Params.Meta.ProgressToken != nil {
					send(map[string]any{"jsonrpc": "2.0", "method": "notifications/progress", "params": map[string]any{
						"progressToken": req.Params.Meta.ProgressToken, "progress": 1}})
				}
			}
			reply(map[string]any{"content": []any{map[string]any{"type": "text", "text": fmt.Sprintf("%s:%s", name, req.Params.Arguments.Text)}}})
		default:
			reply(map[string]any{})
		}
	}
}
