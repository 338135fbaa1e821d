// Package mcp holds the Model Context Protocol types, method names, error codes and version
// rules shared by the toolnode runtime and the Go bundle SDK.
//
// Only what both sides need lives here; fields the runtime forwards without looking at them
// stay json.RawMessage so that nothing a bundle sends is lost on the way to the client.
package mcp
