//lint:file-ignore SA1019 sampling and logging are part of protocol 2025-11-25, which the node serves; they are deprecated only from 2026-07-28 on.

package cli_test

import (
	"github.com/toolnode/toolnode/runtime/internal/testkit"

	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// startHTTPNode runs `toolnode serve --http 127.0.0.1:0 args...` and returns the URL of its
// MCP endpoint.
func startHTTPNode(t *testing.T, args ...string) string {
	t.Helper()
	return startHTTPNodeRun(t, args...).url
}

// startHTTPNodeLogs is startHTTPNode that also returns the node's log as it grows.
func startHTTPNodeLogs(t *testing.T, args ...string) (string, *testkit.SyncBuffer) {
	t.Helper()
	n := startHTTPNodeRun(t, args...)
	return n.url, n.logs
}

// httpNode is a node serving HTTP, run by startHTTPNodeRun.
type httpNode struct {
	url  string
	logs *testkit.SyncBuffer
	pid  int
}

func startHTTPNodeRun(t *testing.T, args ...string) httpNode {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, append([]string{"serve", "--http", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), "TOOLNODE_TEST_MAIN=1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	logs := &testkit.SyncBuffer{}
	urlc := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`url=(http://\S+/mcp)`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			fmt.Fprintln(logs, sc.Text())
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				urlc <- m[1]
			}
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
		if t.Failed() {
			t.Logf("node log:\n%s", logs)
		}
	})
	select {
	case u := <-urlc:
		return httpNode{url: u, logs: logs, pid: cmd.Process.Pid}
	case <-time.After(20 * time.Second):
		t.Fatalf("the node did not report its HTTP address; log:\n%s", logs)
	}
	return httpNode{}
}

func connectHTTP(t *testing.T, url string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	return connectHTTPAt(t, url, opts, "")
}

// connectHTTPAt connects speaking protocol version (the client's latest when "").
func connectHTTPAt(t *testing.T, url string, opts *mcp.ClientOptions, version string) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "toolnode-http-test", Version: "1"}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sess, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect over HTTP: %v", err)
	}
	t.Cleanup(func() { sess.Close() })
	return sess
}

func TestHTTPSessionsGetOnlyTheirOwnProgressAndLogs(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "shared"})
	url := startHTTPNode(t, "--bundles", dir)

	type inbox struct {
		mu   sync.Mutex
		seen []string
	}
	add := func(in *inbox, s string) {
		in.mu.Lock()
		in.seen = append(in.seen, s)
		in.mu.Unlock()
	}
	var boxes [2]inbox
	var sessions [2]*mcp.ClientSession
	for i := range sessions {
		box := &boxes[i]
		sessions[i] = connectHTTPAt(t, url, &mcp.ClientOptions{
			LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
				add(box, fmt.Sprintf("log:%v:%s", r.Params.Data, r.Params.Logger))
			},
			ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
				add(box, fmt.Sprintf("progress:%s:%v", r.Params.Message, r.Params.ProgressToken))
			},
		}, "2025-11-25")
	}
	// Both sessions call the one bundle process at the same time, several times.
	var wg sync.WaitGroup
	for i := range sessions {
		for j := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				params := &mcp.CallToolParams{Name: "shared.chatty", Arguments: map[string]any{"tag": fmt.Sprintf("s%d", i)}}
				params.SetProgressToken(fmt.Sprintf("tok-%d-%d", i, j))
				res, err := sessions[i].CallTool(context.Background(), params)
				if err != nil || res.IsError {
					t.Errorf("session %d call %d: %v %+v", i, j, err, res)
				}
			}()
		}
	}
	wg.Wait()
	for i := range boxes {
		box := &boxes[i]
		deadline := time.Now().Add(5 * time.Second)
		for {
			box.mu.Lock()
			n := len(box.seen)
			box.mu.Unlock()
			if n >= 8 || time.Now().After(deadline) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		box.mu.Lock()
		logs, progress := 0, 0
		for _, s := range box.seen {
			switch {
			case s == fmt.Sprintf("log:s%d:shared", i):
				logs++
			case strings.HasPrefix(s, fmt.Sprintf("progress:s%d:tok-%d-", i, i)):
				progress++
			default:
				t.Errorf("session %d received %q, which belongs to another session", i, s)
			}
		}
		box.mu.Unlock()
		if logs != 4 || progress != 4 {
			t.Errorf("session %d got %d log messages and %d progress notifications, want 4 and 4: %v", i, logs, progress, box.seen)
		}
	}
}

// A bundle's sampling request reaches the client whose call caused it, and only that one:
// as a request on the call's stream under 2025-11-25, as an input_required answer and a
// retry under 2026-07-28.
func TestHTTPSamplingReachesTheCallingSession(t *testing.T) {
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) { testSamplingReachesTheCaller(t, version) })
	}
}

func testSamplingReachesTheCaller(t *testing.T, version string) {
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "asker"})
	url := startHTTPNode(t, "--bundles", dir)
	var mu sync.Mutex
	asked := map[string]int{}
	handler := func(name string) func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
		return func(_ context.Context, r *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			mu.Lock()
			asked[name]++
			if _, leaked := r.Params.Meta["io.toolnode/request"]; leaked {
				asked["leaked routing key"]++
			}
			mu.Unlock()
			prompt := r.Params.Messages[0].Content.(*mcp.TextContent).Text
			return &mcp.CreateMessageResult{Model: "test", Role: "assistant",
				Content: &mcp.TextContent{Text: name + " answers " + prompt}}, nil
		}
	}
	caller := connectHTTPAt(t, url, &mcp.ClientOptions{CreateMessageHandler: handler("caller")}, version)
	connectHTTPAt(t, url, &mcp.ClientOptions{CreateMessageHandler: handler("bystander")}, version)
	if got := caller.InitializeResult().ProtocolVersion; got != version {
		t.Fatalf("the client speaks %s, want %s", got, version)
	}

	res, err := caller.CallTool(context.Background(), &mcp.CallToolParams{Name: "asker.sample", Arguments: map[string]any{"prompt": "2+2?"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Content[0].(*mcp.TextContent).Text; got != "model said: caller answers 2+2?" {
		t.Errorf("tool answered %q", got)
	}
	if asked["caller"] != 1 || asked["bystander"] != 0 {
		t.Errorf("sampling requests: %v, want only the caller asked, once", asked)
	}
}

func TestHTTPRefusals(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "b"})
	token := t.TempDir() + "/token"
	os.WriteFile(token, []byte("s3cret\n"), 0o600)
	url := startHTTPNode(t, "--bundles", dir, "--token-file", token, "--max-body", "1000")

	initBody := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	tests := []struct {
		name    string
		method  string
		headers map[string]string
		body    string
		want    int
	}{
		{"no token", "POST", map[string]string{"Authorization": ""}, initBody, 401},
		{"wrong token", "POST", map[string]string{"Authorization": "Bearer nope"}, initBody, 401},
		{"foreign origin", "POST", map[string]string{"Origin": "http://evil.example"}, initBody, 403},
		{"loopback origin", "POST", map[string]string{"Origin": "http://localhost:3000"}, initBody, 200},
		{"unsupported version", "POST", map[string]string{"Mcp-Protocol-Version": "2020-01-01"}, initBody, 400},
		{"too large", "POST", nil, `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("a", 2000) + `"}}`, 413},
		{"no session", "POST", nil, `{"jsonrpc":"2.0","id":2,"method":"ping"}`, 400},
		{"unknown session", "POST", map[string]string{"Mcp-Session-Id": "gone"}, `{"jsonrpc":"2.0","id":2,"method":"ping"}`, 404},
		{"not JSON", "POST", nil, `{oops`, 400},
		{"JSON with a charset", "POST", map[string]string{"Content-Type": "application/json; charset=utf-8"}, initBody, 200},
		{"JSON spelled in capitals", "POST", map[string]string{"Content-Type": "Application/JSON"}, initBody, 200},
		{"not a JSON body", "POST", map[string]string{"Content-Type": "text/plain"}, initBody, 415},
		{"no Content-Type", "POST", map[string]string{"Content-Type": ""}, initBody, 415},
		{"wrong method", "PUT", nil, ``, 405},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, url, strings.NewReader(tt.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Authorization", "Bearer s3cret")
			for k, v := range tt.headers {
				if v == "" {
					req.Header.Del(k)
					continue
				}
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Errorf("status %d, want %d; body %s", resp.StatusCode, tt.want, body)
			}
		})
	}
}

func TestHTTPSessionLifecycle(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "b"})
	url := startHTTPNode(t, "--bundles", dir)
	post := func(sid, body string) (*http.Response, string) {
		req, _ := http.NewRequest("POST", url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(b)
	}
	resp, _ := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatal("no session id")
	}
	if resp, _ := post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); resp.StatusCode != 202 {
		t.Errorf("notification: status %d, want 202", resp.StatusCode)
	}
	// 2025-03-26 has batches.
	resp, body := post(sid, `[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"b.echo","arguments":{"text":"x"}}}]`)
	if resp.StatusCode != 200 || !strings.Contains(body, `"id":2`) || !strings.Contains(body, `b:x`) {
		t.Errorf("batch: %d %s", resp.StatusCode, body)
	}
	req, _ := http.NewRequest("DELETE", url, nil)
	req.Header.Set("Mcp-Session-Id", sid)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("delete: %v %v", err, resp)
	}
	if resp, _ := post(sid, `{"jsonrpc":"2.0","id":4,"method":"ping"}`); resp.StatusCode != 404 {
		t.Errorf("after DELETE: status %d, want 404", resp.StatusCode)
	}
}
