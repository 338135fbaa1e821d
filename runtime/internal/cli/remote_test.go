package cli_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnode/toolnode/runtime/internal/reload"
	"github.com/toolnode/toolnode/runtime/internal/serve"
	"github.com/toolnode/toolnode/runtime/internal/testkit"
	"github.com/toolnode/toolnode/runtime/internal/testkit/nodekit"
	"github.com/toolnode/toolnode/runtime/internal/upstream/upstreamtest"
)

// freePort returns a loopback port nothing listens on.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
}

// everythingHTTP is @modelcontextprotocol/server-everything running in its Streamable
// HTTP mode.
type everythingHTTP struct {
	cmd  *exec.Cmd
	done chan struct{}
}

func startEverythingHTTP(t *testing.T, npm, port string) *everythingHTTP {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skipf("node is not on PATH: %v", err)
	}
	cmd := exec.Command(node, filepath.Join(npm, "node_modules/@modelcontextprotocol/server-everything/dist/index.js"), "streamableHttp")
	cmd.Env = append(os.Environ(), "PORT="+port)
	ownGroup(cmd)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	e := &everythingHTTP{cmd: cmd, done: make(chan struct{})}
	listening := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		once := sync.OnceFunc(func() { close(listening) })
		for sc.Scan() {
			if strings.Contains(sc.Text(), "listening on port") {
				once()
			}
		}
		cmd.Wait()
		close(e.done)
	}()
	t.Cleanup(e.stop)
	select {
	case <-listening:
	case <-e.done:
		t.Fatal("server-everything exited before listening")
	case <-time.After(30 * time.Second):
		t.Fatal("server-everything did not start listening within 30s")
	}
	return e
}

func (e *everythingHTTP) stop() {
	killGroup(e.cmd.Process.Pid)
	<-e.done
}

// TestRemoteBundlesBesideLocalOnesInBothEras runs one node with four bundles: the official
// server-everything in its Streamable HTTP mode (a session, behind a proxy that wants a
// bearer token the node takes from its environment) and over stdio, and a server built
// with the official Go SDK over stdio and over stateless HTTP. An official Go SDK client
// lists and calls the tools of each through the node; the Go SDK bundles tell which era
// the node spoke to them; then the remote server goes away and comes back, and the node
// connects again and serves its tools.
func TestRemoteBundlesBesideLocalOnesInBothEras(t *testing.T) {
	npm, _ := filepath.Abs("../../../build/npm")
	if _, err := os.Stat(filepath.Join(npm, "node_modules", "@modelcontextprotocol", "server-everything")); err != nil {
		t.Skipf("the npm test peers are not installed in %s (make test installs them): %v", npm, err)
	}
	port := freePort(t)
	everything := startEverythingHTTP(t, npm, port)

	const token = "tok-7f3a9c"
	var authorized, refused atomic.Int64
	backend, _ := url.Parse("http://127.0.0.1:" + port)
	proxy := httputil.NewSingleHostReverseProxy(backend)
	proxy.FlushInterval = -1 // SSE goes through at once
	gate := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			refused.Add(1)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		authorized.Add(1)
		proxy.ServeHTTP(w, r)
	}))
	// Closed after the node has stopped (cleanups run last to first), so that no stream
	// of the node holds them open.
	t.Cleanup(gate.Close)
	recorder := upstreamtest.Recorder(nil)
	stateless := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return recorder },
		&mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(stateless.Close)

	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg := map[string]any{"mcpServers": map[string]any{
		"remote": map[string]any{"type": "http", "url": gate.URL + "/mcp",
			"headers": map[string]string{"Authorization": "Bearer ${REMOTE_TOKEN}"}},
		"everything": map[string]any{"command": "npx", "args": []string{"--no-install", "@modelcontextprotocol/server-everything"}, "cwd": npm},
		"gosdk":      map[string]any{"command": exe, "env": map[string]string{upstreamtest.ChildEnv: "all"}},
	}}
	cfgPath := filepath.Join(t.TempDir(), "mcp.json")
	b, _ := json.Marshal(cfg)
	os.WriteFile(cfgPath, b, 0o644)
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "gosdkhttp"), 0o755)
	os.WriteFile(filepath.Join(dir, "gosdkhttp", "bundle.json"), []byte(`{"name": "gosdkhttp", "url": "`+stateless.URL+`"}`), 0o644)

	t.Setenv("REMOTE_TOKEN", token) // in the node's environment
	n := nodekit.Start(t, serve.Config{Source: reload.Source{Config: cfgPath, Dirs: []string{dir}}, Stdio: true})
	s := n.Client(t, "", nil)
	tools := nodekit.Tools(t, s)
	for _, want := range []string{"remote.echo", "everything.echo", "gosdk.received", "gosdkhttp.received"} {
		if tools[want] == nil {
			t.Fatalf("%s missing; have %v", want, nodekit.Names(tools))
		}
	}
	for _, name := range []string{"remote.echo", "everything.echo"} {
		if got, isErr := nodekit.CallText(t, s, name, map[string]any{"message": "via " + name}); isErr || !strings.Contains(got, "via "+name) {
			t.Errorf("%s: %q (isError %v)", name, got, isErr)
		}
	}
	for _, name := range []string{"gosdk.received", "gosdkhttp.received"} {
		got := received(t, s, name)
		if got.Version != "2026-07-28" || slices.Contains(got.Methods, "initialize") || !slices.Contains(got.Methods, "server/discover") {
			t.Errorf("%s was not spoken to statelessly: it received %v, the call as revision %q", name, got.Methods, got.Version)
		}
	}
	if refused.Load() != 0 || authorized.Load() == 0 {
		t.Errorf("the proxy refused %d requests and let %d through; every one should carry the token", refused.Load(), authorized.Load())
	}
	st := nodekit.Status(t, s)
	for name, era := range map[string]string{"remote": "initialize", "everything": "initialize", "gosdk": "stateless", "gosdkhttp": "stateless"} {
		if e, _ := st[name]["era"].(string); !strings.HasPrefix(e, era) {
			t.Errorf("status of %s: era %q, want %s", name, e, era)
		}
	}
	if st["remote"]["url"] != gate.URL+"/mcp" || len(st["remote"]["pids"].([]any)) != 0 {
		t.Errorf("status of the remote bundle: %v", st["remote"])
	}
	if strings.Contains(n.Logs.String(), token) {
		t.Error("the node logged the token")
	}

	t.Run("a remote server that goes away and comes back is connected again", func(t *testing.T) {
		everything.stop()
		testkit.Eventually(t, 15*time.Second, func() string {
			if st := nodekit.Status(t, s)["remote"]; st["state"] == "ready" {
				return fmt.Sprintf("still ready after its server went away: %v", st)
			}
			return ""
		})
		// The server stays away a while, which is part of what is tested: the node's
		// attempts fail meanwhile, each waiting longer.
		time.Sleep(time.Second)
		startEverythingHTTP(t, npm, port)
		testkit.Eventually(t, 20*time.Second, func() string {
			res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "remote.echo", Arguments: map[string]any{"message": "back"}})
			if err != nil || res.IsError {
				return fmt.Sprintf("remote.echo: %v %v", err, res)
			}
			return ""
		})
		st := nodekit.Status(t, s)["remote"]
		if st["state"] != "ready" || st["restarts"].(float64) < 2 {
			t.Errorf("status after reconnecting: %v", st)
		}
		if !strings.Contains(n.Logs.String(), "remote bundle disconnected; connecting again") {
			t.Error("the disconnection was not logged")
		}
		if tools := nodekit.Tools(t, s); tools["remote.echo"] == nil {
			t.Errorf("remote.echo is not listed after reconnecting: %v", nodekit.Names(tools))
		}
	})
}

func received(t *testing.T, s *mcp.ClientSession, tool string) upstreamtest.Received {
	t.Helper()
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: tool})
	if err != nil || res.IsError {
		t.Fatalf("%s: %v %v", tool, err, res)
	}
	b, _ := json.Marshal(res.StructuredContent)
	var got upstreamtest.Received
	json.Unmarshal(b, &got)
	return got
}

// TestCheckSpeaksEachEraAndReachesRemoteBundles: toolnode check passes an official Go SDK
// bundle spoken to statelessly, over stdio and at a url, and says so.
func TestCheckSpeaksEachEraAndReachesRemoteBundles(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return upstreamtest.Recorder(nil) },
		&mcp.StreamableHTTPOptions{Stateless: true}))
	defer srv.Close()
	for name, m := range map[string]map[string]any{
		"local":  {"name": "local", "command": []string{exe}, "env": map[string]string{upstreamtest.ChildEnv: "all"}},
		"remote": {"name": "remote", "url": srv.URL},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			b, _ := json.Marshal(m)
			os.WriteFile(filepath.Join(dir, "bundle.json"), b, 0o644)
			code, out, _ := runCLI("check", dir)
			if code != 0 || !strings.Contains(out, "protocol 2026-07-28 (stateless") || !strings.Contains(out, "ping       ok") {
				t.Errorf("exit %d, want 0, stateless, and the ping answered:\n%s", code, out)
			}
		})
	}
}
