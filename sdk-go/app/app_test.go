package app

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnode/toolnode/sdk-go/app/provider"
)

func TestFilter(t *testing.T) {
	for _, c := range []struct {
		allow, deny []string
		name        string
		want        bool
	}{
		{nil, nil, "a.b", true},
		{[]string{"meos.*"}, nil, "meos.speed", true},
		{[]string{"meos.*"}, nil, "go.greet", false},
		{[]string{"*.greet"}, []string{"python.*"}, "python.greet", false},
		{[]string{"*.greet"}, []string{"python.*"}, "go.greet", true},
		{[]string{"node-lamp.o?"}, nil, "node-lamp.on", true},
		{[]string{"go.*"}, nil, "go.node-lamp.on", true},
	} {
		f, err := Filter(c.allow, c.deny)
		if err != nil {
			t.Fatal(err)
		}
		if got := f(c.name); got != c.want {
			t.Errorf("allow %v deny %v: %q gives %v", c.allow, c.deny, c.name, got)
		}
	}
	if _, err := Filter([]string{"a/b"}, nil); err == nil || !strings.Contains(err.Error(), "which no tool name has") {
		t.Errorf("a bad pattern: %v", err)
	}
}

// server is an MCP server of the official SDK over loopback HTTP that counts tools/list
// requests.
type server struct {
	mcp   *mcp.Server
	lists atomic.Int32
	http  *httptest.Server
}

func newServer(t *testing.T, addr string) *server {
	t.Helper()
	s := &server{mcp: mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, nil)}
	s.mcp.AddTool(&mcp.Tool{Name: "a.echo", InputSchema: map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}}},
		func(_ context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(r.Params.Arguments)}}}, nil
		})
	s.mcp.AddTool(&mcp.Tool{Name: "slow", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			select {
			case <-time.After(200 * time.Millisecond):
			case <-ctx.Done():
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "slow"}}}, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, nil)
	s.http = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Method") == "tools/list" || peek(r, `"tools/list"`) {
			s.lists.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	if addr != "" {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		s.http.Listener.Close()
		s.http.Listener = l
	}
	s.http.Start()
	t.Cleanup(s.http.Close)
	return s
}

// peek reports whether a request's body holds s, leaving the body to be read again.
func peek(r *http.Request, s string) bool {
	if r.Body == nil {
		return false
	}
	b, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(b))
	return bytes.Contains(b, []byte(s))
}

func TestFiftyCallersShareOneListing(t *testing.T) {
	s := newServer(t, "")
	n, err := New(Config{URL: s.http.URL + "/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 50)
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tools, err := n.ToolsFor(context.Background(), provider.Gemini, false)
			if err == nil && len(tools) != 1 {
				err = errors.New("no tools")
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := s.lists.Load(); got != 1 {
		t.Errorf("%d tools/list requests for 50 callers", got)
	}
}

func TestCallsRunTogetherAndByEitherName(t *testing.T) {
	s := newServer(t, "")
	n, _ := New(Config{URL: s.http.URL + "/mcp", Timeout: 10 * time.Second})
	defer n.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond) // 8 x 200 ms one by one would not fit
	defer cancel()
	var calls []provider.Call
	for range 8 {
		calls = append(calls, provider.Call{ID: "x", Name: "slow", Arguments: map[string]any{}})
	}
	calls = append(calls, provider.Call{ID: "e", Name: "a_echo", Arguments: map[string]any{"text": "hi"}},
		provider.Call{ID: "f", Name: "a.echo", Arguments: map[string]any{"text": "ho"}},
		provider.Call{ID: "g", Name: "nope", Arguments: map[string]any{}})
	out, err := n.Run(ctx, provider.OpenAI, calls, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range out[:8] {
		if o.Text() != "slow" {
			t.Fatalf("slow: %+v", o)
		}
	}
	if !strings.Contains(out[8].Text(), `"hi"`) || !strings.Contains(out[9].Text(), `"ho"`) {
		t.Errorf("echo: %q, %q", out[8].Text(), out[9].Text())
	}
	if out[10].Error == nil || out[10].Error.Kind != "unknown_tool" || out[10].Error.Dispatched {
		t.Errorf("an unknown name: %+v", out[10])
	}
}

func TestTimeoutAndForbidden(t *testing.T) {
	s := newServer(t, "")
	n, _ := New(Config{URL: s.http.URL + "/mcp", Timeout: 50 * time.Millisecond, Deny: []string{"a.*"}})
	defer n.Close()
	out, err := n.Run(context.Background(), provider.Anthropic, []provider.Call{{ID: "1", Name: "slow"}, {ID: "2", Name: "a_echo"}}, false)
	if err != nil {
		t.Fatal(err)
	}
	if e := out[0].Error; e == nil || e.Kind != "timeout" || !e.Dispatched {
		t.Errorf("timeout: %+v", out[0])
	}
	if e := out[1].Error; e == nil || e.Kind != "forbidden" || e.Dispatched {
		t.Errorf("forbidden: %+v", out[1])
	}
	if _, err := n.Call(context.Background(), "a.echo", nil); !errors.Is(err, ErrForbidden) {
		t.Errorf("Call of a denied tool: %v", err)
	}
}

func TestListChangedRefreshesASession(t *testing.T) {
	s := newServer(t, "")
	n, _ := New(Config{URL: s.http.URL + "/mcp", ProtocolVersion: "2025-11-25"})
	defer n.Close()
	ctx := context.Background()
	if tools, err := n.Tools(ctx); err != nil || len(tools) != 2 {
		t.Fatalf("%v, %v", tools, err)
	}
	s.mcp.AddTool(&mcp.Tool{Name: "late", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	deadline := time.Now().Add(10 * time.Second)
	for {
		tools, err := n.Tools(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(tools) == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still %d tools after list_changed", len(tools))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestALostServerIsReachedAgain(t *testing.T) {
	s := newServer(t, "")
	addr := s.http.Listener.Addr().String()
	n, _ := New(Config{URL: s.http.URL + "/mcp", Timeout: 5 * time.Second})
	defer n.Close()
	ctx := context.Background()
	if _, err := n.Call(ctx, "a.echo", map[string]any{"text": "1"}); err != nil {
		t.Fatal(err)
	}
	s.http.CloseClientConnections()
	s.http.Close()
	if _, err := n.Call(ctx, "a.echo", map[string]any{"text": "2"}); !errors.Is(err, ErrUnreachable) {
		t.Fatalf("with the server gone: %v", err)
	}
	newServer(t, addr)
	if _, err := n.Call(ctx, "a.echo", map[string]any{"text": "3"}); err != nil {
		t.Fatalf("with the server back: %v", err)
	}
}
