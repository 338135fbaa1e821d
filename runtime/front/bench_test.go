package front_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolnode/toolnode/runtime/front"
)

// BenchmarkHTTPCall relays tools/call through the HTTP front's handler to a bundle process,
// one at a time, in each era: what the front and the node spend per call (the bundle runs in
// a process of its own, so -benchmem counts the node's allocations alone).
func BenchmarkHTTPCall(b *testing.B) {
	srv := startServer(b)
	h := srv.NewHTTPHandler(front.HTTPOptions{})
	defer h.Close()
	post := func(body string, hdr map[string]string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w
	}
	w := post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, nil)
	sid := w.Header().Get(front.HeaderSessionID)
	if sid == "" {
		b.Fatalf("initialize: %d %s", w.Code, w.Body)
	}
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	for _, era := range []struct {
		name, body string
		hdr        map[string]string
	}{
		{"2025-11-25", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a.echo","arguments":{"text":"s"}}}`,
			map[string]string{front.HeaderSessionID: sid, front.HeaderProtocolVersion: "2025-11-25"}},
		{"2026-07-28", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"a.echo","arguments":{"text":"s"},` + meta + `}}`,
			map[string]string{front.HeaderProtocolVersion: "2026-07-28", front.HeaderMethod: "tools/call", front.HeaderName: "a.echo"}},
	} {
		b.Run(era.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if w := post(era.body, era.hdr); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "a:s") {
					b.Fatalf("%d %s", w.Code, w.Body)
				}
			}
		})
	}
}

// BenchmarkStdioCall relays tools/call through the stdio front to a bundle process, one at
// a time, in each era, as BenchmarkHTTPCall does over HTTP.
func BenchmarkStdioCall(b *testing.B) {
	srv := startServer(b)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- srv.ServeStdio(context.Background(), inR, outW)
		outW.Close()
	}()
	answers := bufio.NewReader(outR)
	call := func(line string) string {
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			b.Fatal(err)
		}
		answer, err := answers.ReadString('\n')
		if err != nil {
			b.Fatal(err)
		}
		return answer
	}
	call(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if _, err := io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		b.Fatal(err)
	}
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	for _, era := range []struct{ name, body string }{
		{"2025-11-25", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a.echo","arguments":{"text":"s"}}}`},
		{"2026-07-28", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"a.echo","arguments":{"text":"s"},` + meta + `}}`},
	} {
		b.Run(era.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if answer := call(era.body); !strings.Contains(answer, "a:s") {
					b.Fatalf("answer %s", answer)
				}
			}
		})
	}
	inW.Close()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
}
