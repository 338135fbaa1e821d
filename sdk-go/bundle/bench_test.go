package bundle_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"testing"

	"github.com/toolnode/toolnode/sdk-go/bundle"
)

// callMetas are the _meta of the calls BenchmarkCall makes: none (a session's call), the
// least a 2026-07-28 call carries, and what the node sends a 2026-07-28 bundle with each
// call it relays.
var callMetas = []struct{ name, meta string }{
	{"session", ``},
	{"stateless", `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},`},
	{"relayed", `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
		`"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true},"sampling":{},"elicitation":{}},"io.modelcontextprotocol/logLevel":"debug","progressToken":"tn-B-NM6fFS-1"},`},
}

// BenchmarkCall measures the whole path of a greet call through Serve: reading the line,
// validating the arguments, running the handler and writing the answer, with one call or
// eight in flight, in a session and on its own under 2026-07-28.
func BenchmarkCall(b *testing.B) {
	for _, m := range callMetas {
		for _, inflight := range []int{1, 8} {
			benchmarkCall(b, m.name, m.meta, inflight)
		}
	}
}

func benchmarkCall(b *testing.B, name, meta string, inflight int) {
	{
		b.Run(fmt.Sprintf("%s/inflight=%d", name, inflight), func(b *testing.B) {
			s := testServer(b, bundle.Options{})
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			done := make(chan error, 1)
			go func() {
				done <- s.Serve(context.Background(), inR, outW)
				outW.Close()
			}()
			// Each call has an id of its own: calls in flight under one id are refused.
			rest := []byte(`,"method":"tools/call","params":{` + meta + `"name":"greet","arguments":{"name":"Ada"}}}` + "\n")
			tokens := make(chan struct{}, inflight)
			go func() {
				defer inW.Close()
				var req []byte
				for i := range b.N {
					tokens <- struct{}{}
					req = append(strconv.AppendInt(append(req[:0], `{"jsonrpc":"2.0","id":`...), int64(i), 10), rest...)
					if _, err := inW.Write(req); err != nil {
						return
					}
				}
			}()
			r := bufio.NewReader(outR)
			b.ResetTimer()
			for range b.N {
				answer, err := r.ReadSlice('\n')
				if err != nil {
					b.Fatal(err)
				}
				if !bytes.Contains(answer, []byte("Hello, Ada")) {
					b.Fatalf("answer %s", answer)
				}
				<-tokens
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
			if err := <-done; err != nil {
				b.Fatal(err)
			}
		})
	}
}
