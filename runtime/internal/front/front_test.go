package front_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/toolnode/toolnode/runtime/internal/front"
	"github.com/toolnode/toolnode/runtime/internal/front/httpfront"
	"github.com/toolnode/toolnode/runtime/internal/front/stdiofront"
	"github.com/toolnode/toolnode/runtime/internal/node"
	"github.com/toolnode/toolnode/runtime/internal/reload"
	"github.com/toolnode/toolnode/runtime/internal/serve"
	"github.com/toolnode/toolnode/runtime/internal/testkit"
	"github.com/toolnode/toolnode/runtime/internal/testkit/nodekit"
	"github.com/toolnode/toolnode/runtime/internal/upstream/upstreamtest"
)

// The test binary doubles as a bundle: testkit's fake bundle, upstreamtest's recorder built
// with the official Go SDK, or one built with our Go SDK that traces its calls.
func TestMain(m *testing.M) {
	testkit.RunIfChild()
	upstreamtest.RunIfChild()
	if os.Getenv(tracedBundleEnv) == "1" {
		if err := tracedBundle(); err != nil {
			fmt.Fprintln(os.Stderr, "traced bundle:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m, testkit.KeptAliveConns()...)
}

// startServer serves the in-memory bundle "a", of the initialize era.
func startServer(t testing.TB) *front.Server {
	t.Helper()
	return serveMemory(t, front.Options{}, testkit.Memory{Name: "a", Session: true})
}

// serveMemory serves the in-memory bundles ms with the front's options opts, and returns
// the server a test drives its fronts over.
func serveMemory(t testing.TB, opts front.Options, ms ...testkit.Memory) *front.Server {
	t.Helper()
	n := nodekit.StartMemory(t, serve.Config{Node: node.Config{Supervision: node.Supervision{PingEvery: -1}}, Front: opts}, ms...)
	n.Ready(t)
	return n.Server()
}

// serveBundles serves the bundles of dir with the front's options opts, their processes
// started, and returns the server a test drives its fronts over.
func serveBundles(t testing.TB, dir string, opts front.Options) *front.Server {
	t.Helper()
	n := nodekit.Start(t, serve.Config{Source: reload.Source{Dirs: []string{dir}}, Node: node.Config{Supervision: node.Supervision{PingEvery: -1}},
		Front: opts})
	n.Ready(t)
	return n.Server()
}

// The stdio front answers every request it received before its input ended, in either era.
func TestStdioAnswersBothErasUpToEOF(t *testing.T) {
	srv := startServer(t)
	in := strings.NewReader(strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a.echo","arguments":{"text":"old"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"a.echo","arguments":{"text":"new"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
		`not json`,
	}, "\n") + "\n")
	r, w := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- stdiofront.Serve(context.Background(), srv, in, w)
		w.Close()
	}()
	answers := map[string]string{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		var m struct{ ID json.RawMessage }
		json.Unmarshal(sc.Bytes(), &m)
		answers[string(m.ID)] = sc.Text()
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{"1": `"protocolVersion":"2025-11-25"`, "2": `a:old`, "3": `"resultType":"complete"`,
		"4": `"supportedVersions"`, "null": `-32700`} {
		if !strings.Contains(answers[id], want) {
			t.Errorf("answer to %s: %q, want it to hold %s", id, answers[id], want)
		}
	}
}

// The HTTP front serves a session and a stateless request side by side.
func TestHTTPServesBothEras(t *testing.T) {
	url := startHTTP(t)
	post := func(body string, hdr map[string]string) (*http.Response, string) { return postTo(t, url, body, hdr) }
	resp, body := post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, nil)
	sid := resp.Header.Get(httpfront.HeaderSessionID)
	if sid == "" || !strings.Contains(body, "2025-11-25") {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	_, body = post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a.echo","arguments":{"text":"s"}}}`,
		map[string]string{httpfront.HeaderSessionID: sid, httpfront.HeaderProtocolVersion: "2025-11-25"})
	if !strings.Contains(body, "a:s") {
		t.Errorf("session call: %s", body)
	}
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	hdr := map[string]string{httpfront.HeaderProtocolVersion: "2026-07-28", httpfront.HeaderMethod: "tools/call", httpfront.HeaderName: "a.echo"}
	resp, body = post(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"a.echo","arguments":{"text":"x"},`+meta+`}}`, hdr)
	if resp.StatusCode != 200 || !strings.Contains(body, "a:x") || resp.Header.Get(httpfront.HeaderSessionID) != "" {
		t.Errorf("stateless call: %d %s", resp.StatusCode, body)
	}
	hdr[httpfront.HeaderName] = "a.talk"
	resp, body = post(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"a.echo","arguments":{"text":"x"},`+meta+`}}`, hdr)
	if resp.StatusCode != 400 || !strings.Contains(body, "-32020") {
		t.Errorf("a mismatched Mcp-Name: %d %s", resp.StatusCode, body)
	}
}

// A stateless call gets its answer as plain JSON unless it asked for what comes before an
// answer (progress, log messages): then it gets an event stream carrying those first.
func TestHTTPStatelessCallStreamsWhatItAskedFor(t *testing.T) {
	url := startHTTP(t)
	hdr := map[string]string{httpfront.HeaderProtocolVersion: "2026-07-28", httpfront.HeaderMethod: "tools/call", httpfront.HeaderName: "a.talk"}
	for _, tc := range []struct {
		name, meta, contentType string
		want, not               []string
	}{
		{"asking for nothing", ``, "application/json", []string{`a:x`}, []string{"notifications/"}},
		{"asking for progress and log messages", `,"progressToken":"p1","io.modelcontextprotocol/logLevel":"info"`, "text/event-stream",
			[]string{`"method":"notifications/progress"`, `"progressToken":"p1"`, `"method":"notifications/message"`, `a:x`}, nil},
	} {
		resp, b := postTo(t, url, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"a.talk","arguments":{"text":"x"},`+
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}`+tc.meta+`}}}`, hdr)
		if got := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || !strings.HasPrefix(got, tc.contentType) {
			t.Errorf("%s: %d %s, want 200 %s: %s", tc.name, resp.StatusCode, got, tc.contentType, b)
		}
		for _, w := range tc.want {
			if !strings.Contains(b, w) {
				t.Errorf("%s: the answer lacks %s: %s", tc.name, w, b)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(b, n) {
				t.Errorf("%s: the answer holds %s: %s", tc.name, n, b)
			}
		}
	}
}

// startHTTP serves the in-memory bundle "a", of the initialize era, over the HTTP front,
// on loopback, until the test ends, and returns the front's URL.
func startHTTP(t *testing.T) string {
	t.Helper()
	return nodekit.StartMemory(t, serve.Config{HTTP: nodekit.Loopback}, testkit.Memory{Name: "a", Session: true}).URL
}

// postTo posts one JSON-RPC message to the front at url as an MCP client does, with the
// headers hdr, and returns the response and its body.
func postTo(t *testing.T, url string, body string, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	// A bound on every request: one the front leaves unanswered fails the test here.
	client := &http.Client{Timeout: 20 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}
