package upstream

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnode/toolnode/runtime/internal/redirect"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// A url bundle's server that redirects to another origin never gets the bundle's headers
// (its secrets) or its requests sent there: the node refuses the redirect, and the bundle
// fails with an error saying where the server pointed. Within the server's own origin a
// redirect is followed, headers and all.
func TestRedirectsStayInTheOrigin(t *testing.T) {
	var mu sync.Mutex
	var leaked []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		leaked = append(leaked, r.Method+" "+r.URL.Path+" X-Api-Key="+r.Header.Get("X-Api-Key"))
		mu.Unlock()
		http.Error(w, "not an MCP server", http.StatusNotFound)
	}))
	t.Cleanup(other.Close)

	s := sdk.NewServer(&sdk.Implementation{Name: "keyed", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "hello", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *sdk.CallToolRequest, map[string]any) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "hello"}}}, nil, nil
		})
	mcpHandler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
	mux := http.NewServeMux()
	mux.Handle("/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Api-Key") != "secret" {
			http.Error(w, "no key", http.StatusUnauthorized)
			return
		}
		mcpHandler.ServeHTTP(w, r)
	}))
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/mcp", http.StatusPermanentRedirect)
	})
	mux.HandleFunc("/away", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/mcp", http.StatusTemporaryRedirect)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	headers := http.Header{"X-Api-Key": {"secret"}}

	c := startRemote(t, Config{URL: srv.URL + "/moved", Headers: headers})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if raw, err := c.Call(ctx, mcp.MethodToolsCall, map[string]any{"name": "hello", "arguments": map[string]any{}}); err != nil || !strings.Contains(string(raw), "hello") {
		t.Fatalf("through a redirect within the origin: %s %v", raw, err)
	}

	away, err := Start(Config{Name: "away", URL: srv.URL + "/away", Headers: headers, Handler: &recorder{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { away.Close(context.Background()) })
	err = away.Initialize(ctx)
	if !errors.Is(err, redirect.ErrOtherOrigin) || !strings.Contains(err.Error(), strings.TrimPrefix(other.URL, "http://")) {
		t.Errorf("a server redirecting to another origin: %v, want an error naming it", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(leaked) > 0 {
		t.Errorf("the other origin got requests: %v", leaked)
	}
}
