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
// eight in flight.
func BenchmarkCall(b *testing.B) {
	for _, inflight := range []int{1, 8} {
		b.Run(fmt.Sprintf("inflight=%d", inflight), func(b *testing.B) {
			s := testServer(b, bundle.Options{})
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			done := make(chan error, 1)
			go func() {
				done <- s.Serve(context.Background(), inR, outW)
				outW.Close()
			}()
			req := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{"name":"Ada"}}}` + "\n")
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
		})
	}
}
