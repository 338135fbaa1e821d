package bundle_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/toolnode/toolnode/sdk-go/bundle"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// promptServer offers the prompts the tests get and complete.
func promptServer(t *testing.T) *bundle.Server {
	t.Helper()
	s := bundle.NewServer(bundle.Options{Logger: discard()})
	user := func(c mcp.Content) mcp.PromptMessage { return mcp.PromptMessage{Role: "user", Content: c} }
	many := make([]string, 150)
	for i := range many {
		many[i] = fmt.Sprintf("v%03d", i)
	}
	for _, err := range []error{
		s.AddPrompt(mcp.Prompt{Name: "plain", Description: "no arguments"},
			func(context.Context, *bundle.PromptRequest) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{user(mcp.TextContent("hi"))}}, nil
			}),
		s.AddPrompt(mcp.Prompt{Name: "trip", Arguments: []mcp.PromptArgument{
			{Name: "city", Required: true}, {Name: "days", Description: "how long"},
		}}, func(_ context.Context, r *bundle.PromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Description: "a trip", Messages: []mcp.PromptMessage{
				user(mcp.TextContent(fmt.Sprintf("%s for %q days", r.Arguments["city"], r.Arguments["days"]))),
				user(mcp.ImageContent([]byte("png"), "image/png")),
			}}, nil
		}),
		s.AddPrompt(mcp.Prompt{Name: "nil"}, func(context.Context, *bundle.PromptRequest) (*mcp.GetPromptResult, error) { return nil, nil }),
		s.AddPrompt(mcp.Prompt{Name: "fail"}, func(context.Context, *bundle.PromptRequest) (*mcp.GetPromptResult, error) {
			return nil, errors.New("no inspiration")
		}),
		s.AddPrompt(mcp.Prompt{Name: "refuse"}, func(context.Context, *bundle.PromptRequest) (*mcp.GetPromptResult, error) {
			return nil, &bundle.RPCError{Code: -32000, Message: "not today"}
		}),
		s.CompletePromptArgument("trip", "city", bundle.CompleteFrom("Paris", "Parma", "Porto")),
		s.CompletePromptArgument("trip", "days", func(_ context.Context, value string, args map[string]string) ([]string, error) {
			if args["city"] == "" {
				return nil, errors.New("city first")
			}
			return many, nil
		}),
		s.AddResourceTemplate(mcp.ResourceTemplate{URITemplate: "test://{city}/weather", Name: "weather"},
			func(context.Context, *bundle.ResourceRequest) ([]mcp.ResourceContents, error) { return nil, nil }),
		s.CompleteTemplateVariable("test://{city}/weather", "city", bundle.CompleteFrom("Oslo", "Osaka")),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func TestPrompts(t *testing.T) {
	tests := []struct {
		name, send, want string
	}{
		{"list", `{"jsonrpc":"2.0","id":1,"method":"prompts/list"}`,
			`{"jsonrpc":"2.0","id":1,"result":{"prompts":[
				{"name":"plain","description":"no arguments"},
				{"name":"trip","arguments":[{"name":"city","required":true},{"name":"days","description":"how long"}]},
				{"name":"nil"},{"name":"fail"},{"name":"refuse"}]}}`},
		{"plain", `{"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"name":"plain"}}`,
			`{"jsonrpc":"2.0","id":2,"result":{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}]}}`},
		{"arguments", `{"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"name":"trip","arguments":{"city":"Oslo","days":"3"}}}`,
			`{"jsonrpc":"2.0","id":2,"result":{"description":"a trip","messages":[
				{"role":"user","content":{"type":"text","text":"Oslo for \"3\" days"}},
				{"role":"user","content":{"type":"image","data":"cG5n","mimeType":"image/png"}}]}}`},
		{"optional argument left out", `{"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"name":"trip","arguments":{"city":"Oslo"}}}`,
			`{"jsonrpc":"2.0","id":2,"result":{"description":"a trip","messages":[
				{"role":"user","content":{"type":"text","text":"Oslo for \"\" days"}},
				{"role":"user","content":{"type":"image","data":"cG5n","mimeType":"image/png"}}]}}`},
		{"missing required argument", `{"jsonrpc":"2.0","id":3,"method":"prompts/get","params":{"name":"trip","arguments":{"days":"3"}}}`,
			`{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"prompt \"trip\": missing required argument \"city\""}}`},
		{"argument not a string", `{"jsonrpc":"2.0","id":3,"method":"prompts/get","params":{"name":"trip","arguments":{"city":5}}}`,
			`{"jsonrpc":"2.0","id":3,"error":{"code":-32602}}`},
		{"unknown prompt", `{"jsonrpc":"2.0","id":3,"method":"prompts/get","params":{"name":"nope"}}`,
			`{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"unknown prompt \"nope\""}}`},
		{"nil result", `{"jsonrpc":"2.0","id":4,"method":"prompts/get","params":{"name":"nil"}}`,
			`{"jsonrpc":"2.0","id":4,"result":{"messages":[]}}`},
		{"handler error", `{"jsonrpc":"2.0","id":4,"method":"prompts/get","params":{"name":"fail"}}`,
			`{"jsonrpc":"2.0","id":4,"error":{"code":-32603,"message":"no inspiration"}}`},
		{"handler RPC error", `{"jsonrpc":"2.0","id":4,"method":"prompts/get","params":{"name":"refuse"}}`,
			`{"jsonrpc":"2.0","id":4,"error":{"code":-32000,"message":"not today"}}`},
	}
	s := promptServer(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := serve(t, t.Context(), s)
			c.send(tt.send)
			want, got := decode(t, tt.want), c.recv()
			if werr, ok := want["error"].(map[string]any); ok && werr["message"] == nil {
				delete(got["error"].(map[string]any), "message")
			}
			diff(t, want, got)
		})
	}
}

func TestComplete(t *testing.T) {
	manyValues := make([]any, 100)
	for i := range manyValues {
		manyValues[i] = fmt.Sprintf("v%03d", i)
	}
	many := map[string]any{"jsonrpc": "2.0", "id": float64(1), "result": map[string]any{
		"completion": map[string]any{"values": manyValues, "total": float64(150), "hasMore": true}}}
	tests := []struct {
		name, params string
		want         any
	}{
		{"prompt argument", `{"ref":{"type":"ref/prompt","name":"trip"},"argument":{"name":"city","value":"Par"}}`,
			`{"jsonrpc":"2.0","id":1,"result":{"completion":{"values":["Paris","Parma"]}}}`},
		{"nothing matches", `{"ref":{"type":"ref/prompt","name":"trip"},"argument":{"name":"city","value":"X"}}`,
			`{"jsonrpc":"2.0","id":1,"result":{"completion":{"values":[]}}}`},
		{"more than a page, with context", `{"ref":{"type":"ref/prompt","name":"trip"},"argument":{"name":"days","value":""},"context":{"arguments":{"city":"Oslo"}}}`,
			many},
		{"completer error", `{"ref":{"type":"ref/prompt","name":"trip"},"argument":{"name":"days","value":""}}`,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"city first"}}`},
		{"argument without completer", `{"ref":{"type":"ref/prompt","name":"plain"},"argument":{"name":"x","value":"a"}}`,
			`{"jsonrpc":"2.0","id":1,"result":{"completion":{"values":[]}}}`},
		{"template variable", `{"ref":{"type":"ref/resource","uri":"test://{city}/weather"},"argument":{"name":"city","value":"Os"}}`,
			`{"jsonrpc":"2.0","id":1,"result":{"completion":{"values":["Oslo","Osaka"]}}}`},
		{"unknown prompt", `{"ref":{"type":"ref/prompt","name":"nope"},"argument":{"name":"x","value":""}}`,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unknown prompt \"nope\""}}`},
		{"unknown template", `{"ref":{"type":"ref/resource","uri":"test://nope"},"argument":{"name":"x","value":""}}`,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unknown resource template \"test://nope\""}}`},
		{"unknown reference type", `{"ref":{"type":"ref/tool","name":"x"},"argument":{"name":"x","value":""}}`,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unknown completion reference type \"ref/tool\""}}`},
	}
	s := promptServer(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := serve(t, t.Context(), s)
			c.send(`{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":` + tt.params + `}`)
			want := tt.want
			if w, ok := want.(string); ok {
				want = decode(t, w)
			}
			diff(t, want, c.recv())
		})
	}
}

func TestCompleteWithoutCompleters(t *testing.T) {
	c := serve(t, t.Context(), testServer(t, bundle.Options{}))
	c.send(`{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"x"},"argument":{"name":"x","value":""}}}`)
	diff(t, decode(t, `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method not found: completion/complete"}}`), c.recv())
}

func TestCapabilities(t *testing.T) {
	noResource := func(context.Context, *bundle.ResourceRequest) ([]mcp.ResourceContents, error) { return nil, nil }
	noPrompt := func(context.Context, *bundle.PromptRequest) (*mcp.GetPromptResult, error) { return nil, nil }
	tests := []struct {
		name  string
		setup func(*bundle.Server) error
		want  string
	}{
		{"tools only", func(*bundle.Server) error { return nil },
			`{"tools":{"listChanged":false},"logging":{}}`},
		{"a prompt", func(s *bundle.Server) error { return s.AddPrompt(mcp.Prompt{Name: "p"}, noPrompt) },
			`{"tools":{"listChanged":false},"logging":{},"prompts":{"listChanged":false}}`},
		{"a resource", func(s *bundle.Server) error {
			return s.AddResource(mcp.Resource{URI: "test://r", Name: "r"}, noResource)
		}, `{"tools":{"listChanged":false},"logging":{},"resources":{"subscribe":true,"listChanged":false}}`},
		{"a template and its completer", func(s *bundle.Server) error {
			return errors.Join(
				s.AddResourceTemplate(mcp.ResourceTemplate{URITemplate: "test://{x}", Name: "t"}, noResource),
				s.CompleteTemplateVariable("test://{x}", "x", bundle.CompleteFrom("a")))
		}, `{"tools":{"listChanged":false},"logging":{},"resources":{"subscribe":true,"listChanged":false},"completions":{}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := bundle.NewServer(bundle.Options{Logger: discard()})
			if err := tt.setup(s); err != nil {
				t.Fatal(err)
			}
			c := serve(t, t.Context(), s)
			c.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`)
			res, _ := c.recv()["result"].(map[string]any)
			diff(t, decode(t, tt.want), res["capabilities"])
		})
	}
}

func TestAddPromptAndCompleterErrors(t *testing.T) {
	h := func(context.Context, *bundle.PromptRequest) (*mcp.GetPromptResult, error) { return nil, nil }
	s := promptServer(t)
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"no name", s.AddPrompt(mcp.Prompt{}, h), "needs a name"},
		{"no handler", s.AddPrompt(mcp.Prompt{Name: "x"}, nil), "has no handler"},
		{"argument without a name", s.AddPrompt(mcp.Prompt{Name: "x", Arguments: []mcp.PromptArgument{{}}}, h), "argument names"},
		{"arguments of one name", s.AddPrompt(mcp.Prompt{Name: "x", Arguments: []mcp.PromptArgument{{Name: "a"}, {Name: "a"}}}, h), "argument names"},
		{"duplicate", s.AddPrompt(mcp.Prompt{Name: "plain"}, h), "already added"},
		{"completer of no prompt", s.CompletePromptArgument("nope", "a", bundle.CompleteFrom()), `no prompt "nope"`},
		{"completer of no argument", s.CompletePromptArgument("trip", "nope", bundle.CompleteFrom()), `has no argument "nope"`},
		{"nil completer", s.CompletePromptArgument("trip", "city", nil), "is nil"},
		{"completer of no template", s.CompleteTemplateVariable("test://nope", "a", bundle.CompleteFrom()), `no resource template "test://nope"`},
		{"completer of no variable", s.CompleteTemplateVariable("test://{city}/weather", "nope", bundle.CompleteFrom()), `has no variable "nope"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.err == nil || !strings.Contains(tt.err.Error(), tt.want) {
				t.Errorf("got %v, want an error containing %q", tt.err, tt.want)
			}
		})
	}
}
