package front_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolnode/toolnode/runtime/internal/front"
	"github.com/toolnode/toolnode/runtime/internal/front/httpfront"
	"github.com/toolnode/toolnode/runtime/internal/front/stdiofront"
	"github.com/toolnode/toolnode/runtime/internal/testkit"
)

// benchServer serves two bundles that answer echo: "a", of the initialize era, and "s",
// which speaks 2026-07-28, so that every era of client meets every era of bundle.
func benchServer(b *testing.B) *front.Server {
	dir := b.TempDir()
	testkit.Write(b, dir, testkit.Fake{Name: "a"})
	testkit.Write(b, dir, testkit.Fake{Name: "s", Stateless: true})
	return serveBundles(b, dir, front.Options{})
}

// benchCall is one tools/call of a benchmark: a client of one era calling the echo tool
// of a bundle of one era.
type benchCall struct {
	name, body, bundle string
	stateless          bool
}

// benchCalls are the calls the front benchmarks make.
func benchCalls() []benchCall {
	meta := `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	var calls []benchCall
	for _, bundle := range []struct{ name, era string }{{"a", "session bundle"}, {"s", "stateless bundle"}} {
		for _, client := range []struct {
			era       string
			stateless bool
		}{{"2025-11-25", false}, {"2026-07-28", true}} {
			body := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"` + bundle.name + `.echo","arguments":{"text":"s"}`
			if client.stateless {
				body += meta
			}
			calls = append(calls, benchCall{name: client.era + " client, " + bundle.era, body: body + "}}", bundle: bundle.name, stateless: client.stateless})
		}
	}
	return calls
}

// BenchmarkHTTPCall relays tools/call through the HTTP front's handler to a bundle process,
// one at a time, for clients and bundles of each era: what the front and the node spend per
// call (the bundle runs in a process of its own, so -benchmem counts the node's allocations
// alone).
func BenchmarkHTTPCall(b *testing.B) {
	srv := benchServer(b)
	h := httpfront.New(srv, httpfront.Options{})
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
	sid := w.Header().Get(httpfront.HeaderSessionID)
	if sid == "" {
		b.Fatalf("initialize: %d %s", w.Code, w.Body)
	}
	for _, c := range benchCalls() {
		hdr := map[string]string{httpfront.HeaderSessionID: sid, httpfront.HeaderProtocolVersion: "2025-11-25"}
		if c.stateless {
			hdr = map[string]string{httpfront.HeaderProtocolVersion: "2026-07-28", httpfront.HeaderMethod: "tools/call", httpfront.HeaderName: c.bundle + ".echo"}
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if w := post(c.body, hdr); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), c.bundle+":s") {
					b.Fatalf("%d %s", w.Code, w.Body)
				}
			}
		})
	}
}

// BenchmarkStdioCall relays tools/call through the stdio front to a bundle process, one at
// a time, as BenchmarkHTTPCall does over HTTP.
func BenchmarkStdioCall(b *testing.B) {
	srv := benchServer(b)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- stdiofront.Serve(context.Background(), srv, inR, outW)
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
	for _, c := range benchCalls() {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if answer := call(c.body); !strings.Contains(answer, c.bundle+":s") {
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
