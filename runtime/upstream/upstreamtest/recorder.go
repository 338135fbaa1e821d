// Package upstreamtest holds a bundle built with the official Go SDK for tests of the
// node's client side. It records what it receives, so that a test can tell from the
// bundle itself which era of MCP the node spoke to it.
package upstreamtest

import (
	"context"
	"encoding/json"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Received is what the tool "received" answers, in its structured content.
type Received struct {
	// Methods are the methods the server received, in order.
	Methods []string `json:"methods"`
	// Version is the protocol revision of the call itself.
	Version string `json:"version"`
}

// Recorder returns an official Go SDK server with one tool, "received", that answers a
// Received. versions restricts the revisions it serves; nil serves every one the SDK
// knows, in both eras.
func Recorder(versions []string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "recorder", Version: "1"},
		&mcp.ServerOptions{SupportedProtocolVersions: versions})
	var mu sync.Mutex
	var methods []string
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			mu.Lock()
			methods = append(methods, method)
			mu.Unlock()
			return next(ctx, method, req)
		}
	})
	mcp.AddTool(s, &mcp.Tool{Name: "received", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, req *mcp.CallToolRequest, _ map[string]any) (*mcp.CallToolResult, Received, error) {
			mu.Lock()
			defer mu.Unlock()
			return nil, Received{Methods: slices.Clone(methods), Version: req.ProtocolVersion()}, nil
		})
	return s
}
