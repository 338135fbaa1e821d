package bundle_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/toolnode/toolnode/sdk-go/bundle"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// askServer offers tools that ask the client something while they run.
func askServer(t *testing.T) *bundle.Server {
	t.Helper()
	s := bundle.NewServer(bundle.Options{Logger: discard()})
	add := func(name string, h bundle.Handler) {
		if err := s.AddTool(mcp.Tool{Name: name}, h); err != nil {
			t.Fatal(err)
		}
	}
	add("ask", func(ctx context.Context, c *bundle.Call) (*mcp.CallToolResult, error) {
		res, err := c.Request(ctx, "roots/list", map[string]any{"_meta": map[string]any{"mine": true}})
		if err != nil {
			return nil, err
		}
		return mcp.TextResult(string(res)), nil
	})
	add("sample", func(ctx context.Context, c *bundle.Call) (*mcp.CallToolResult, error) {
		res, err := c.CreateMessage(ctx, mcp.CreateMessageParams{Messages: []mcp.SamplingMessage{mcp.UserText("hi")}, MaxTokens: 10})
		if err != nil {
			return nil, err
		}
		return mcp.TextResult(res.Model + ": " + res.Text()), nil
	})
	add("elicit", func(ctx context.Context, c *bundle.Call) (*mcp.CallToolResult, error) {
		res, err := c.Elicit(ctx, mcp.ElicitParams{Message: "name?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"string"}}}`)})
		if err != nil {
			return nil, err
		}
		return mcp.TextResult(fmt.Sprintf("%s %s", res.Action, res.Content)), nil
	})
	add("not-an-object", func(ctx context.Context, c *bundle.Call) (*mcp.CallToolResult, error) {
		_, err := c.Request(ctx, "roots/list", []int{1})
		return nil, err
	})
	return s
}

func TestCallRequests(t *testing.T) {
	result := func(id, text string) string {
		b, _ := json.Marshal(text)
		return `{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":` + string(b) + `}]}}`
	}
	toolError := func(id, text string) string {
		b, _ := json.Marshal(text)
		return `{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":` + string(b) + `}],"isError":true}}`
	}
	// A step sends a line, if any, then expects want: a message, "" for none or "skip" for
	// any one.
	type step struct{ send, want string }
	tests := []struct {
		name  string
		steps []step
	}{
		{"request carries the call's id in _meta, beside its own", []step{
			{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"ask"}}`,
				`{"jsonrpc":"2.0","id":1,"method":"roots/list","params":{"_meta":{"mine":true,"io.toolnode/request":7}}}`},
			{`{"jsonrpc":"2.0","id":1,"result":{"roots":[]}}`, result("7", `{"roots":[]}`)},
		}},
		{"string call id", []step{
			{`{"jsonrpc":"2.0","id":"c-1","method":"tools/call","params":{"name":"ask"}}`,
				`{"jsonrpc":"2.0","id":1,"method":"roots/list","params":{"_meta":{"mine":true,"io.toolnode/request":"c-1"}}}`},
			{`{"jsonrpc":"2.0","id":1,"result":{}}`, result(`"c-1"`, `{}`)},
		}},
		{"answers to nothing of ours are ignored", []step{
			{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"ask"}}`,
				`{"jsonrpc":"2.0","id":1,"method":"roots/list","params":{"_meta":{"mine":true,"io.toolnode/request":7}}}`},
			{`{"jsonrpc":"2.0","id":99,"result":{"stray":true}}`, ""},
			{`{"jsonrpc":"2.0","id":"1","result":{"stray":true}}`, ""},
			{`{"jsonrpc":"2.0","id":1,"result":{"roots":[]}}`, result("7", `{"roots":[]}`)},
		}},
		{"error answer", []step{
			{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"ask"}}`,
				`{"jsonrpc":"2.0","id":1,"method":"roots/list","params":{"_meta":{"mine":true,"io.toolnode/request":7}}}`},
			{`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no roots here"}}`,
				toolError("7", "no roots here (JSON-RPC error -32601)")},
		}},
		{"sampling", []step{
			{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"sample"}}`,
				`{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{"_meta":{"io.toolnode/request":7},
					"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":10}}`},
			{`{"jsonrpc":"2.0","id":1,"result":{"role":"assistant","model":"m","content":{"type":"text","text":"hello"}}}`,
				result("7", "m: hello")},
		}},
		{"sampling answered with an array of blocks", []step{
			{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"sample"}}`, "skip"},
			{`{"jsonrpc":"2.0","id":1,"result":{"role":"assistant","model":"m","content":[{"type":"text","text":"a"},{"type":"image","data":"","mimeType":"image/png"},{"type":"text","text":"b"}]}}`,
				result("7", "m: a\nb")},
		}},
		{"elicitation", []step{
			{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"elicit"}}`,
				`{"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{"_meta":{"io.toolnode/request":7},
					"message":"name?","requestedSchema":{"type":"object","properties":{"n":{"type":"string"}}}}}`},
			{`{"jsonrpc":"2.0","id":1,"result":{"action":"accept","content":{"n":"Ada"}}}`, result("7", `accept {"n":"Ada"}`)},
		}},
		{"params that are not an object", []step{
			{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"not-an-object"}}`,
				toolError("7", "bundle: roots/list params: must be a JSON object, not [1]")},
		}},
	}
	s := askServer(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := serve(t, t.Context(), s)
			for _, st := range tt.steps {
				if st.send != "" {
					c.send(st.send)
				}
				switch st.want {
				case "":
					c.quiet(20 * time.Millisecond)
				case "skip":
					c.recv()
				default:
					diff(t, decode(t, st.want), c.recv())
				}
			}
		})
	}
}

func TestCallRequestCancelled(t *testing.T) {
	c := serve(t, t.Context(), askServer(t))
	c.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"ask"}}`)
	c.recv()
	// The client gives up the call: the handler's context ends, and the request the call
	// was waiting on is withdrawn in turn.
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`)
	diff(t, decode(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"context canceled","_meta":{"io.toolnode/request":7}}}`), c.recv())
	c.quiet(50 * time.Millisecond)
}

func TestCallRequestAtEndOfInput(t *testing.T) {
	c := serve(t, t.Context(), askServer(t))
	c.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"ask"}}`)
	c.recv()
	if err := c.closeInput(); err != nil {
		t.Errorf("Serve: %v", err)
	}
	diff(t, decode(t, `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"bundle: roots/list: the client's input ended before it answered"}],"isError":true}}`), c.recv())
}
