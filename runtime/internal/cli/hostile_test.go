package cli_test

import (
	"github.com/toolnode/toolnode/runtime/internal/testkit"

	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Hostile clients and bundles: each test is one attack and the outcome it must have.

// Malformed client messages get the JSON-RPC error the spec names, with their id, and never
// reach the bundle; the session goes on.
func TestMalformedClientMessagesNeverReachTheBundle(t *testing.T) {
	dir := t.TempDir()
	record := filepath.Join(t.TempDir(), "received")
	testkit.Write(t, dir, testkit.Fake{Name: "rec", Env: map[string]string{"FAKE_RECORD": record}})
	n := startRawNode(t, "--bundles", dir)
	out := bufio.NewScanner(n.stdout)
	out.Buffer(nil, 1<<20)
	send := func(line string) map[string]any {
		t.Helper()
		if _, err := io.WriteString(n.stdin, line+"\n"); err != nil {
			t.Fatal(err)
		}
		if !out.Scan() {
			t.Fatalf("no answer to %.80s", line)
		}
		var m map[string]any
		if err := json.Unmarshal(out.Bytes(), &m); err != nil {
			t.Fatalf("answer not JSON: %s", out.Bytes())
		}
		return m
	}
	send(initLine)
	io.WriteString(n.stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	deep := strings.Repeat(`{"a":`, 5000) + "1" + strings.Repeat("}", 5000)
	cases := []struct {
		name, line string
		id         any
		code       float64
	}{
		{"invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"rec.echo\",\"arguments\":{\"text\":\"MARK1\xff\"}}}", 1.0, -32700},
		{"lone surrogate", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"rec.echo","arguments":{"text":"MARK2\ud800"}}}`, 2.0, -32700},
		{"nested 5000 deep", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"rec.echo","arguments":{"text":"MARK3","x":` + deep + `}}}`, 3.0, -32600},
		{"two _meta members", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"_meta":{"progressToken":"a"},"name":"rec.echo","arguments":{"text":"MARK4"},"_meta":{"progressToken":"b"}}}`, 4.0, -32600},
		{"two names", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"rec.echo","name":"rec.env","arguments":{"text":"MARK5"}}}`, 5.0, -32600},
		{"not JSON", `MARK6 is not JSON`, nil, -32700},
		{"fractional id", `{"jsonrpc":"2.0","id":6.5,"method":"tools/call","params":{"name":"rec.echo","arguments":{"text":"MARK7"}}}`, nil, -32600},
	}
	for _, c := range cases {
		m := send(c.line)
		e, _ := m["error"].(map[string]any)
		if e == nil || e["code"] != c.code || m["id"] != c.id {
			t.Errorf("%s: answered %v, want error %v for id %v", c.name, m, c.code, c.id)
		}
	}
	if m := send(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"rec.echo","arguments":{"text":"fine"}}}`); m["result"] == nil {
		t.Fatalf("the session did not go on: %v", m)
	}
	got, _ := os.ReadFile(record)
	for i := 1; i <= 7; i++ {
		if strings.Contains(string(got), fmt.Sprintf("MARK%d", i)) {
			t.Errorf("MARK%d reached the bundle", i)
		}
	}
	if !strings.Contains(string(got), "fine") {
		t.Error("the bundle's record does not work: the good call is missing")
	}
}

// A bundle cannot send progress into another bundle's call, neither with a token it
// guesses nor with one it was told.
func TestABundleCannotSendProgressIntoAnotherCall(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "victim"})
	testkit.Write(t, dir, testkit.Fake{Name: "evil"})
	var mu sync.Mutex
	var progress []string
	var logged []string
	opts := &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			progress = append(progress, r.Params.Message)
			mu.Unlock()
		},
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			mu.Lock()
			logged = append(logged, fmt.Sprint(r.Params.Data))
			mu.Unlock()
		},
	}
	run := startNodeAt(t, "2025-11-25", opts, nil, "--bundles", dir)
	if err := run.session.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	held := make(chan error, 1)
	go func() {
		_, err := run.session.CallTool(context.Background(), &mcp.CallToolParams{Name: "victim.hold", Arguments: map[string]any{"ms": 1500},
			Meta: mcp.Meta{"progressToken": "mine"}})
		held <- err
	}()
	var token string
	eventually(t, 10*time.Second, func() string {
		mu.Lock()
		defer mu.Unlock()
		for _, l := range logged {
			if strings.HasPrefix(l, `"tn-`) {
				token, _ = strconv.Unquote(l)
				return ""
			}
		}
		return "the victim's bundle has not told its token"
	})
	if text, _ := callText(t, run.session, "evil.spoof", map[string]any{"token": token}); text != "spoofed" {
		t.Fatalf("spoof: %q", text)
	}
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range progress {
		if p == "spoofed" {
			t.Fatalf("another bundle's progress reached the victim's call (token %s)", token)
		}
	}
}

// A log message that names no call, sent while two clients have calls in flight, reaches
// neither: the node keeps it in its own log.
func TestAnUnattributedMessageReachesNoClient(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "loud"})
	h := startHTTPNodeRun(t, "--bundles", dir)
	var mu sync.Mutex
	heard := map[string]int{}
	client := func(name string) *mcp.ClientSession {
		return connectHTTPAt(t, h.url, &mcp.ClientOptions{LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			mu.Lock()
			heard[name+":"+fmt.Sprint(r.Params.Data)]++
			mu.Unlock()
		}}, "2025-11-25")
	}
	a, b := client("a"), client("b")
	for _, s := range []*mcp.ClientSession{a, b} {
		if err := s.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); callText(t, a, "loud.sleep", map[string]any{"ms": 800}) }()
	time.Sleep(200 * time.Millisecond)
	go func() { defer wg.Done(); callText(t, b, "loud.shout", map[string]any{"ms": 300}) }()
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if heard["a:shouted"]+heard["b:shouted"] > 0 {
		t.Errorf("a message no call owns reached clients: %v", heard)
	}
	eventually(t, 5*time.Second, func() string {
		if !strings.Contains(h.logs.String(), "no single client's call can be told to own") {
			return "not in the node's log"
		}
		return ""
	})
}

// Sessions past the bound are refused with a clear error, and many sessions keep the node's
// memory bounded. (The bound of one client's sessions is raised out of the way: every
// session here comes from one address; httpfront's tests hold that bound.)
func TestSessionsAreBounded(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "s"})
	h := startHTTPNodeRun(t, "--bundles", dir, "--max-sessions", "200", "--max-client-sessions", "2000")
	before := testkit.RSSKiB(t, h.pid)
	refused := 0
	var last string
	tr := &http.Transport{MaxIdleConnsPerHost: 8}
	hc := &http.Client{Transport: tr}
	defer tr.CloseIdleConnections()
	for i := range 2000 {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"flood","version":"1"}}}`, i)
		req, _ := http.NewRequest(http.MethodPost, h.url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusServiceUnavailable {
			refused++
			last = string(b)
		}
	}
	if refused != 1800 {
		t.Errorf("%d of 2000 sessions refused, want 1800 past the bound of 200", refused)
	}
	if !strings.Contains(last, "limit") {
		t.Errorf("the refusal does not say why: %s", last)
	}
	if grew := testkit.RSSKiB(t, h.pid) - before; grew > 64<<10 {
		t.Errorf("2000 initialize requests grew the node by %d KiB", grew)
	}
}

// A batch of 150,000 calls is refused whole, and the node's memory stays bounded.
func TestAHugeBatchIsRefused(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "b"})
	h := startHTTPNodeRun(t, "--bundles", dir)
	c := &rawHTTP{t: t, url: h.url}
	c.initialize("2025-03-26", `{}`)
	before := testkit.RSSKiB(t, h.pid)
	var sb strings.Builder
	sb.WriteByte('[')
	for i := range 150000 {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i)
	}
	sb.WriteByte(']')
	resp := c.post(sb.String(), "application/json, text/event-stream")
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "over the limit") {
		t.Errorf("the batch got %d %s", resp.StatusCode, b)
	}
	if grew := testkit.RSSKiB(t, h.pid) - before; grew > 200<<10 {
		t.Errorf("a 150,000-call batch grew the node by %d KiB", grew)
	}
}

// Idle kept-alive connections and requests whose body never finishes are closed on time.
func TestSlowAndIdleConnectionsAreClosed(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "c"})
	h := startHTTPNodeRun(t, "--bundles", dir, "--conn-idle", "1s", "--read-timeout", "1s")
	addr, _ := url.Parse(h.url)
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

// A browser at an allowed origin gets through its CORS preflight and can read the session
// header; a Host header that is not the node's is refused on a loopback listener.
func TestBrowsersAndHosts(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "w"})
	const origin = "https://inspector.example.com"
	h := startHTTPNodeRun(t, "--bundles", dir, "--allow-origin", origin)
	do := func(method string, hdr map[string]string, body string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(method, h.url, strings.NewReader(body))
		for k, v := range hdr {
			if k == "Host" {
				req.Host = v
				continue
			}
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	pre := do(http.MethodOptions, map[string]string{"Origin": origin, "Access-Control-Request-Method": "POST",
		"Access-Control-Request-Headers": "content-type, mcp-session-id, mcp-protocol-version"}, "")
	if pre.StatusCode/100 != 2 || pre.Header.Get("Access-Control-Allow-Origin") != origin ||
		!strings.Contains(pre.Header.Get("Access-Control-Allow-Headers"), "Mcp-Session-Id") ||
		!strings.Contains(pre.Header.Get("Access-Control-Allow-Methods"), "POST") {
		t.Errorf("preflight: %d %v", pre.StatusCode, pre.Header)
	}
	init := do(http.MethodPost, map[string]string{"Origin": origin, "Content-Type": "application/json", "Accept": "application/json, text/event-stream"},
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"web","version":"1"}}}`)
	if init.StatusCode != 200 || init.Header.Get("Access-Control-Allow-Origin") != origin ||
		!strings.Contains(init.Header.Get("Access-Control-Expose-Headers"), "Mcp-Session-Id") {
		t.Errorf("initialize from the browser: %d %v", init.StatusCode, init.Header)
	}
	if r := do(http.MethodOptions, map[string]string{"Origin": "https://evil.example.com", "Access-Control-Request-Method": "POST"}, ""); r.StatusCode != http.StatusForbidden {
		t.Errorf("preflight from another origin: %d", r.StatusCode)
	}
	rebound := do(http.MethodPost, map[string]string{"Host": "evil.example.com:80", "Content-Type": "application/json", "Accept": "application/json"},
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)
	if rebound.StatusCode != http.StatusForbidden {
		t.Errorf("a foreign Host header got %d, want 403", rebound.StatusCode)
	}
	if r := do(http.MethodPost, map[string]string{"Host": "localhost:1", "Content-Type": "application/json", "Accept": "application/json"},
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`); r.StatusCode == http.StatusForbidden {
		t.Errorf("a localhost Host header was refused")
	}
}

// A bundle with "isolation": "client" runs a process per client: each session's calls go to
// its own process, a message the server does not tag reaches its one client, and the
// process stops with the session.
func TestIsolatedBundlesRunAProcessPerClient(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "iso", Extra: `"isolation": "client"`})
	h := startHTTPNodeRun(t, "--bundles", dir)
	var mu sync.Mutex
	heard := map[string]int{}
	client := func(name string) *mcp.ClientSession {
		s := connectHTTPAt(t, h.url, &mcp.ClientOptions{LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			mu.Lock()
			heard[name+":"+fmt.Sprint(r.Params.Data)]++
			mu.Unlock()
		}}, "2025-11-25")
		if err := s.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
			t.Fatal(err)
		}
		return s
	}
	a, b := client("a"), client("b")
	pidA, _ := callText(t, a, "iso.pid", nil)
	pidB, _ := callText(t, b, "iso.pid", nil)
	if again, _ := callText(t, a, "iso.pid", nil); pidA == pidB || again != pidA {
		t.Fatalf("pids: a %s then %s, b %s; want one process per client", pidA, again, pidB)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); callText(t, a, "iso.shout", map[string]any{"ms": 300}) }()
	go func() { defer wg.Done(); callText(t, b, "iso.sleep", map[string]any{"ms": 300}) }()
	wg.Wait()
	eventually(t, 5*time.Second, func() string {
		mu.Lock()
		defer mu.Unlock()
		if heard["a:shouted"] != 1 || heard["b:shouted"] != 0 {
			return fmt.Sprintf("heard %v, want the untagged message at a only", heard)
		}
		return ""
	})
	a.Close()
	n, _ := strconv.Atoi(pidA)
	if !exitedWithin(n, 10*time.Second) {
		t.Errorf("the process of a closed session (pid %d) still runs", n)
	}
}

// A client whose calls crash a bundle again and again is refused that bundle; another
// client's calls go on being served.
func TestTheClientThatCrashesABundleIsRefused(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "frail"})
	h := startHTTPNodeRun(t, "--bundles", dir)
	bad := connectHTTPAt(t, h.url, nil, "2025-11-25")
	good := connectHTTPAt(t, h.url, nil, "2025-11-25")
	for i := range 3 {
		res, err := callWithin(t, bad, 20*time.Second, "frail.crash", nil)
		if err == nil && !res.IsError {
			t.Fatalf("crash %d answered", i)
		}
		// The bundle comes back for everyone.
		eventually(t, 15*time.Second, func() string {
			if res, err := callWithin(t, good, 10*time.Second, "frail.echo", map[string]any{"text": "x"}); err != nil || res.IsError {
				return "the bundle is not back"
			}
			return ""
		})
	}
	res, err := callWithin(t, bad, 10*time.Second, "frail.echo", map[string]any{"text": "again"})
	if err == nil && !res.IsError {
		t.Fatalf("the crashing client is still served: %q", resultText(res))
	}
	if res != nil && !strings.Contains(resultText(res), "crashed bundle") {
		t.Errorf("the refusal does not say why: %q", resultText(res))
	}
	if text, _ := callText(t, good, "frail.echo", map[string]any{"text": "fine"}); text != "frail:fine" {
		t.Errorf("the other client got %q", text)
	}
}
