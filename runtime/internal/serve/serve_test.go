package serve_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/toolnode/toolnode/runtime/internal/front"
	"github.com/toolnode/toolnode/runtime/internal/reload"
	"github.com/toolnode/toolnode/runtime/internal/serve"
	"github.com/toolnode/toolnode/runtime/internal/testkit"
	"github.com/toolnode/toolnode/runtime/internal/testkit/nodekit"
)

// A node as serve.Run runs it, in process: bundles found in folders and files, watched and
// reloaded; the access file followed; the HTTP server's bounds; the metrics listener; the
// repository's examples served together.

func TestMain(m *testing.M) {
	testkit.RunIfChild()
	goleak.VerifyTestMain(m, testkit.KeptAliveConns()...)
}

func TestHotReload(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "keeper"})
	var changes nodekit.ListChanges
	opts := changes.Options()
	var progress testkit.Inbox
	opts.ProgressNotificationHandler = func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
		progress.Add(fmt.Sprint(r.Params.ProgressToken))
	}
	n := nodekit.Start(t, serve.Config{Source: reload.Source{Dirs: []string{dir}}, Watch: true, Stdio: true})
	s := n.Client(t, "", opts)

	t.Run("a new bundle directory starts and its tools appear", func(t *testing.T) {
		before := changes.Count()
		// Copy it in the way people do: the directory first, the manifest later, after
		// the node has reloaded for the empty directory already. The bundle "marker",
		// added with the empty directory, tells when that reload is done.
		os.MkdirAll(filepath.Join(dir, "newcomer"), 0o755)
		testkit.Write(t, dir, testkit.Fake{Name: "marker"})
		waitListed(t, s, "marker.echo", 5*time.Second)
		testkit.Write(t, dir, testkit.Fake{Name: "newcomer"})
		waitListed(t, s, "newcomer.echo", 5*time.Second)
		if got, _ := nodekit.CallText(t, s, "newcomer.echo", map[string]any{"text": "hi"}); got != "newcomer:hi" {
			t.Errorf("newcomer answered %q", got)
		}
		changes.WaitPast(t, before, 2*time.Second)
	})

	t.Run("an edited manifest restarts the bundle", func(t *testing.T) {
		testkit.Write(t, dir, testkit.Fake{Name: "newcomer", Env: map[string]string{"FAKE_NAME": "renamed"}})
		testkit.Eventually(t, 5*time.Second, func() string {
			if got, _ := nodekit.CallText(t, s, "newcomer.echo", map[string]any{"text": "x"}); got != "renamed:x" {
				return fmt.Sprintf("still answering %q", got)
			}
			return ""
		})
	})

	t.Run("a manifest that turns invalid leaves the bundle running", func(t *testing.T) {
		os.WriteFile(filepath.Join(dir, "newcomer", "bundle.json"), []byte(`{"name": "newcomer", "oops": `), 0o644)
		n.Logs.WaitFor(t, 5*time.Second, "manifest turned invalid; the bundle keeps running as it was")
		if got, _ := nodekit.CallText(t, s, "newcomer.echo", map[string]any{"text": "y"}); got != "renamed:y" {
			t.Errorf("after the manifest broke, newcomer answered %q", got)
		}
	})

	t.Run("a removed directory stops the bundle and fails its calls in flight", func(t *testing.T) {
		done := make(chan string, 1)
		go func() {
			params := &mcp.CallToolParams{Name: "newcomer.sleep", Arguments: map[string]any{"ms": 30000}}
			params.SetProgressToken("in flight") // the bundle reports progress once it has the call
			res, err := s.CallTool(context.Background(), params)
			if err != nil {
				done <- err.Error()
				return
			}
			done <- res.Content[0].(*mcp.TextContent).Text
		}()
		progress.Wait(t, 10*time.Second, 1, func(tok string) bool { return tok == "in flight" })
		os.RemoveAll(filepath.Join(dir, "newcomer"))
		select {
		case got := <-done:
			if !strings.Contains(got, `"newcomer"`) || !strings.Contains(got, "stopped") {
				t.Errorf("call in flight ended with %q, want an error saying the bundle stopped", got)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the call in flight to a removed bundle hung")
		}
		testkit.Eventually(t, 5*time.Second, func() string {
			if nodekit.Tools(t, s)["newcomer.echo"] != nil {
				return "newcomer.echo still listed"
			}
			return ""
		})
		if got, _ := nodekit.CallText(t, s, "keeper.echo", map[string]any{"text": "z"}); got != "keeper:z" {
			t.Errorf("the other bundle answered %q", got)
		}
	})
}

func TestReplacedExecutableRestartsTheBundle(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	script := func(comment string) {
		os.WriteFile(filepath.Join(dir, "scripted", "run"), []byte("#!/bin/sh\n# "+comment+"\nexec "+exe+"\n"), 0o755)
	}
	testkit.Write(t, dir, testkit.Fake{Name: "scripted", Command: []string{"./run"}})
	script("first")
	s := nodekit.Start(t, serve.Config{Source: reload.Source{Dirs: []string{dir}}, Watch: true, Stdio: true}).Client(t, "", nil)
	first, _ := nodekit.CallText(t, s, "scripted.pid", nil)
	// Replace the program the way a build does: write a new file and rename it over.
	tmp := filepath.Join(dir, "scripted", "run.new")
	os.WriteFile(tmp, []byte("#!/bin/sh\n# second build\nexec "+exe+"\n"), 0o755)
	os.Rename(tmp, filepath.Join(dir, "scripted", "run"))
	testkit.Eventually(t, 5*time.Second, func() string {
		if pid, _ := nodekit.CallText(t, s, "scripted.pid", nil); pid == first {
			return "still the first process"
		}
		return ""
	})
}

// waitListed waits until s lists the tool name; tools appear as the node reloads, and a
// client is told by notifications/tools/list_changed, which a listing here does not wait for.
func waitListed(t *testing.T, s *mcp.ClientSession, name string, within time.Duration) {
	t.Helper()
	testkit.Eventually(t, within, func() string {
		if nodekit.Tools(t, s)[name] == nil {
			return name + " not listed"
		}
		return ""
	})
}

// The stdio front serves the access file's client named with --client, and follows the file
// as it changes.
func TestStdioClientFollowsTheAccessFile(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "alpha"})
	accessFile := filepath.Join(t.TempDir(), "access.json")
	write := func(allow string) {
		os.WriteFile(accessFile, []byte(`{"clients": [{"name": "desk", "allow": [`+allow+`]}]}`), 0o600)
	}
	write(`"alpha.echo"`)
	// A client that follows list changes (a 2026 client listens for them, and caches lists
	// until told).
	changes := &nodekit.ListChanges{}
	s := nodekit.Start(t, serve.Config{Source: reload.Source{Dirs: []string{dir}}, Watch: true, Stdio: true,
		AccessFile: accessFile, Front: front.Options{Client: "desk"}}).Client(t, "", changes.Options())
	listed := func() []string { return nodekit.Names(nodekit.Tools(t, s)) }
	if got := strings.Join(listed(), " "); got != "alpha.echo toolnode.execute toolnode.search" {
		t.Fatalf("desk lists %s", got)
	}
	if _, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "alpha.pid"}); err == nil {
		t.Error("desk called alpha.pid")
	}
	write(`"alpha.*"`)
	changes.WaitPast(t, 0, 10*time.Second)
	testkit.Eventually(t, 10*time.Second, func() string {
		if got := len(listed()); got < 5 {
			return fmt.Sprintf("desk lists %d tools", got)
		}
		return ""
	})
	if text, _ := nodekit.CallText(t, s, "alpha.echo", map[string]any{"text": "ok"}); text != "alpha:ok" {
		t.Errorf("alpha.echo answered %q", text)
	}
}

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
		return map[string]string{"TOOLNODE_FAKE_BUNDLE": "1", "FAKE_NAME": name} // testkit's fake bundle
	}
	cfg := map[string]any{"mcpServers": map[string]any{
		"remote":       map[string]any{"type": "sse", "url": "https://mcp.example.com/sse"},
		"github.com/x": map[string]any{"command": exe, "env": fakeEnv("dotted")},
		"plain":        map[string]any{"command": exe, "env": fakeEnv("plain"), "isolation": "shared"},
	}}
	path := filepath.Join(t.TempDir(), "claude_desktop_config.json")
	b, _ := json.Marshal(cfg)
	os.WriteFile(path, b, 0o644)

	n := nodekit.Start(t, serve.Config{Source: reload.Source{Config: path}, Stdio: true})
	s := n.Client(t, "", nil)
	for tool, want := range map[string]string{"plain.echo": "plain:hi", "github-com-x.echo": "dotted:hi"} {
		if got, isErr := nodekit.CallText(t, s, tool, map[string]any{"text": "hi"}); isErr || got != want {
			t.Errorf("%s answered %q (isError %v), want %q", tool, got, isErr, want)
		}
	}
	logs := n.Logs.String()
	for _, want := range []string{
		`config server skipped: server=remote why="type \"sse\": the node runs stdio servers and Streamable HTTP`,
		`config server renamed: server=github.com/x bundle=github-com-x`,
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("the log lacks %q", want)
		}
	}
}

func TestBadManifestsAndSlowBundlesDoNotStopTheOthers(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "good"})
	testkit.Write(t, dir, testkit.Fake{Name: "slow", Env: map[string]string{"FAKE_DELAY_MS": "10000"}, Extra: `"timeouts": {"start": "300ms"}`})
	testkit.Write(t, dir, testkit.Fake{Name: "typo", Extra: `"comand": ["x"]`})
	testkit.Write(t, dir, testkit.Fake{Name: "escape", Command: []string{"./../../bin/sh"}})
	n := nodekit.Start(t, serve.Config{Source: reload.Source{Dirs: []string{dir, t.TempDir()}}, Stdio: true})
	s := n.Client(t, "", nil)
	if got, _ := nodekit.CallText(t, s, "good.echo", map[string]any{"text": "hi"}); got != "good:hi" {
		t.Errorf("good bundle answered %q", got)
	}
	tools := nodekit.Tools(t, s)
	if tools["slow.echo"] != nil {
		t.Errorf("a bundle past its start timeout was listed")
	}
	logs := n.Logs.String()
	for _, want := range []string{
		filepath.Join(dir, "typo", "bundle.json") + `: unknown key \"comand\"`,
		`command \"./../../bin/sh\" escapes the bundle directory`,
		"start timeout of 300ms",
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("log lacks %q", want)
		}
	}
}

// Idle kept-alive connections and requests whose body never finishes are closed on time.
func TestSlowAndIdleConnectionsAreClosed(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "c"})
	h := nodekit.Start(t, serve.Config{Source: reload.Source{Dirs: []string{dir}}, HTTP: nodekit.Loopback, ConnIdle: time.Second, ReadTimeout: time.Second})
	addr, _ := url.Parse(h.URL)
	closedWithin := func(conn net.Conn, d time.Duration) bool {
		conn.SetReadDeadline(time.Now().Add(d))
		_, err := io.Copy(io.Discard, conn)
		return err == nil // EOF: the node closed it; a timeout is an error
	}

	idle, err := net.Dial("tcp", addr.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	body := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	fmt.Fprintf(idle, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json\r\nContent-Length: %d\r\n\r\n%s",
		addr.Path, addr.Host, len(body), body)
	if !closedWithin(idle, 10*time.Second) {
		t.Error("an idle kept-alive connection was not closed")
	}

	slow, err := net.Dial("tcp", addr.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	fmt.Fprintf(slow, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{", addr.Path, addr.Host)
	if !closedWithin(slow, 10*time.Second) {
		t.Error("a request whose body never finishes was not closed")
	}
}

// The metrics listener refuses a Host that is not its own, as a DNS rebinding page sends.
func TestMetricsRefuseOtherHosts(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "m"})
	h := nodekit.Start(t, serve.Config{Source: reload.Source{Dirs: []string{dir}}, HTTP: nodekit.Loopback, Metrics: "127.0.0.1:0"})
	metricsURL := h.MetricsURL(t)
	for host, want := range map[string]int{"": http.StatusOK, "localhost": http.StatusOK, "rebind.example": http.StatusForbidden} {
		req, _ := http.NewRequest(http.MethodGet, metricsURL, nil)
		if host != "" {
			req.Host = host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Host %q: %s, want %d", host, resp.Status, want)
		}
	}
}

func TestExamplesInTwoLanguagesMerge(t *testing.T) {
	s := examplesNode(t, nodekit.Examples(t, "go", "python")).Client(t, "", nil)
	tools := nodekit.Tools(t, s)
	for _, want := range []string{"node-lamp.on", "node-lamp.status", "go.greet", "python.greet", "python.node-lamp.on"} {
		if tools[want] == nil {
			t.Errorf("tool %q missing; have %v", want, nodekit.Names(tools))
		}
	}
	for _, tc := range []struct{ tool, want string }{
		{"go.greet", "Hello, Ada!"},
		{"python.greet", "Hello, Ada!"},
	} {
		if got, isErr := nodekit.CallText(t, s, tc.tool, map[string]any{"name": "Ada"}); got != tc.want || isErr {
			t.Errorf("%s answered %q (isError %v), want %q", tc.tool, got, isErr, tc.want)
		}
	}
	// The Go example serves the seat: it sorts before python.
	if got, _ := nodekit.CallText(t, s, "node-lamp.status", nil); got != `{"on":false}` {
		t.Errorf("node-lamp.status before on: %q", got)
	}
	nodekit.CallText(t, s, "node-lamp.on", nil)
	if got, _ := nodekit.CallText(t, s, "node-lamp.status", nil); got != `{"on":true}` {
		t.Errorf("node-lamp.status after on: %q", got)
	}
	if got, _ := nodekit.CallText(t, s, "python.node-lamp.status", nil); got != `{"on":false}` {
		t.Errorf("the python lamp changed with the go one: %q", got)
	}
}

func TestAllThreeExamplesThroughTheNode(t *testing.T) {
	s := examplesNode(t, nodekit.Examples(t, "c", "go", "python")).Client(t, "", nil)
	tools := nodekit.Tools(t, s)
	for _, lang := range []string{"c", "go", "python"} {
		if got, _ := nodekit.CallText(t, s, lang+".greet", map[string]any{"name": lang}); got != "Hello, "+lang+"!" {
			t.Errorf("%s.greet answered %q", lang, got)
		}
	}
	// node-lamp.on is exposed once: c sorts first and serves it; the others keep theirs
	// under their prefixes.
	lamps := 0
	for tool, err := range s.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatalf("list tools: %v", err)
		}
		if tool.Name == "node-lamp.on" {
			lamps++
		}
	}
	if lamps != 1 || tools["go.node-lamp.on"] == nil || tools["python.node-lamp.on"] == nil {
		t.Errorf("node-lamp.on listed %d times; tools %v", lamps, nodekit.Names(tools))
	}
}

// What `make run` serves (the examples and, once built, the MEOS bundle) starts without a
// warning: a newcomer's first log says nothing is wrong. Seats the examples share are
// served as designed and logged as such.
func TestServingTheExamplesWarnsOfNothing(t *testing.T) {
	root := nodekit.Root(t)
	nodekit.Examples(t, "go", "c") // built, when they are not
	dirs := []string{filepath.Join(root, "examples")}
	if _, err := os.Stat(filepath.Join(root, "bundles", "meos", "build", "meos-bundle")); err == nil {
		dirs = append(dirs, filepath.Join(root, "bundles"))
	} else {
		t.Log("the MEOS bundle is not built (make bundles): serving the examples alone")
	}
	n := nodekit.Start(t, serve.Config{Source: reload.Source{Dirs: dirs}, Stdio: true})
	if tools := nodekit.Tools(t, n.Client(t, "", nil)); tools["c.greet"] == nil {
		t.Fatalf("the examples are not served: %v", nodekit.Names(tools))
	}
	for _, line := range strings.Split(n.Logs.String(), "\n") {
		if strings.Contains(line, "[WARN]") || strings.Contains(line, "[ERROR]") {
			t.Errorf("the node warned: %s", line)
		}
	}
}

// examplesNode serves the example bundles linked in dir over stdio.
func examplesNode(t *testing.T, dir string) *nodekit.Node {
	t.Helper()
	return nodekit.Start(t, serve.Config{Source: reload.Source{Dirs: []string{dir}}, Stdio: true})
}
