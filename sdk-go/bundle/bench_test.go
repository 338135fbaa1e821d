package bundle_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/toolnode/toolnode/sdk-go/bundle"
)

// BenchmarkCall measures the whole path of a greet call through Serve: reading the line,
// validating the arguments, running the handler and writing the answer, with one call or
// eight in flight, in a session and as 2026-07-28 requests carrying their _meta.
func BenchmarkCall(b *testing.B) {
	eras := map[string]string{
		"2025-11-25": "",
		"2026-07-28": `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"0"}}`,
	}
	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		for _, inflight := range []int{1, 8} {
			b.Run(fmt.Sprintf("era=%s/inflight=%d", era, inflight), func(b *testing.B) {
				benchCall(b, eras[era], inflight)
			})
		}
	}
}

func benchCall(b *testing.B, meta string, inflight int) {
	s := testServer(b, bundle.Options{})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- s.Serve(context.Background(), inR, outW)
		outW.Close()
	}()
	req := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{"name":"Ada"}` + meta + `}}` + "\n")
	tokens := make(chan struct{}, inflight)
	go func() {
		defer inW.Close()
		for range b.N {
			tokens <- struct{}{}
			if _, err := inW.Write(req); err != nil {
				return
			}
		}
	}()
	r := bufio.NewReader(outR)
	b.ResetTimer()
	for range b.N {
		if _, err := r.ReadSlice('\n'); err != nil {
			b.Fatal(err)
		}
		<-tokens
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
	if err := <-done; err != nil {
		b.Fatal(err)
	}
}
