package upstream

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/toolnode/toolnode/runtime/internal/proc"
	"github.com/toolnode/toolnode/runtime/internal/upstream/upstreamtest"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// The test binary doubles as a bundle: upstreamtest.Recorder when upstreamtest.ChildEnv
// says the revisions it serves, or else as UPSTREAM_TEST_BUNDLE says:
//   - "echo": the Recorder with a tool that echoes its arguments, for benchmarks, serving
//     the revisions in UPSTREAM_TEST_VERSIONS (comma-separated; empty for every one it
//     knows, both eras);
//   - "silent": a server of the initialize era that ignores whatever comes before
//     initialize, as some do.
func TestMain(m *testing.M) {
	upstreamtest.RunIfChild()
	switch os.Getenv("UPSTREAM_TEST_BUNDLE") {
	case "echo":
		if err := echoServer(os.Getenv("UPSTREAM_TEST_VERSIONS")).Run(context.Background(), &sdk.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
		os.Exit(0)
	case "silent":
		silentServer()
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// silentServer answers initialize, tools/list and tools/call, and nothing sent before
// initialize; it records what it read, and tools/call returns the record.
func silentServer() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(nil, 1<<20)
	var methods []string
	initialized := false
	reply := func(id json.RawMessage, result any) {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
		os.Stdout.Write(append(b, '\n'))
	}
	for in.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(in.Bytes(), &m) != nil || m.Method == "" {
			continue
		}
		methods = append(methods, m.Method)
		switch {
		case m.Method == "initialize":
			initialized = true
			reply(m.ID, map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "silent", "version": "1"}})
		case !initialized || m.ID == nil:
		case m.Method == "tools/list":
			reply(m.ID, map[string]any{"tools": []any{map[string]any{"name": "received", "inputSchema": map[string]any{"type": "object"}}}})
		case m.Method == "tools/call":
			reply(m.ID, map[string]any{"content": []any{}, "structuredContent": map[string]any{"methods": methods}})
		default:
			reply(m.ID, map[string]any{})
		}
	}
}

// recorder is a Handler keeping what the bundle sent on its own.
type recorder struct {
	mu      sync.Mutex
	notices []string
}

func (r *recorder) Notify(_ *Client, method string, _ json.RawMessage) {
	r.mu.Lock()
	r.notices = append(r.notices, method)
	r.mu.Unlock()
}

func (r *recorder) Request(context.Context, *Client, string, json.RawMessage) (json.RawMessage, error) {
	return nil, errors.New("no client here")
}

func selfProcess(t testing.TB, env ...string) proc.Config {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return proc.Config{Path: exe, Env: append([]string{"PATH=" + os.Getenv("PATH")}, env...), Grace: time.Second}
}

// headerLog keeps the headers of every HTTP request a handler receives.
type headerLog struct {
	mu   sync.Mutex
	reqs []http.Header
}

func (l *headerLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		l.reqs = append(l.reqs, r.Header.Clone())
		l.mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			http.Error(w, "who are you", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

func (l *headerLog) all() []http.Header {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.reqs)
}

func callReceived(t *testing.T, c *Client) upstreamtest.Received {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	raw, err := c.Call(ctx, mcp.MethodToolsCall, map[string]any{"name": "received", "arguments": map[string]any{}})
	if err != nil {
		t.Fatalf("tools/call: %v", err)
	}
	var res struct {
		StructuredContent upstreamtest.Received `json:"structuredContent"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatalf("bad result %s: %v", raw, err)
	}
	return res.StructuredContent
}

// TestEachBundleIsSpokenToInItsEra starts real bundles of both eras, over stdio and over
// Streamable HTTP, and checks from what each bundle itself received that the node used the
// right era: no initialize for a 2026-07-28 bundle, whose every request carried the
// revision; initialize then notifications/initialized for the others.
func TestEachBundleIsSpokenToInItsEra(t *testing.T) {
	stateless := httptest.NewServer(nil)
	statelessLog := &headerLog{}
	stateless.Config.Handler = statelessLog.wrap(sdk.NewStreamableHTTPHandler(
		func(*http.Request) *sdk.Server { return upstreamtest.Recorder(nil) }, &sdk.StreamableHTTPOptions{Stateless: true}))
	defer stateless.Close()
	old := upstreamtest.Recorder([]string{"2025-11-25"})
	session := httptest.NewServer(nil)
	sessionLog := &headerLog{}
	session.Config.Handler = sessionLog.wrap(sdk.NewStreamableHTTPHandler(
		func(*http.Request) *sdk.Server { return old }, nil))
	defer session.Close()
	auth := http.Header{"Authorization": {"Bearer s3cret"}}

	tests := []struct {
		name    string
		cfg     Config
		era     Era
		version string
		first   []string // what the bundle must have received first, in order
		log     *headerLog
	}{
		{"stdio, official Go SDK serving both eras", Config{Process: selfProcess(t, upstreamtest.ChildEnv+"=all")},
			EraStateless, mcp.Version20260728, []string{"server/discover"}, nil},
		{"stdio, official Go SDK serving 2025-11-25 only", Config{Process: selfProcess(t, upstreamtest.ChildEnv+"=2025-11-25")},
			EraSession, "2025-11-25", []string{"initialize", "notifications/initialized"}, nil},
		{"stdio, a server that ignores what comes before initialize", Config{Process: selfProcess(t, "UPSTREAM_TEST_BUNDLE=silent"), DiscoverTimeout: 300 * time.Millisecond},
			EraSession, "", []string{"server/discover", "initialize", "notifications/initialized"}, nil},
		{"HTTP, official Go SDK stateless handler", Config{URL: stateless.URL, Headers: auth},
			EraStateless, mcp.Version20260728, nil, statelessLog},
		{"HTTP, official Go SDK session handler serving 2025-11-25 only", Config{URL: session.URL, Headers: auth},
			EraSession, "2025-11-25", nil, sessionLog},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			cfg.Name = "b"
			rec := &recorder{}
			cfg.Handler = rec
			c, err := Start(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close(context.Background())
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if err := c.Initialize(ctx); err != nil {
				t.Fatalf("initialize: %v", err)
			}
			if c.Era() != tt.era {
				t.Fatalf("era %v, want %v", c.Era(), tt.era)
			}
			tools, err := c.ListTools(ctx)
			if err != nil || !slices.ContainsFunc(tools, func(t json.RawMessage) bool { return strings.Contains(string(t), `"name":"received"`) }) {
				t.Fatalf("tools/list: %s %v", tools, err)
			}
			got := callReceived(t, c)
			if tt.version != "" && got.Version != tt.version {
				t.Errorf("the call went as revision %q, want %q", got.Version, tt.version)
			}
			if tt.first != nil && (len(got.Methods) < len(tt.first) || !slices.Equal(got.Methods[:len(tt.first)], tt.first)) {
				t.Errorf("the bundle received %v, want %v first", got.Methods, tt.first)
			}
			// The SDK's server announces tools/list_changed, which a stateless server sends
			// only on a subscription.
			if tt.era == EraStateless && tt.log == nil && !slices.Contains(got.Methods, "subscriptions/listen") {
				t.Errorf("no subscriptions/listen for the list changes the bundle announces: %v", got.Methods)
			}
			if tt.era == EraStateless && (slices.Contains(got.Methods, "initialize") || slices.Contains(got.Methods, "notifications/initialized")) {
				t.Errorf("a stateless bundle was sent the handshake: %v", got.Methods)
			}
			if err := c.Ping(ctx); err != nil {
				t.Errorf("ping: %v", err)
			}
			if tt.log != nil {
				checkHeaders(t, tt.era, tt.log.all())
			}
		})
	}
}

// checkHeaders checks the headers of each era on every request a remote bundle received.
func checkHeaders(t *testing.T, era Era, reqs []http.Header) {
	t.Helper()
	if len(reqs) < 3 {
		t.Fatalf("only %d HTTP requests", len(reqs))
	}
	calls := 0
	for i, h := range reqs {
		if h.Get("Authorization") != "Bearer s3cret" {
			t.Errorf("request %d went without the configured header", i)
		}
		switch era {
		case EraStateless:
			if h.Get(headerProtocolVersion) != mcp.Version20260728 || h.Get(headerMethod) == "" || h.Get(headerSessionID) != "" {
				t.Errorf("stateless request %d: %v", i, h)
			}
			if h.Get(headerMethod) == mcp.MethodToolsCall {
				calls++
				if h.Get(headerName) != "received" {
					t.Errorf("tools/call went with Mcp-Name %q", h.Get(headerName))
				}
			}
		case EraSession:
			// Request 0 is the server/discover probe, 1 initialize: the session is open
			// from 2 on.
			if i > 1 && (h.Get(headerSessionID) == "" || h.Get(headerProtocolVersion) != "2025-11-25") {
				t.Errorf("request %d after initialize went without the session's headers: %v", i, h)
			}
		}
	}
	if era == EraStateless && calls != 1 {
		t.Errorf("%d tools/call requests seen, want 1", calls)
	}
}

// TestStatelessRequestsKeepTheirOwnMeta checks the _meta stamped on a stateless request:
// the revision always, the node's capabilities only where the request carries none, its
// identity never (server/discover carries it), and the rest of params byte for byte.
func TestStatelessRequestsKeepTheirOwnMeta(t *testing.T) {
	c := &Client{}
	c.setMeta([]byte(`{"name":"toolnode","version":"1"}`), []byte(`{"sampling":{}}`))
	c.era.Store(uint32(EraStateless))
	tests := []struct {
		in   string
		want map[string]string // _meta member: its JSON
	}{
		{``, map[string]string{mcp.MetaProtocolVersion: `"2026-07-28"`, mcp.MetaClientCapabilities: `{"sampling":{}}`}},
		{`{"name":"x","arguments":{"a":[1,2]}}`, map[string]string{mcp.MetaClientInfo: ``}},
		{`{"name":"x","_meta":{"progressToken":"t"}}`, map[string]string{"progressToken": `"t"`, mcp.MetaProtocolVersion: `"2026-07-28"`,
			mcp.MetaClientInfo: ``, mcp.MetaClientCapabilities: `{"sampling":{}}`}},
		{`{"name":"x","_meta":{"io.modelcontextprotocol/clientInfo":{"name":"c"}}}`, map[string]string{mcp.MetaClientInfo: `{"name":"c"}`}},
		{string(c.discoverParams), map[string]string{mcp.MetaClientInfo: `{"name":"toolnode","version":"1"}`,
			mcp.MetaProtocolVersion: `"2026-07-28"`, mcp.MetaClientCapabilities: `{"sampling":{}}`}},
		{`{"name":"x","_meta":{ }}`, map[string]string{mcp.MetaProtocolVersion: `"2026-07-28"`}},
		{`{"name":"x","_meta":{"progressToken":"t","io.modelcontextprotocol/protocolVersion":"2025-11-25",` +
			`"io.modelcontextprotocol/clientCapabilities":{}}}`,
			map[string]string{"progressToken": `"t"`, mcp.MetaProtocolVersion: `"2026-07-28"`, mcp.MetaClientCapabilities: `{}`}},
	}
	for _, tt := range tests {
		out, _ := c.prepare(json.RawMessage(tt.in), Edit{})
		var p struct {
			Meta map[string]json.RawMessage `json:"_meta"`
			Args json.RawMessage            `json:"arguments"`
		}
		if err := json.Unmarshal(out, &p); err != nil {
			t.Fatalf("%s: %s is not JSON: %v", tt.in, out, err)
		}
		for k, v := range tt.want {
			if string(p.Meta[k]) != v {
				t.Errorf("%s: _meta %s = %s, want %s", tt.in, k, p.Meta[k], v)
			}
		}
		if strings.Contains(tt.in, "arguments") && string(p.Args) != `{"a":[1,2]}` {
			t.Errorf("arguments changed: %s", p.Args)
		}
	}
}
