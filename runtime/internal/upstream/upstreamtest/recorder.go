// Package upstreamtest holds a bundle built with the official Go SDK for tests of the
// node's client side. It records what it receives, so that a test can tell from the
// bundle itself which era of MCP the node spoke to it.
package upstreamtest

import (
	"context"
	"encoding/json"
	"fmt"
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

// Recorder returns an official Go SDK server with two tools: "received", that answers a
// Received, and "ask", that asks the client for a name with an input_required result (the
// 2026-07-28 way; the SDK turns it into an elicitation request for a client of a session)
// and greets it. versions restricts the revisions it serves; nil serves every one the SDK
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
	mcp.AddTool(s, &mcp.Tool{Name: "ask", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, req *mcp.CallToolRequest, _ map[string]any) (*mcp.CallToolResult, any, error) {
			if answer, ok := req.Params.InputResponses["name"].(*mcp.ElicitResult); ok && answer.Action == "accept" {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("hello %v", answer.Content["name"])}}}, nil, nil
			}
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"name": &mcp.ElicitParams{
				Message:         "Your name?",
				RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
			}}}, nil, nil
		})
	return s
}
