package upstream

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// echoServer is an official Go SDK server with one tool, "echo", that returns its
// arguments; versions restricts the revisions it serves ("" for all it knows).
func echoServer(versions string) *sdk.Server {
	var opts sdk.ServerOptions
	if versions != "" {
		opts.SupportedProtocolVersions = strings.Split(versions, ",")
	}
	s := sdk.NewServer(&sdk.Implementation{Name: "echo", Version: "1"}, &opts)
	sdk.AddTool(s, &sdk.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, _ *sdk.CallToolRequest, args map[string]any) (*sdk.CallToolResult, map[string]any, error) {
			return nil, args, nil
		})
	return s
}

// BenchmarkCall measures one tools/call through the node's client side to a bundle built
// with the official Go SDK, in each era and over each transport, 8 calls in flight.
func BenchmarkCall(b *testing.B) {
	s := echoServer("")
	stateless := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s },
		&sdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true}))
	b.Cleanup(stateless.Close)
	old := echoServer("2025-11-25")
	session := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return old },
		&sdk.StreamableHTTPOptions{JSONResponse: true}))
	b.Cleanup(session.Close)
	exe := func(env ...string) Config {
		return Config{Process: selfProcess(b, append([]string{"UPSTREAM_TEST_BUNDLE=echo"}, env...)...)}
	}
	for _, bc := range []struct {
		name string
		cfg  Config
	}{
		{"stdio/stateless", exe()},
		{"stdio/session", exe("UPSTREAM_TEST_VERSIONS=2025-11-25")},
		{"http/stateless", Config{URL: stateless.URL}},
		{"http/session", Config{URL: session.URL}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			cfg := bc.cfg
			cfg.Name, cfg.Handler = "b", &recorder{}
			c, err := Start(cfg)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close(context.Background())
			if err := c.Initialize(context.Background()); err != nil {
				b.Fatal(err)
			}
			params := json.RawMessage(`{"name":"echo","arguments":{"text":"hello"}}`)
			b.SetParallelism(4) // 8 in flight on 2 cores
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := c.Call(context.Background(), mcp.MethodToolsCall, params); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
