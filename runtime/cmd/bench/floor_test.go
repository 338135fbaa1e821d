package main

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestFloorAnswersTheCallsOfTheBenchmark drives the floor with the client the benchmark
// uses, over real HTTP on loopback.
func TestFloorAnswersTheCallsOfTheBenchmark(t *testing.T) {
	defer goleak.VerifyNone(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- serveFloor(ctx, ln) }()
	defer func() {
		cancel()
		if err := <-served; err != nil {
			t.Error(err)
		}
	}()
	c, err := startHTTP("http://"+ln.Addr().String()+"/mcp", "echo")
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	if c.session == "" || c.version != "2025-11-25" {
		t.Errorf("after initialize: session %q, version %q; want a session and 2025-11-25", c.session, c.version)
	}
	tests := []struct {
		name, tool, args string
		wantErr          string
	}{
		{"echo", "echo", `{"text":"bench"}`, ""},
		{"echo of other text", "echo", `{"text":"über"}`, ""},
		{"any tool echoes its one argument", "go.greet", `{"name":"bench"}`, ""},
		{"no argument", "echo", `{}`, "HTTP 400"},
		{"an empty text", "echo", `{"text":""}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c.tool = tt.tool
			err := c.call(tt.args)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("call: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("call: %v; want an error with %q", err, tt.wantErr)
			}
		})
	}
	resp, err := c.post(`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`)
	if err != nil {
		t.Fatal(err)
	}
	b, err := answer(resp)
	if err != nil || !strings.Contains(string(b), `"name":"echo"`) {
		t.Errorf("tools/list: %s, %v; want the echo tool", b, err)
	}
}

func TestEchoedTellsResultsFromErrors(t *testing.T) {
	tests := []struct {
		name, msg string
		ok        bool
	}{
		{"echo", `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"bench"}]}}`, true},
		{"greeting holding the text", `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Hello, bench!"}],"isError":false}}`, true},
		{"spaced JSON", `{"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "bench"}]}}`, true},
		{"other text", `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"bunch"}]}}`, false},
		{"tool error", `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"bench failed"}],"isError":true}}`, false},
		{"JSON-RPC error", `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"bench"}}`, false},
		{"not JSON", `accepted (no response yet)`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := echoed([]byte(tt.msg), `{"text":"bench"}`); (err == nil) != tt.ok {
				t.Errorf("echoed(%s) = %v; want ok %v", tt.msg, err, tt.ok)
			}
		})
	}
}

const sampleTraces = `File: toolnode
Type: cpu
-----------+-------------------------------------------------------
      20ms   internal/runtime/syscall/linux.Syscall6
             syscall.Syscall
             net/http.(*response).finishRequest
             net/http.(*conn).serve
-----------+-------------------------------------------------------
      10ms   runtime.mallocgc
             encoding/json.Unmarshal
             github.com/toolnode/toolnode/runtime/internal/front/httpfront.(*Handler).post
             net/http.(*conn).serve
-----------+-------------------------------------------------------
      1.50ms   runtime.gosched_m
             runtime.mcall
-----------+-------------------------------------------------------
       5ms   runtime.memmove
             github.com/toolnode/toolnode/runtime/internal/rpc.(*Pending).Deliver
             github.com/toolnode/toolnode/runtime/internal/rpc.(*Conn).read
-----------+-------------------------------------------------------
       4ms   internal/runtime/syscall/linux.Syscall6
             syscall.Syscall
             os.(*File).Write
             github.com/toolnode/toolnode/runtime/internal/rpc.(*Outbox).Send
             github.com/toolnode/toolnode/runtime/internal/node.(*Node).send
             github.com/toolnode/toolnode/runtime/internal/front/httpfront.(*Handler).post
             net/http.(*conn).serve
-----------+-------------------------------------------------------
       2ms   internal/runtime/syscall/linux.Syscall6
             syscall.RawSyscall6
             github.com/toolnode/toolnode/runtime/internal/rpc.rawRead
             github.com/toolnode/toolnode/runtime/internal/rpc.(*pollReader).read
             internal/poll.(*FD).RawRead
             os.(*rawConn).Read
             github.com/toolnode/toolnode/runtime/internal/rpc.(*pollReader).Read
             bufio.(*Reader).fill
             github.com/toolnode/toolnode/runtime/internal/rpc.(*Conn).read
-----------+-------------------------------------------------------
`

func TestTracesAreParsedAndSortedIntoStages(t *testing.T) {
	stacks, total := parseTraces([]byte(sampleTraces))
	if len(stacks) != 6 || total != 42500*time.Microsecond {
		t.Fatalf("parsed %d stacks of %s in all; want 6 of 42.5ms", len(stacks), total)
	}
	if got := stacks[1].frames[2]; got != "github.com/toolnode/toolnode/runtime/internal/front/httpfront.(*Handler).post" {
		t.Errorf("third frame of the second stack: %q", got)
	}
	var b strings.Builder
	// 85 µs of CPU per call over 42.5 ms of samples: each ms sampled is 2 µs per call.
	node := profiled{name: "node", perCall: 85 * time.Microsecond, stacks: stacks, total: total}
	floor := profiled{name: "floor", perCall: 40 * time.Microsecond, stacks: stacks[:1], total: 20 * time.Millisecond}
	writeBreakdown(&b, node, floor)
	for _, want := range []string{
		"| net/http: flush the response (write(2) to the socket) | 40.0 µs | 40.0 µs | +0.0 µs |",
		"| front: decode the request as JSON-RPC | 20.0 µs | 0.0 µs | +20.0 µs |",
		"| garbage collector's own work (mark, sweep, their yields) | 3.0 µs |",
		"| node: take the answer off the bundle's stdout (parse, match the id, wake the caller) | 10.0 µs |",
		"| node: write the call to the bundle's stdin (write(2) to the pipe) | 8.0 µs |",
		"| node: read the bundle's stdout (read(2) from the pipe) | 4.0 µs |",
		"| system calls (read, write, epoll_wait, futex...) | 52.0 µs | 40.0 µs | +12.0 µs |",
		"| allocation (mallocgc, with its GC assists) | 20.0 µs |",
		"Where node spends most over floor: front: decode the request as JSON-RPC (+20.0 µs); " +
			"node: take the answer off the bundle's stdout (parse, match the id, wake the caller) (+10.0 µs); " +
			"node: write the call to the bundle's stdin (write(2) to the pipe) (+8.0 µs).",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("breakdown lacks %q:\n%s", want, b.String())
		}
	}
}
