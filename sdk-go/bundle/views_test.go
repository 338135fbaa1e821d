package bundle_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/toolnode/toolnode/sdk-go/bundle"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

func TestViews(t *testing.T) {
	s := bundle.NewServer(bundle.Options{Logger: discard()})
	yes := true
	h := func(context.Context, *bundle.Call) (*mcp.CallToolResult, error) { return mcp.TextResult("ok"), nil }
	for _, err := range []error{
		s.AddView(bundle.View{URI: "ui://v/show.html", HTML: "<!DOCTYPE html><p>hi</p>",
			Meta: mcp.UIResourceMeta{CSP: &mcp.UICSP{ConnectDomains: []string{"https://api.example.com"}}, PrefersBorder: &yes}}),
		s.AddView(bundle.View{URI: "ui://v/hidden.html", Name: "hidden", HTML: "<p>", Unlisted: true}),
		s.AddViewTool(mcp.Tool{Name: "show", Meta: json.RawMessage(`{"kept":1}`)}, "ui://v/show.html", nil, h),
		s.AddViewTool(mcp.Tool{Name: "refresh"}, "ui://v/show.html", []string{mcp.VisibilityApp}, h),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	for name, err := range map[string]error{
		"view URI not ui://":  s.AddView(bundle.View{URI: "https://x/v.html", HTML: "<p>"}),
		"view URI taken":      s.AddView(bundle.View{URI: "ui://v/show.html", HTML: "<p>"}),
		"tool view not ui://": s.AddViewTool(mcp.Tool{Name: "x"}, "file:///v.html", nil, h),
		"unknown visibility":  s.AddViewTool(mcp.Tool{Name: "y"}, "ui://v/show.html", []string{"user"}, h),
		"_meta not an object": s.AddViewTool(mcp.Tool{Name: "z", Meta: json.RawMessage(`[1]`)}, "ui://v/show.html", nil, h),
	} {
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	tests := []struct{ name, send, want string }{
		{"the unlisted view is left out of the list",
			`{"jsonrpc":"2.0","id":1,"method":"resources/list"}`,
			`{"jsonrpc":"2.0","id":1,"result":{"resources":[{"uri":"ui://v/show.html","name":"ui://v/show.html","mimeType":"text/html;profile=mcp-app",
				"_meta":{"ui":{"csp":{"connectDomains":["https://api.example.com"]},"prefersBorder":true}}}]}}`},
		{"a view reads with its MIME type and _meta.ui",
			`{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"ui://v/show.html"}}`,
			`{"jsonrpc":"2.0","id":2,"result":{"contents":[{"uri":"ui://v/show.html","mimeType":"text/html;profile=mcp-app","text":"<!DOCTYPE html><p>hi</p>",
				"_meta":{"ui":{"csp":{"connectDomains":["https://api.example.com"]},"prefersBorder":true}}}]}}`},
		{"an unlisted view reads all the same",
			`{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"ui://v/hidden.html"}}`,
			`{"jsonrpc":"2.0","id":3,"result":{"contents":[{"uri":"ui://v/hidden.html","mimeType":"text/html;profile=mcp-app","text":"<p>","_meta":{"ui":{}}}]}}`},
		{"tools name their view, with visibility when given",
			`{"jsonrpc":"2.0","id":4,"method":"tools/list"}`,
			`{"jsonrpc":"2.0","id":4,"result":{"tools":[
				{"name":"show","inputSchema":{"type":"object"},"_meta":{"kept":1,"ui":{"resourceUri":"ui://v/show.html"}}},
				{"name":"refresh","inputSchema":{"type":"object"},"_meta":{"ui":{"resourceUri":"ui://v/show.html","visibility":["app"]}}}]}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := serve(t, t.Context(), s)
			c.send(tt.send)
			diff(t, decode(t, tt.want), c.recv())
		})
	}
}
