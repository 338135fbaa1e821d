package bundle_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolnode/toolnode/sdk-go/bundle"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// meta2026 is the _meta of a 2026-07-28 request from a client with caps.
func meta2026(caps string) string {
	return `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps + `}`
}

// inputServer offers a tool asking two questions at once, a prompt and a resource asking
// one each.
func inputServer(t *testing.T) *bundle.Server {
	t.Helper()
	s := bundle.NewServer(bundle.Options{Name: "s", Version: "1", Logger: discard()})
	name := json.RawMessage(`{"message":"name?","requestedSchema":{"type":"object","properties":{"n":{"type":"string"}}}}`)
	err := s.AddTool(mcp.Tool{Name: "both"}, func(ctx context.Context, c *bundle.Call) (*mcp.CallToolResult, error) {
		a, err := c.Ask(ctx, mcp.InputRequests{"who": {Method: mcp.MethodElicitation, Params: name}, "roots": {Method: mcp.MethodRootsList}})
		if err != nil {
			return nil, err
		}
		return mcp.TextResult(string(a["who"]) + " " + string(a["roots"])), nil
	})
	if err == nil {
		err = s.AddPrompt(mcp.Prompt{Name: "p"}, func(ctx context.Context, r *bundle.PromptRequest) (*mcp.GetPromptResult, error) {
			a, err := r.Ask(ctx, mcp.InputRequests{"ctx": {Method: mcp.MethodElicitation, Params: name}})
			if err != nil {
				return nil, err
			}
			return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: "user", Content: mcp.TextContent(string(a["ctx"]))}}}, nil
		})
	}
	if err == nil {
		err = s.AddResource(mcp.Resource{URI: "test://r", Name: "r"}, func(ctx context.Context, r *bundle.ResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{{Text: "r"}}, nil
		})
	}
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestStateless(t *testing.T) {
	caps := `{"elicitation":{},"roots":{}}`
	tests := []struct {
		name string
		send string
		want string
	}{
		{"a resource read carries a cache hint",
			`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"test://r",` + meta2026(`{}`) + `}}`,
			`{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"test://r","text":"r"}],"resultType":"complete","ttlMs":60000,"cacheScope":"public"}}`},
		{"an unknown resource is -32602",
			`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"test://none",` + meta2026(`{}`) + `}}`,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"resource \"test://none\" not found","data":{"uri":"test://none"}}}`},
		{"an unknown resource in a session stays -32002",
			`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"test://none"}}`,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"resource \"test://none\" not found","data":{"uri":"test://none"}}}`},
		{"a missing capability is -32021",
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"both",` + meta2026(`{"elicitation":{}}`) + `}}`,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32021,"message":"roots/list needs the client capability \"roots\"","data":{"requiredCapabilities":{"roots":{}}}}}`},
		{"an unknown version is -32022",
			`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01"}}}`,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"unsupported protocol version \"2099-01-01\"","data":{"supported":["2024-11-05","2025-03-26","2025-06-18","2025-11-25","2026-07-28"],"requested":"2099-01-01"}}}`},
		{"a forged state is -32602",
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"both","requestState":"e30.AAAA",` + meta2026(caps) + `}}`,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid requestState: it failed its integrity check"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := serve(t, t.Context(), inputServer(t))
			c.send(tt.send)
			diff(t, decode(t, tt.want), c.recv())
		})
	}
}

func TestStatelessInputRounds(t *testing.T) {
	caps := `{"elicitation":{},"roots":{}}`
	c := serve(t, t.Context(), inputServer(t))
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"both",` + meta2026(caps) + `}}`)
	first := c.recv()["result"].(map[string]any)
	if first["resultType"] != "input_required" || len(first["inputRequests"].(map[string]any)) != 2 {
		t.Fatalf("first round: %v", first)
	}
	state, _ := json.Marshal(first["requestState"])
	// Only one answer: the other question is asked again, the answer kept in the state.
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"both","requestState":` + string(state) +
		`,"inputResponses":{"who":{"action":"accept","content":{"n":"Ada"}}},` + meta2026(caps) + `}}`)
	second := c.recv()["result"].(map[string]any)
	if _, ok := second["inputRequests"].(map[string]any)["roots"]; !ok || len(second["inputRequests"].(map[string]any)) != 1 {
		t.Fatalf("second round: %v", second)
	}
	state, _ = json.Marshal(second["requestState"])
	c.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"both","requestState":` + string(state) +
		`,"inputResponses":{"roots":{"roots":[]}},` + meta2026(caps) + `}}`)
	diff(t, decode(t, `{"jsonrpc":"2.0","id":3,"result":{"resultType":"complete","content":[{"type":"text","text":"{\"action\":\"accept\",\"content\":{\"n\":\"Ada\"}} {\"roots\":[]}"}]}}`), c.recv())

	// The state of one call does not open another.
	c.send(`{"jsonrpc":"2.0","id":4,"method":"prompts/get","params":{"name":"p","requestState":` + string(state) + `,` + meta2026(caps) + `}}`)
	if got := c.recv(); !strings.Contains(errorMessage(got), "another request") {
		t.Errorf("state moved to a prompt: %v", got)
	}
	c.send(`{"jsonrpc":"2.0","id":5,"method":"prompts/get","params":{"name":"p",` + meta2026(caps) + `}}`)
	if got := c.recv()["result"].(map[string]any); got["resultType"] != "input_required" {
		t.Errorf("prompt round one: %v", got)
	}
}

func errorMessage(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	s, _ := e["message"].(string)
	return s
}

func TestHostileLines(t *testing.T) {
	deep := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `}}`
	for name, line := range map[string]string{
		"nested 5000 deep": deep,
		"invalid UTF-8":    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"pi\xffng\"}",
		"a raw NUL":        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"\x00}",
	} {
		t.Run(name, func(t *testing.T) {
			c := serve(t, t.Context(), inputServer(t))
			c.send(line)
			if got := c.recv(); got["id"] != nil || got["error"].(map[string]any)["code"] != float64(mcp.CodeParseError) {
				t.Errorf("got %v, want a parse error", got)
			}
			c.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
			diff(t, decode(t, `{"jsonrpc":"2.0","id":2,"result":{}}`), c.recv())
		})
	}
}
