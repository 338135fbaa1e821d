package examples_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"
)

// BenchmarkGreet measures calls per second of each example bundle as a real process over
// pipes, in each era (a session opened by initialize, and 2026-07-28 requests that carry
// their protocol version and capabilities in _meta), with one greet call in flight and
// with eight pipelined. Beside calls/s, which a loaded machine drags down, it reports the
// CPU time the bundle process spent per call (user and system, its start included), which
// load changes far less.
//
//	go test ./examples -run '^$' -bench Greet
func BenchmarkGreet(b *testing.B) {
	for _, lang := range langs {
		for _, era := range []string{"2025-11-25", "2026-07-28"} {
			for _, inflight := range []int{1, 8} {
				b.Run(fmt.Sprintf("%s/%s/inflight=%d", lang, era, inflight), func(b *testing.B) {
					benchGreet(b, lang, era, inflight)
				})
			}
		}
	}
}

// statelessMeta is the _meta of a 2026-07-28 greet call, as a client sends it.
const statelessMeta = `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"0"}}`

func benchGreet(b *testing.B, lang, era string, inflight int) {
	cmd, err := exampleCommand(lang)
	if err != nil {
		b.Skip(err)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	// Ends the bundle; the deferred call covers the paths that fail early.
	end := sync.OnceValue(func() error {
		stdin.Close()
		io.Copy(io.Discard, stdout)
		return cmd.Wait()
	})
	defer end()
	out := bufio.NewReader(stdout)
	meta := statelessMeta
	if era != "2026-07-28" {
		meta = ""
		if _, err := io.WriteString(stdin, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+era+`","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}`+"\n"+
			`{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
			b.Fatal(err)
		}
		if _, err := out.ReadSlice('\n'); err != nil {
			b.Fatal(err)
		}
	}

	// The writer keeps at most inflight calls unanswered: it takes a token per call and
	// the reader gives one back per answer.
	tokens := make(chan struct{}, inflight)
	writeErr := make(chan error, 1)
	stop := make(chan struct{})
	defer close(stop)
	b.ResetTimer()
	go func() {
		for i := range b.N {
			select {
			case tokens <- struct{}{}:
			case <-stop:
				writeErr <- nil
				return
			}
			req := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"greet","arguments":{"name":"Ada"}%s}}`+"\n", i+1, meta)
			if _, err := io.WriteString(stdin, req); err != nil {
				writeErr <- err
				return
			}
		}
		writeErr <- nil
	}()
	for range b.N {
		line, err := out.ReadSlice('\n')
		if err != nil {
			b.Fatalf("reading answers: %v", err)
		}
		if !bytes.Contains(line, []byte("Hello, Ada!")) {
			b.Fatalf("unexpected answer: %s", line)
		}
		<-tokens
	}
	b.StopTimer()
	if err := <-writeErr; err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
	if err := end(); err != nil {
		b.Fatalf("%s example: %v", lang, err)
	}
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	b.ReportMetric(float64(cpu.Nanoseconds())/1e3/float64(b.N), "bundle-cpu-µs/call")
}
