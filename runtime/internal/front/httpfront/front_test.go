//lint:file-ignore SA1019 sampling and logging are part of protocol 2025-11-25, which the node serves; they are deprecated only from 2026-07-28 on.

package httpfront_test

import (
	"bytes"
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
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/toolnode/toolnode/runtime/internal/front"
	"github.com/toolnode/toolnode/runtime/internal/front/httpfront"
	"github.com/toolnode/toolnode/runtime/internal/node"
	"github.com/toolnode/toolnode/runtime/internal/oauth/oauthtest"
	"github.com/toolnode/toolnode/runtime/internal/serve"
	"github.com/toolnode/toolnode/runtime/internal/testkit"
	"github.com/toolnode/toolnode/runtime/internal/testkit/nodekit"
)

// The Streamable HTTP front as clients meet it: the official Go SDK client, and requests
// made by hand, to a node in process.

func TestMain(m *testing.M) {
	testkit.RunIfChild()
	goleak.VerifyTestMain(m, testkit.KeptAliveConns()...)
}

// httpNode writes the fake bundles fakes and serves them over the HTTP front on loopback,
// configured by cfg.
func httpNode(t *testing.T, cfg serve.Config, fakes ...testkit.Fake) *nodekit.Node {
	t.Helper()
	cfg.HTTP = nodekit.Loopback
	return nodekit.StartFakes(t, cfg, fakes...)
}

func TestHTTPSessionsGetOnlyTheirOwnProgressAndLogs(t *testing.T) {
	url := httpNode(t, serve.Config{}, testkit.Fake{Name: "shared"}).URL
	var boxes [2]testkit.Inbox
	var sessions [2]*mcp.ClientSession
	for i := range sessions {
		box := &boxes[i]
		sessions[i] = nodekit.Connect(t, url, "2025-11-25", &mcp.ClientOptions{
			LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
				box.Add(fmt.Sprintf("log:%v:%s", r.Params.Data, r.Params.Logger))
			},
			ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
				box.Add(fmt.Sprintf("progress:%s:%v", r.Params.Message, r.Params.ProgressToken))
			},
		})
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
		// The four calls' log messages and progress, which may come after their answers.
		boxes[i].Wait(t, 5*time.Second, 8, nil)
		seen := boxes[i].Items()
		logs, progress := 0, 0
		for _, s := range seen {
			switch {
			case s == fmt.Sprintf("log:s%d:shared", i):
				logs++
			case strings.HasPrefix(s, fmt.Sprintf("progress:s%d:tok-%d-", i, i)):
				progress++
			default:
				t.Errorf("session %d received %q, which belongs to another session", i, s)
			}
		}
		if logs != 4 || progress != 4 {
			t.Errorf("session %d got %d log messages and %d progress notifications, want 4 and 4: %v", i, logs, progress, seen)
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
	url := httpNode(t, serve.Config{}, testkit.Fake{Name: "asker"}).URL
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
	caller := nodekit.Connect(t, url, version, &mcp.ClientOptions{CreateMessageHandler: handler("caller")})
	nodekit.Connect(t, url, version, &mcp.ClientOptions{CreateMessageHandler: handler("bystander")})
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
	url := httpNode(t, serve.Config{HTTPOptions: httpfront.Options{Token: "s3cret", MaxBody: 1000}, Front: front.Options{MaxMessage: 1000}},
		testkit.Fake{Name: "b"}).URL

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
	url := httpNode(t, serve.Config{}, testkit.Fake{Name: "b"}).URL
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

// A 2026 client over HTTP, whose every request goes on a new connection, calls a 2025-era
// bundle that asks its user a question: the node answers input_required, the client answers
// and calls again, and the bundle's question is answered. Meanwhile a 2025 client calls the
// same bundle process and receives only its own messages.
func TestBothErasInFrontOfOneBundle(t *testing.T) {
	url := httpNode(t, serve.Config{}, testkit.Fake{Name: "ask"}).URL

	asked := make(chan string, 4)
	client := mcp.NewClient(&mcp.Implementation{Name: "new-client", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked <- r.Params.Message
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "blue"}}, nil
		},
	})
	fresh := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	ctx := context.Background()
	newer := nodekit.Join(t, client, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: fresh}, "")
	if v := newer.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("the new client speaks %s", v)
	}

	var mu sync.Mutex
	var older []string
	old := nodekit.Connect(t, url, "2025-11-25", &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			mu.Lock()
			older = append(older, fmt.Sprint(r.Params.Data))
			mu.Unlock()
		},
	})
	if err := old.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			nodekit.CallText(t, old, "ask.chatty", map[string]any{"tag": fmt.Sprintf("old-%d", i)})
		}()
	}
	res, err := newer.CallTool(ctx, &mcp.CallToolParams{Name: "ask.elicit", Arguments: map[string]any{"question": "favourite colour?"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Content[0].(*mcp.TextContent).Text; got != "accept: blue" {
		t.Errorf("the bundle got %q", got)
	}
	if q := <-asked; q != "favourite colour?" {
		t.Errorf("the client was asked %q", q)
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if len(older) != 3 {
		t.Errorf("the 2025 client got log messages %v, want its own three", older)
	}
	for _, m := range older {
		if !strings.HasPrefix(m, "old-") {
			t.Errorf("the 2025 client got a message not its own: %q", m)
		}
	}
}

// A browser at an allowed origin gets through its CORS preflight and can read the session
// header; a Host header that is not the node's is refused on a loopback listener.
func TestBrowsersAndHosts(t *testing.T) {
	const origin = "https://inspector.example.com"
	url := httpNode(t, serve.Config{HTTPOptions: httpfront.Options{AllowOrigins: []string{origin}}}, testkit.Fake{Name: "w"}).URL
	do := func(method string, hdr map[string]string, body string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(method, url, strings.NewReader(body))
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

// An HTTP client opens its GET stream and never reads it, while its calls make a bundle
// send it log messages. Another client's calls to the same bundle are answered throughout,
// the bundle is not killed by its health ping, and the unread stream is closed at the bound.
func TestAnHTTPClientThatNeverReadsItsStreamStallsNobody(t *testing.T) {
	n := httpNode(t, serve.Config{Node: node.Config{Supervision: node.Supervision{PingEvery: 500 * time.Millisecond, PingTimeout: 500 * time.Millisecond},
		Limits: node.Limits{MaxQueue: 2 << 20}}, Front: front.Options{MaxQueue: 2 << 20}}, testkit.Fake{Name: "talk"})
	u, logs := n.URL, n.Logs
	victim := nodekit.Connect(t, u, "", nil)
	pid, _ := nodekit.CallText(t, victim, "talk.pid", nil)

	attacker := nodekit.NewRawHTTP(t, u)
	attacker.Initialize("2025-11-25", `{}`)
	// The GET stream, opened and never read.
	addr, _ := url.Parse(u)
	conn, err := net.Dial("tcp", addr.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\nMcp-Session-Id: %s\r\nMcp-Protocol-Version: 2025-11-25\r\n\r\n",
		addr.Path, addr.Host, attacker.Session)
	// Its status line says the stream is open; nothing of it is read after that.
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	status := make([]byte, len("HTTP/1.1 200"))
	if _, err := io.ReadFull(conn, status); err != nil || string(status) != "HTTP/1.1 200" {
		t.Fatalf("the GET stream: %q %v", status, err)
	}

	// JSON-only calls: what they cause goes to the GET stream. 40 MB of log messages.
	floodDone := make(chan string, 1)
	go func() {
		resp := attacker.Post(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"talk.flood","arguments":{"n":400,"bytes":100000}}}`, "application/json")
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		floodDone <- string(b)
	}()
	for i := range 20 {
		res, err := nodekit.CallWithin(t, victim, 10*time.Second, "talk.echo", map[string]any{"text": fmt.Sprint(i)})
		if err != nil || nodekit.ResultText(res) != fmt.Sprintf("talk:%d", i) {
			t.Fatalf("the other client's call %d: %v %v", i, err, res)
		}
		time.Sleep(50 * time.Millisecond) // the calls spread over the flood: part of what is tested
	}
	select {
	case out := <-floodDone:
		if !strings.Contains(out, "flooded from "+pid) {
			t.Errorf("the flooding call ended with %.200s", out)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the flooding call never ended")
	}
	if again, _ := nodekit.CallText(t, victim, "talk.pid", nil); again != pid {
		t.Errorf("the bundle was restarted (pid %s, then %s)", pid, again)
	}
	if strings.Contains(logs.String(), "did not answer a ping") {
		t.Error("a healthy bundle was killed by its ping")
	}
	if !strings.Contains(logs.String(), "closing an event stream the client does not read") {
		t.Error("the unread stream was not closed at the bound")
	}
}

// A batch carrying several answers to one sampling request: the first is taken, the others
// dropped, and the POST answered at once.
func TestDuplicateAnswersInABatch(t *testing.T) {
	c := nodekit.NewRawHTTP(t, httpNode(t, serve.Config{}, testkit.Fake{Name: "asks"}).URL)
	c.Initialize("2025-03-26", `{"sampling":{}}`)
	resp := c.Post(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"asks.sample","arguments":{"prompt":"hi"}}}`, "application/json, text/event-stream")
	defer resp.Body.Close()
	events := nodekit.SSEMessages(resp.Body)
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
		r := c.Post("["+strings.Repeat(answer+",", 9)+answer+"]", "application/json, text/event-stream")
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

// With --oauth-issuer, an access token of a real OpenID provider lets a client in, and
// its scopes select its access entry; a token of another audience is refused, and the
// metadata document names the provider.
func TestOAuthTokensOfARealProvider(t *testing.T) {
	if oauthtest.Binary() == "" {
		t.Skip("no hydra binary: build it with make build/hydra")
	}
	idp := oauthtest.StartHydra(t)
	const audience = "https://node.test/mcp"
	client := idp.NewClient(t, []string{audience, "https://other.test/mcp"}, "tools:read")
	accessFile := filepath.Join(t.TempDir(), "access.json")
	if err := os.WriteFile(accessFile, []byte(`{"clients": [{"name": "reader", "scopes": ["tools:read"], "allow": ["o.echo"]}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	url := httpNode(t, serve.Config{OAuthIssuer: idp.Issuer, OAuthAudience: audience, AccessFile: accessFile}, testkit.Fake{Name: "o"}).URL

	token := idp.Token(t, client, audience, "tools:read")
	s := nodekit.ConnectWithToken(t, url, token)
	if got := strings.Join(nodekit.Names(nodekit.Tools(t, s)), " "); got != "o.echo toolnode.execute toolnode.search" {
		t.Errorf("the token's client lists %s", got)
	}
	if text, _ := nodekit.CallText(t, s, "o.echo", map[string]any{"text": "hi"}); text != "o:hi" {
		t.Errorf("o.echo answered %q", text)
	}

	other := idp.Token(t, client, "https://other.test/mcp", "tools:read")
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Authorization", "Bearer "+other)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), "resource_metadata=") {
		t.Errorf("a token for another audience got %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	// Without any token, beside an access file: still told where to get one.
	req, _ = http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Content-Type", "application/json")
	if resp, err = http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), "resource_metadata=") {
		t.Errorf("a request without a token got %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	meta, err := http.Get(strings.TrimSuffix(url, "/mcp") + "/.well-known/oauth-protected-resource/mcp")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(meta.Body)
	meta.Body.Close()
	if !strings.Contains(string(body), idp.Issuer) {
		t.Errorf("the metadata document does not name the provider: %s", body)
	}
}

// A session's call is answered as plain JSON when nothing comes before its answer, and as
// an event stream, primed with an event id and a retry interval (SEP-1699), when its
// progress does; both carry the session's id.
func TestASessionsCallStreamsOnlyWhenSomethingComesFirst(t *testing.T) {
	n := nodekit.StartMemory(t, serve.Config{HTTP: nodekit.Loopback}, testkit.Memory{Name: "a", Session: true})
	c := nodekit.NewRawHTTP(t, n.URL)
	c.Initialize("2025-11-25", `{}`)
	for _, tc := range []struct {
		name, params, contentType string
		want                      []string // in this order
	}{
		{"nothing first", `{"name":"a.echo","arguments":{"text":"x"}}`, "application/json", []string{`"result"`, `a:x`}},
		{"progress first", `{"name":"a.talk","arguments":{"text":"y"},"_meta":{"progressToken":"p1"}}`, "text/event-stream",
			[]string{"id: " + c.Session + "-", "retry: 1000", `"method":"notifications/progress"`, `"progressToken":"p1"`, `a:y`}},
	} {
		resp := c.Post(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":`+tc.params+`}`, "application/json, text/event-stream")
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if got := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || !strings.HasPrefix(got, tc.contentType) {
			t.Errorf("%s: %d %s, want 200 %s: %s", tc.name, resp.StatusCode, got, tc.contentType, b)
		}
		if got := resp.Header.Get(httpfront.HeaderSessionID); got != c.Session {
			t.Errorf("%s: session header %q, want %q", tc.name, got, c.Session)
		}
		rest := string(b)
		for _, w := range tc.want {
			i := strings.Index(rest, w)
			if i < 0 {
				t.Errorf("%s: %q missing, or out of order, in %s", tc.name, w, b)
				break
			}
			rest = rest[i+len(w):]
		}
	}
}
