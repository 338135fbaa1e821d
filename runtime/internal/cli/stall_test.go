package cli_test

import (
	"github.com/toolnode/toolnode/runtime/internal/testkit"

	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Each test here is an attack on the message path: a peer that stops reading, answers
// wrongly or asks too much. The rule they check: no call stalls another, every call ends,
// nothing unwanted is kept.

// callWithin calls a tool and fails the test when no answer comes within d.
func callWithin(t *testing.T, s *mcp.ClientSession, d time.Duration, name string, args map[string]any) (*mcp.CallToolResult, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
}

func resultText(res *mcp.CallToolResult) string {
	var sb strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			sb.WriteString(tc.Text)
		}
	}
	return sb.String()
}

// A bundle stops reading its stdin while a large call is being written to it. Another
// bundle keeps answering the same client, a cancellation still gets through, the calls to
// the stuck bundle fail within their timeout naming it, and the missed ping restarts it.
func TestAStuckBundleStallsNobodyElse(t *testing.T) {
	for _, front := range []string{"stdio", "http"} {
		t.Run(front, func(t *testing.T) {
			dir := t.TempDir()
			testkit.Write(t, dir, testkit.Fake{Name: "stuck", Extra: `"timeouts": {"call": "2s", "call_max": "3s"}`})
			testkit.Write(t, dir, testkit.Fake{Name: "ok"})
			args := []string{"--bundles", dir, "--ping-every", "700ms"}
			var sess *mcp.ClientSession
			var logs *testkit.SyncBuffer
			if front == "stdio" {
				run := startNode(t, nil, nil, args...)
				sess, logs = run.session, run.logs
			} else {
				var u string
				u, logs = startHTTPNodeLogs(t, args...)
				sess = connectHTTP(t, u, nil)
			}
			first, _ := callText(t, sess, "stuck.pid", nil)

			go sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "stuck.freeze"})
			time.Sleep(200 * time.Millisecond) // the bundle reads freeze, then nothing more
			bigDone := make(chan *mcp.CallToolResult, 1)
			go func() {
				res, err := callWithin(t, sess, 60*time.Second, "stuck.echo", map[string]any{"text": strings.Repeat("s", 4<<20)})
				if err != nil {
					res = &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "error: " + err.Error()}}}
				}
				bigDone <- res
			}()

			// A call given up on by the client: its cancellation must get through.
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			_, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "stuck.pid"})
			cancel()
			if err == nil {
				t.Fatal("a call to the stuck bundle was answered")
			}
			for i := range 10 {
				res, err := callWithin(t, sess, 10*time.Second, "ok.echo", map[string]any{"text": fmt.Sprint(i)})
				if err != nil || resultText(res) != fmt.Sprintf("ok:%d", i) {
					t.Fatalf("the other bundle's call %d: %v %v", i, err, res)
				}
			}
			res := <-bigDone
			if !res.IsError || !strings.Contains(resultText(res), `"stuck"`) {
				t.Errorf("the large call to the stuck bundle ended with %q, want an error naming the bundle", resultText(res))
			}
			eventually(t, 20*time.Second, func() string {
				if !strings.Contains(logs.String(), "did not answer a ping") {
					return "no ping missed yet"
				}
				res, err := callWithin(t, sess, 10*time.Second, "stuck.pid", nil)
				if err != nil || res.IsError || resultText(res) == first {
					return "still the stuck process"
				}
				return ""
			})
		})
	}
}

// rawHTTP is a hand-driven Streamable HTTP client, for what the official clients never do.
type rawHTTP struct {
	t       *testing.T
	url     string
	session string
	version string
}

func (c *rawHTTP) post(body string, accept string) *http.Response {
	c.t.Helper()
	req, err := http.NewRequest(http.MethodPost, c.url, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", accept)
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
		req.Header.Set("Mcp-Protocol-Version", c.version)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	return resp
}

func (c *rawHTTP) initialize(version, caps string) {
	c.t.Helper()
	resp := c.post(fmt.Sprintf(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":%q,"capabilities":%s,"clientInfo":{"name":"raw","version":"1"}}}`, version, caps),
		"application/json, text/event-stream")
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	c.session, c.version = resp.Header.Get("Mcp-Session-Id"), version
	if c.session == "" {
		c.t.Fatalf("initialize: %s, no session", resp.Status)
	}
	resp = c.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, "application/json, text/event-stream")
	resp.Body.Close()
}

// call makes a tools/call and returns its result.
func (c *rawHTTP) call(id int, tool, args string) (json.RawMessage, error) {
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, tool, args)
	req, err := http.NewRequest(http.MethodPost, c.url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Mcp-Session-Id", c.session)
	req.Header.Set("Mcp-Protocol-Version", c.version)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out struct {
		Result json.RawMessage `json:"result"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.Result == nil {
		return nil, fmt.Errorf("call %d: %s, no result (%v)", id, resp.Status, err)
	}
	return out.Result, nil
}

// An HTTP client opens its GET stream and never reads it, while its calls make a bundle
// send it log messages. Another client's calls to the same bundle are answered throughout,
// the bundle is not killed by its health ping, and the unread stream is closed at the bound.
func TestAnHTTPClientThatNeverReadsItsStreamStallsNobody(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "talk"})
	u, logs := startHTTPNodeLogs(t, "--bundles", dir, "--ping-every", "500ms", "--max-queue", "2MiB")
	victim := connectHTTP(t, u, nil)
	pid, _ := callText(t, victim, "talk.pid", nil)

	attacker := &rawHTTP{t: t, url: u}
	attacker.initialize("2025-11-25", `{}`)
	// The GET stream, opened and never read.
	addr, _ := url.Parse(u)
	conn, err := net.Dial("tcp", addr.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\nMcp-Session-Id: %s\r\nMcp-Protocol-Version: 2025-11-25\r\n\r\n",
		addr.Path, addr.Host, attacker.session)
	time.Sleep(200 * time.Millisecond)

	// JSON-only calls: what they cause goes to the GET stream. 40 MB of log messages.
	floodDone := make(chan string, 1)
	go func() {
		resp := attacker.post(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"talk.flood","arguments":{"n":400,"bytes":100000}}}`, "application/json")
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		floodDone <- string(b)
	}()
	for i := range 20 {
		res, err := callWithin(t, victim, 10*time.Second, "talk.echo", map[string]any{"text": fmt.Sprint(i)})
		if err != nil || resultText(res) != fmt.Sprintf("talk:%d", i) {
			t.Fatalf("the other client's call %d: %v %v", i, err, res)
		}
		time.Sleep(50 * time.Millisecond)
	}
	select {
	case out := <-floodDone:
		if !strings.Contains(out, "flooded from "+pid) {
			t.Errorf("the flooding call ended with %.200s", out)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the flooding call never ended")
	}
	if again, _ := callText(t, victim, "talk.pid", nil); again != pid {
		t.Errorf("the bundle was restarted (pid %s, then %s)", pid, again)
	}
	if strings.Contains(logs.String(), "did not answer a ping") {
		t.Error("a healthy bundle was killed by its ping")
	}
	if !strings.Contains(logs.String(), "closing an event stream the client does not read") {
		t.Error("the unread stream was not closed at the bound")
	}
}

// rawNode runs `toolnode serve` over stdio with pipes the test drives by hand.
type rawNode struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.ReadCloser
	logs   *testkit.SyncBuffer
	exited chan struct{}
}

func startRawNode(t *testing.T, args ...string) *rawNode {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, append([]string{"serve"}, args...)...)
	cmd.Env = append(os.Environ(), "TOOLNODE_TEST_MAIN=1")
	n := &rawNode{cmd: cmd, logs: &testkit.SyncBuffer{}, exited: make(chan struct{})}
	cmd.Stderr = n.logs
	if n.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if n.stdout, err = cmd.StdoutPipe(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		cmd.Wait()
		close(n.exited)
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-n.exited:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
		}
		if t.Failed() {
			t.Logf("node log:\n%s", n.logs)
		}
	})
	return n
}

const initLine = `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// A stdio client that stops reading its answers: the node holds what it owes the client up
// to the bound, then ends the session; no healthy bundle is killed meanwhile.
func TestAStdioClientThatNeverReadsKillsNoBundle(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "big"})
	n := startRawNode(t, "--bundles", dir, "--ping-every", "300ms", "--max-queue", "4MiB")
	fmt.Fprintln(n.stdin, initLine)
	fmt.Fprintln(n.stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for i := range 40 {
		fmt.Fprintf(n.stdin, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"big.big","arguments":{"bytes":1000000}}}`+"\n", i)
	}
	time.Sleep(2 * time.Second) // several pings
	select {
	case <-n.exited:
	case <-time.After(30 * time.Second):
		t.Fatal("the node kept a session whose client does not read")
	}
	log := n.logs.String()
	if !strings.Contains(log, "not reading what the node sends") {
		t.Error("the node did not say why it ended the session")
	}
	if strings.Contains(log, "did not answer a ping") {
		t.Error("a healthy bundle was killed by its ping")
	}
}

// Requests received before stdin ends are answered, initialize included.
func TestRequestsBeforeEOFAreAnswered(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "eof"})
	n := startRawNode(t, "--bundles", dir)
	fmt.Fprintln(n.stdin, initLine)
	fmt.Fprintln(n.stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	fmt.Fprintln(n.stdin, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	fmt.Fprintln(n.stdin, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"eof.sleep","arguments":{"ms":300}}}`)
	n.stdin.Close()
	got := map[string]string{}
	sc := bufio.NewScanner(n.stdout)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m struct {
			ID     json.RawMessage
			Result json.RawMessage
		}
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("not JSON on stdout: %s", sc.Bytes())
		}
		if m.ID != nil {
			got[string(m.ID)] = string(m.Result)
		}
	}
	for _, want := range []struct{ id, has string }{{`"init"`, "protocolVersion"}, {"2", "eof.sleep"}, {"3", "slept in"}} {
		if !strings.Contains(got[want.id], want.has) {
			t.Errorf("answer to %s: %q, want one holding %q", want.id, got[want.id], want.has)
		}
	}
}

// A bundle answers a request it could not read with id null: the call ends at once with
// the bundle's error instead of waiting out its timeout.
func TestANullIDAnswerEndsTheCall(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "nul"})
	run := startNode(t, nil, nil, "--bundles", dir)
	_, err := callWithin(t, run.session, 20*time.Second, "nul.nullerr", nil)
	if err == nil || !strings.Contains(err.Error(), "Parse error") {
		t.Fatalf("call ended with %v, want the bundle's parse error", err)
	}
}

// An answer over the bundle message limit fails its call, naming the bundle and the limit;
// the bundle goes on serving.
func TestAnAnswerOverTheLimitFailsItsCall(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "huge"})
	run := startNode(t, nil, nil, "--bundles", dir, "--max-bundle-message", "1MiB")
	res, err := callWithin(t, run.session, 20*time.Second, "huge.big", map[string]any{"bytes": 2 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if text := resultText(res); !res.IsError || !strings.Contains(text, `"huge"`) || !strings.Contains(text, "over the limit") {
		t.Fatalf("result %q, want an error naming the bundle and the limit", text)
	}
	if text, _ := callText(t, run.session, "huge.echo", map[string]any{"text": "after"}); text != "huge:after" {
		t.Errorf("the next call: %q", text)
	}
}

// A batch carrying several answers to one sampling request: the first is taken, the others
// dropped, and the POST answered at once.
func TestDuplicateAnswersInABatch(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "asks"})
	u := startHTTPNode(t, "--bundles", dir)
	c := &rawHTTP{t: t, url: u}
	c.initialize("2025-03-26", `{"sampling":{}}`)
	resp := c.post(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"asks.sample","arguments":{"prompt":"hi"}}}`, "application/json, text/event-stream")
	defer resp.Body.Close()
	events := sseMessages(resp.Body)
	var req struct {
		ID     json.RawMessage
		Method string
	}
	for ev := range events {
		if json.Unmarshal(ev, &req) == nil && req.Method == "sampling/createMessage" {
			break
		}
	}
	if req.Method == "" {
		t.Fatal("no sampling request on the call's stream")
	}
	answer := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"role":"assistant","content":{"type":"text","text":"yes"},"model":"m"}}`, req.ID)
	done := make(chan int, 1)
	go func() {
		r := c.post("["+strings.Repeat(answer+",", 9)+answer+"]", "application/json, text/event-stream")
		r.Body.Close()
		done <- r.StatusCode
	}()
	select {
	case code := <-done:
		if code != http.StatusAccepted {
			t.Errorf("the batch got %d, want 202", code)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the batch of answers to one request was never answered")
	}
	for ev := range events {
		if bytes.Contains(ev, []byte("model said: yes")) {
			return
		}
	}
	t.Error("the call did not complete with the first answer")
}

// sseMessages yields the data of each event of an event stream.
func sseMessages(r io.Reader) <-chan []byte {
	ch := make(chan []byte)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(r)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			if data, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: ")); ok && len(data) > 0 {
				ch <- bytes.Clone(data)
			}
		}
	}()
	return ch
}

// Answers to calls the client gave up on are dropped with their payloads: sixteen 20 MB
// answers nobody waits for leave the node's live heap near where it was.
func TestUnwantedAnswersAreNotKept(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "late"})
	run := startNode(t, nil, nil, "--bundles", dir)
	before := heapLive(t, run.session)
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			run.session.CallTool(ctx, &mcp.CallToolParams{Name: "late.late", Arguments: map[string]any{"ms": 400, "bytes": 20 << 20}})
		}()
	}
	wg.Wait()
	time.Sleep(3 * time.Second) // the answers arrive and are dropped
	// Each status call allocates; a few let the collector run after the last answer.
	var after uint64
	for range 5 {
		callText(t, run.session, "toolnode.status", nil)
		after = heapLive(t, run.session)
	}
	if after > before+100<<20 {
		t.Errorf("live heap grew from %d to %d bytes after answers nobody wanted", before, after)
	}
}

func heapLive(t *testing.T, s *mcp.ClientSession) uint64 {
	t.Helper()
	res, err := callWithin(t, s, 20*time.Second, "toolnode.status", nil)
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Node struct {
			HeapLive *uint64 `json:"heap_live_bytes"` // 0 until the first collection
		}
	}
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &st); err != nil || st.Node.HeapLive == nil {
		t.Fatalf("status has no heap_live_bytes: %s", b)
	}
	return *st.Node.HeapLive
}
