package node

import (
	"encoding/json"
	"testing"
)

// BenchmarkReadRequest reads the params of the call every relayed call reads: a 2025-11-25
// tools/call, and a 2026-07-28 one with its _meta and a progress token.
func BenchmarkReadRequest(b *testing.B) {
	for _, tt := range []struct{ name, params string }{
		{"2025 call", `{"name":"echo-go.echo","arguments":{"text":"bench"}}`},
		{"2026 call", `{"name":"echo-go.echo","arguments":{"text":"bench"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
			`"io.modelcontextprotocol/clientCapabilities":{},"progressToken":17}}`},
	} {
		params := json.RawMessage(tt.params)
		b.Run(tt.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if r, err := ReadRequest("tools/call", params); err != nil || r.Name != "echo-go.echo" {
					b.Fatal(r.Name, err)
				}
			}
		})
	}
}

// BenchmarkScanResult reads isError and resultType from a tool's result.
func BenchmarkScanResult(b *testing.B) {
	res := json.RawMessage(`{"content":[{"type":"text","text":"bench"}],"isError":false}`)
	for b.Loop() {
		if isError, _ := scanResult(res); isError {
			b.Fatal("isError")
		}
	}
}
