// Package bundle is the Go SDK for toolnode bundles: an MCP server that speaks
// newline-delimited JSON-RPC 2.0 over stdio and offers tools.
//
// A bundle builds a [Server], adds its tools with [Server.AddTool] and calls
// [Server.ServeStdio]:
//
//	s := bundle.NewServer(bundle.Options{Name: "hello", Version: "1.0.0"})
//	err := s.AddTool(mcp.Tool{Name: "greet", InputSchema: schema}, greet)
//	...
//	err = s.ServeStdio(ctx)
//
// The server answers initialize, ping, tools/list (paginated), tools/call and
// logging/setLevel, and honours notifications/cancelled. Arguments are checked against the
// tool's input schema before its handler runs, so a handler only sees arguments of the
// declared shape. Each call runs in its own goroutine.
package bundle
