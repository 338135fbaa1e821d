// Package bundle is the Go SDK for toolnode bundles: an MCP server that speaks
// newline-delimited JSON-RPC 2.0 over stdio and offers tools, and optionally prompts,
// resources and completions.
//
// A bundle builds a [Server], adds its tools with [Server.AddTool] and calls
// [Server.ServeStdio]:
//
//	s := bundle.NewServer(bundle.Options{Name: "hello", Version: "1.0.0"})
//	err := s.AddTool(mcp.Tool{Name: "greet", InputSchema: schema}, greet)
//	...
//	err = s.ServeStdio(ctx)
//
// The server answers initialize, ping, the paginated lists, tools/call, prompts/get,
// resources/read, resource subscriptions, completion/complete and logging/setLevel, and
// honours notifications/cancelled. Arguments are checked against the tool's input schema
// before its handler runs, so a handler only sees arguments of the declared shape. Each
// call runs in its own goroutine and may ask the client for input with [Input] (embedded in
// Call, PromptRequest and ResourceRequest): by request in a session, by input_required
// rounds under 2026-07-28.
//
// A request whose _meta names protocol version 2026-07-28 is served on its own, without
// initialize: server/discover, resultType, cache hints, the client's capabilities and log
// level from that request alone.
//
// What a call sends the client (log messages, progress, requests) carries the id of the
// call in _meta["io.toolnode/request"], so that a node serving several clients with one
// bundle process can tell whose call it is.
package bundle
