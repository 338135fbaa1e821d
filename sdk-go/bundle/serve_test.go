package bundle_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolnode/toolnode/sdk-go/bundle"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

func TestRequests(t *testing.T) {
	initResult := func(version string) string {
		return `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"` + version + `",
			"capabilities":{"tools":{"listChanged":false},"logging":{}},
			"serverInfo":{"name":"test","title":"Test","version":"1.2.3"},"instructions":"Say hello."}}`
	}
	initialize := func(version string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`
	}
	toolError := func(id int, msg string) string {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": map[string]any{
			"content": []any{map[string]any{"type": "text", "text": msg}}, "isError": true}})
		return string(b)
	}
	tests := []struct {
		name string
		send []string // only the answer to the last line is awaited
		// want is the whole answer. An error without a message only checks that there is one.
		want string
	}{
		{"ping", []string{`{"jsonrpc":"2.0","id":1,"method":"ping"}`}, `{"jsonrpc":"2.0","id":1,"result":{}}`},
		{"string id", []string{`{"jsonrpc":"2.0","id":"a-1","method":"ping","params":{}}`}, `{"jsonrpc":"2.0","id":"a-1","result":{}}`},
		{"initialize 2024-11-05", []string{initialize("2024-11-05")}, initResult("2024-11-05")},
		{"initialize 2025-03-26", []string{initialize("2025-03-26")}, initResult("2025-03-26")},
		{"initialize 2025-06-18", []string{initialize("2025-06-18")}, initResult("2025-06-18")},
		{"initialize 2025-11-25", []string{initialize("2025-11-25")}, initResult("2025-11-25")},
		{"initialize unknown version", []string{initialize("2099-01-01")}, initResult(mcp.LatestVersion)},
		{"initialize without params", []string{`{"jsonrpc":"2.0","id":1,"method":"initialize"}`}, initResult(mcp.LatestVersion)},
		{"initialize bad params", []string{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":5}}`},
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32602}}`},
		{"unknown method", []string{`{"jsonrpc":"2.0","id":2,"method":"no/such"}`},
			`{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"method not found: no/such"}}`},
		{"bad JSON", []string{`{"jsonrpc":"2.0",`}, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700}}`},
		{"not an object", []string{`"hello"`}, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600}}`},
		{"batch", []string{`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`}, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600}}`},
		{"wrong jsonrpc", []string{`{"jsonrpc":"1.0","id":3,"method":"ping"}`}, `{"jsonrpc":"2.0","id":3,"error":{"code":-32600}}`},
		{"no method", []string{`{"jsonrpc":"2.0","id":4}`}, `{"jsonrpc":"2.0","id":4,"error":{"code":-32600}}`},
		{"method not a string", []string{`{"jsonrpc":"2.0","id":5,"method":5}`}, `{"jsonrpc":"2.0","id":5,"error":{"code":-32600}}`},
		{"null id", []string{`{"jsonrpc":"2.0","id":null,"method":"ping"}`}, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600}}`},
		{"object id", []string{`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`}, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600}}`},
		{"responses and notifications get no answer", []string{
			`{"jsonrpc":"2.0","id":9,"result":{}}`,
			`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			`{"jsonrpc":"2.0","method":"notifications/no-such"}`,
			`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":12345}}`,
			`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		}, `{"jsonrpc":"2.0","id":1,"result":{}}`},
		{"blank lines and CRLF", []string{"", "  ", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r"}, `{"jsonrpc":"2.0","id":1,"result":{}}`},
		{"tools/call without params", []string{`{"jsonrpc":"2.0","id":6,"method":"tools/call"}`}, `{"jsonrpc":"2.0","id":6,"error":{"code":-32602}}`},
		{"tools/call name not a string", []string{`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":5}}`}, `{"jsonrpc":"2.0","id":6,"error":{"code":-32602}}`},
		{"unknown tool", []string{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope"}}`},
			`{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"unknown tool \"nope\""}}`},
		{"greet", []string{`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"greet","arguments":{"name":"Ada"}}}`},
			`{"jsonrpc":"2.0","id":8,"result":{"content":[{"type":"text","text":"Hello, Ada!"}]}}`},
		{"escaped names and values", []string{`{"jsonrpc":"2.0","id":8,"method":"tools\/call","p\u0061rams":{"n\u0061me":"gr\u0065et","arguments":{"name":"Ada"}}}`},
			`{"jsonrpc":"2.0","id":8,"result":{"content":[{"type":"text","text":"Hello, Ada!"}]}}`},
		{"a repeated member: the last counts", []string{`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"nope","arguments":{},"name":"greet","arguments":{"name":"Ada"}}}`},
			`{"jsonrpc":"2.0","id":8,"result":{"content":[{"type":"text","text":"Hello, Ada!"}]}}`},
		{"tools/call _meta not an object", []string{`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"greet","_meta":5}}`}, `{"jsonrpc":"2.0","id":6,"error":{"code":-32602}}`},
		{"tools/call protocol version not a string", []string{`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"greet","_meta":{"io.modelcontextprotocol/protocolVersion":5}}}`},
			`{"jsonrpc":"2.0","id":6,"error":{"code":-32602}}`},
		{"tools/call requestState not a string", []string{`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"greet","requestState":5}}`}, `{"jsonrpc":"2.0","id":6,"error":{"code":-32602}}`},
		{"tools/call params not an object", []string{`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":["greet"]}`}, `{"jsonrpc":"2.0","id":6,"error":{"code":-32602}}`},
		{"jsonrpc not a string", []string{`{"jsonrpc":2,"id":3,"method":"ping"}`}, `{"jsonrpc":"2.0","id":3,"error":{"code":-32600}}`},
		{"missing argument", []string{`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"greet","arguments":{}}}`},
			toolError(8, `missing required argument "name"`)},
		{"no arguments", []string{`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"greet"}}`},
			toolError(8, `missing required argument "name"`)},
		{"wrong type", []string{`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"greet","arguments":{"name":5}}}`},
			toolError(8, `argument "name" must be a string`)},
		{"arguments not an object", []string{`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"greet","arguments":"Ada"}}`},
			toolError(8, `arguments must be an object`)},
		{"not an integer", []string{`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":1.5}}}`},
			toolError(8, `argument "ms" must be an integer`)},
		{"above maximum", []string{`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":70000}}}`},
			toolError(8, `argument "ms": maximum: got 70,000, want 60,000`)},
		{"nested missing", []string{`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"point","arguments":{"p":{}}}}`},
			toolError(8, `missing required argument "p.x"`)},
		{"nested wrong type", []string{`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"point","arguments":{"p":{"x":"1"}}}}`},
			toolError(8, `argument "p.x" must be a number`)},
		{"handler error", []string{`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"fail"}}`}, toolError(8, "boom")},
		{"handler panic", []string{`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"panic"}}`}, toolError(8, `tool "panic" failed: oops`)},
		{"nil result", []string{`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"nil"}}`},
			`{"jsonrpc":"2.0","id":8,"result":{"content":[]}}`},
		{"structured result", []string{`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"lamp","arguments":{}}}`},
			`{"jsonrpc":"2.0","id":8,"result":{"content":[{"type":"text","text":"{\"on\":true}"}],"structuredContent":{"on":true}}}`},
		{"result breaking the output schema", []string{`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"badout"}}`},
			toolError(8, `tool "badout" returned an invalid result: "on": got string, want boolean`)},
		{"result without structured content", []string{`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"noout"}}`},
			toolError(8, `tool "noout" returned an invalid result: no structuredContent although the tool declares an output schema`)},
		{"setLevel", []string{`{"jsonrpc":"2.0","id":9,"method":"logging/setLevel","params":{"level":"warning"}}`}, `{"jsonrpc":"2.0","id":9,"result":{}}`},
		{"setLevel unknown level", []string{`{"jsonrpc":"2.0","id":9,"method":"logging/setLevel","params":{"level":"loud"}}`},
			`{"jsonrpc":"2.0","id":9,"error":{"code":-32602,"message":"unknown log level \"loud\""}}`},
		{"bad cursor", []string{`{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"cursor":"zzz"}}`}, `{"jsonrpc":"2.0","id":9,"error":{"code":-32602}}`},
	}
	s := testServer(t, bundle.Options{Name: "test", Title: "Test", Version: "1.2.3", Instructions: "Say hello."})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := serve(t, t.Context(), s)
			for _, line := range tt.send {
				c.send(line)
			}
			want, got := decode(t, tt.want), c.recv()
			if werr, ok := want["error"].(map[string]any); ok && werr["message"] == nil {
				if gerr, ok := got["error"].(map[string]any); ok {
					if msg, _ := gerr["message"].(string); msg == "" {
						t.Errorf("error without a message: %v", got)
					}
					delete(gerr, "message")
				}
			}
			diff(t, want, got)
		})
	}
}

func TestToolsList(t *testing.T) {
	// Schemas are passed through untouched, keywords this code does not know included.
	schema := `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","$defs":{"n":{"type":"integer"}},"properties":{"n":{"$ref":"#/$defs/n"}},"additionalProperties":false,"x-vendor":[1,2]}`
	s := bundle.NewServer(bundle.Options{PageSize: 2, Logger: discard()})
	var want []any
	for i := range 5 {
		tool := mcp.Tool{
			Name:        fmt.Sprintf("t%d", i),
			Description: "tool number " + fmt.Sprint(i),
			InputSchema: json.RawMessage(schema),
			Annotations: json.RawMessage(`{"readOnlyHint":true}`),
		}
		if err := s.AddTool(tool, func(context.Context, *bundle.Call) (*mcp.CallToolResult, error) { return nil, nil }); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(tool)
		want = append(want, decode(t, string(b)))
	}

	c := serve(t, t.Context(), s)
	var got []any
	var pages int
	params := map[string]any{}
	for {
		c.sendJSON(map[string]any{"jsonrpc": "2.0", "id": pages, "method": "tools/list", "params": params})
		res, _ := c.recv()["result"].(map[string]any)
		tools, _ := res["tools"].([]any)
		got = append(got, tools...)
		pages++
		cursor, ok := res["nextCursor"].(string)
		if !ok || pages > 5 {
			break
		}
		params = map[string]any{"cursor": cursor}
	}
	if pages != 3 {
		t.Errorf("got %d pages of at most 2 tools for 5 tools, want 3", pages)
	}
	diff(t, want, got)
}

func TestToolsListEmpty(t *testing.T) {
	c := serve(t, t.Context(), bundle.NewServer(bundle.Options{Logger: discard()}))
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	diff(t, decode(t, `{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`), c.recv())
}

func TestAddToolErrors(t *testing.T) {
	h := func(context.Context, *bundle.Call) (*mcp.CallToolResult, error) { return nil, nil }
	tests := []struct {
		name    string
		tool    mcp.Tool
		handler bundle.Handler
		want    string
	}{
		{"empty name", mcp.Tool{}, h, "must be 1 to 128 characters"},
		{"bad character", mcp.Tool{Name: "a b"}, h, "must be 1 to 128 characters"},
		{"too long", mcp.Tool{Name: strings.Repeat("a", 129)}, h, "must be 1 to 128 characters"},
		{"no handler", mcp.Tool{Name: "a"}, nil, "has no handler"},
		{"schema not JSON", mcp.Tool{Name: "a", InputSchema: json.RawMessage(`{`)}, h, `tool "a": input schema`},
		{"schema invalid", mcp.Tool{Name: "a", InputSchema: json.RawMessage(`{"type":5}`)}, h, `tool "a": input schema`},
		{"remote reference", mcp.Tool{Name: "a", InputSchema: json.RawMessage(`{"$ref":"https://example.com/s.json"}`)}, h, `tool "a": input schema`},
		{"file reference", mcp.Tool{Name: "a", InputSchema: json.RawMessage(`{"$ref":"/etc/passwd"}`)}, h, `tool "a": input schema`},
		{"output schema invalid", mcp.Tool{Name: "a", OutputSchema: json.RawMessage(`{"required":"on"}`)}, h, `tool "a": output schema`},
		{"duplicate", mcp.Tool{Name: "taken"}, h, `tool "taken" is already added`},
	}
	s := bundle.NewServer(bundle.Options{Logger: discard()})
	if err := s.AddTool(mcp.Tool{Name: "taken"}, h); err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.AddTool(tt.tool, tt.handler)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("AddTool: got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestStructuredResultNeedsAnObject(t *testing.T) {
	for _, v := range []any{[]int{1}, "on", nil, make(chan int)} {
		if _, err := bundle.StructuredResult(v); err == nil {
			t.Errorf("StructuredResult(%#v): no error", v)
		}
	}
}

func TestCancel(t *testing.T) {
	c := serve(t, t.Context(), testServer(t, bundle.Options{}))
	start := time.Now()
	c.sendJSON(call(7, "sleep", map[string]any{"ms": 20000}))
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"changed my mind"}}`)
	c.send(`{"jsonrpc":"2.0","id":8,"method":"ping"}`)
	diff(t, decode(t, `{"jsonrpc":"2.0","id":8,"result":{}}`), c.recv())
	c.quiet(200 * time.Millisecond)
	// Serve waits for the calls in flight: returning early shows the handler saw the cancel.
	if err := c.closeInput(); err != nil {
		t.Errorf("Serve: %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the cancelled call ran for %v", d)
	}
	c.quiet(0)
}

func TestProgress(t *testing.T) {
	for _, token := range []any{"tok-1", 42} {
		t.Run(fmt.Sprint(token), func(t *testing.T) {
			c := serve(t, t.Context(), testServer(t, bundle.Options{}))
			req := call(1, "sleep", map[string]any{"ms": 10})
			req["params"].(map[string]any)["_meta"] = map[string]any{"progressToken": token}
			c.sendJSON(req)
			b, _ := json.Marshal(token)
			diff(t, decode(t, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":`+string(b)+`,"progress":0,"total":10,"message":"starting","_meta":{"io.toolnode/request":1}}}`), c.recv())
			diff(t, decode(t, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"slept 10 ms"}]}}`), c.recv())
		})
	}
	t.Run("no token", func(t *testing.T) {
		c := serve(t, t.Context(), testServer(t, bundle.Options{}))
		c.sendJSON(call(1, "sleep", map[string]any{"ms": 10}))
		diff(t, decode(t, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"slept 10 ms"}]}}`), c.recv())
	})
}

func TestLogging(t *testing.T) {
	// _meta names the call the message is about, for a node with several clients.
	msg := func(level string) map[string]any {
		return decode(t, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"`+level+`","logger":"log","data":{"said":"`+level+`"},"_meta":{"io.toolnode/request":1}}}`)
	}
	done := decode(t, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"logged"}]}}`)
	c := serve(t, t.Context(), testServer(t, bundle.Options{}))

	c.sendJSON(call(1, "log", nil))
	for _, level := range []string{"debug", "info", "error"} {
		diff(t, msg(level), c.recv())
	}
	diff(t, done, c.recv())

	c.send(`{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"warning"}}`)
	c.recv()
	c.sendJSON(call(1, "log", nil))
	diff(t, msg("error"), c.recv())
	diff(t, done, c.recv())
}

func TestCallsRunConcurrently(t *testing.T) {
	const n = 8
	var started sync.WaitGroup
	started.Add(n)
	s := bundle.NewServer(bundle.Options{Logger: discard()})
	// Each call waits for all of them to start: they can only finish if they run together.
	err := s.AddTool(mcp.Tool{Name: "gather"}, func(ctx context.Context, _ *bundle.Call) (*mcp.CallToolResult, error) {
		started.Done()
		started.Wait()
		return mcp.TextResult("together"), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	c := serve(t, t.Context(), s)
	for i := range n {
		c.sendJSON(call(i, "gather", nil))
	}
	var ids []int
	for range n {
		m := c.recv()
		ids = append(ids, int(m["id"].(float64)))
	}
	slices.Sort(ids)
	diff(t, []int{0, 1, 2, 3, 4, 5, 6, 7}, ids)
}

func TestDuplicateIDInFlight(t *testing.T) {
	c := serve(t, t.Context(), testServer(t, bundle.Options{}))
	c.sendJSON(call(1, "sleep", map[string]any{"ms": 300}))
	c.sendJSON(call(1, "sleep", map[string]any{"ms": 0}))
	got := c.recv()
	if e, _ := got["error"].(map[string]any); e["code"] != float64(mcp.CodeInvalidRequest) {
		t.Errorf("second call with id 1 in flight: got %v, want error %d", got, mcp.CodeInvalidRequest)
	}
	diff(t, decode(t, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"slept 300 ms"}]}}`), c.recv())
}

func TestLongLines(t *testing.T) {
	const n = 24 << 20
	c := serve(t, t.Context(), testServer(t, bundle.Options{}))
	arg := strings.Repeat("x", n)
	c.sendJSON(call(1, "size", map[string]any{"blob": arg}))
	want := fmt.Sprint(len(`{"blob":""}`) + n)
	diff(t, decode(t, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"`+want+`"}]}}`), c.recv())

	c.sendJSON(call(2, "big", map[string]any{"n": n}))
	res := c.recv()["result"].(map[string]any)
	text := res["content"].([]any)[0].(map[string]any)["text"].(string)
	if len(text) != n || text[:3] != "abc" {
		t.Errorf("got a text of %d bytes starting %.3q, want %d bytes starting abc", len(text), text, n)
	}
}

func TestEOFWaitsForCalls(t *testing.T) {
	c := serve(t, t.Context(), testServer(t, bundle.Options{}))
	c.sendJSON(call(1, "sleep", map[string]any{"ms": 200}))
	if err := c.closeInput(); err != nil {
		t.Errorf("Serve: %v", err)
	}
	diff(t, decode(t, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"slept 200 ms"}]}}`), c.recv())
}

func TestContextCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	c := serve(t, ctx, testServer(t, bundle.Options{}))
	c.sendJSON(call(1, "sleep", map[string]any{"ms": 20000}))
	c.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	c.recv()
	cancel()
	select {
	case err := <-c.done:
		c.done <- err
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Serve: got %v, want %v", err, context.Canceled)
		}
	case <-time.After(timeout):
		t.Fatal("Serve did not return when its context was cancelled")
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, io.ErrClosedPipe }

func TestWriteFailureEndsServe(t *testing.T) {
	inR, inW := io.Pipe()
	defer inW.Close()
	done := make(chan error, 1)
	go func() { done <- testServer(t, bundle.Options{}).Serve(t.Context(), inR, failingWriter{}) }()
	// The input stays open: Serve must notice the client is gone by its output alone.
	if _, err := io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, io.ErrClosedPipe) {
			t.Errorf("Serve: got %v, want an error wrapping %v", err, io.ErrClosedPipe)
		}
	case <-time.After(timeout):
		t.Fatal("Serve did not return after a failed write")
	}
	inR.Close()
}
