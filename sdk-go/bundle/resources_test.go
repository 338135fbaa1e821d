package bundle_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/toolnode/toolnode/sdk-go/bundle"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// resourceServer offers the resources the tests read.
func resourceServer(t *testing.T) *bundle.Server {
	t.Helper()
	s := bundle.NewServer(bundle.Options{Logger: discard()})
	fixed := func(rc ...mcp.ResourceContents) bundle.ResourceHandler {
		return func(context.Context, *bundle.ResourceRequest) ([]mcp.ResourceContents, error) { return rc, nil }
	}
	echo := func(_ context.Context, r *bundle.ResourceRequest) ([]mcp.ResourceContents, error) {
		b, err := json.Marshal(r.Vars)
		return []mcp.ResourceContents{{MimeType: "application/json", Text: string(b)}}, err
	}
	for _, err := range []error{
		s.AddResource(mcp.Resource{URI: "test://text", Name: "text", MimeType: "text/plain"},
			fixed(mcp.TextContents("test://text", "text/plain", "hello"))),
		s.AddResource(mcp.Resource{URI: "test://blob", Name: "blob", Description: "three bytes"},
			fixed(mcp.BlobContents("test://blob", "application/octet-stream", []byte{1, 2, 3}))),
		s.AddResource(mcp.Resource{URI: "test://empty", Name: "empty"}, fixed(mcp.ResourceContents{})),
		s.AddResource(mcp.Resource{URI: "test://gone", Name: "gone"},
			func(_ context.Context, r *bundle.ResourceRequest) ([]mcp.ResourceContents, error) {
				return nil, bundle.ResourceNotFound(r.URI)
			}),
		s.AddResource(mcp.Resource{URI: "test://broken", Name: "broken"},
			func(context.Context, *bundle.ResourceRequest) ([]mcp.ResourceContents, error) {
				return nil, errors.New("disk on fire")
			}),
		s.AddResource(mcp.Resource{URI: "test://panic", Name: "panic"},
			func(context.Context, *bundle.ResourceRequest) ([]mcp.ResourceContents, error) { panic("oops") }),
		s.AddResourceTemplate(mcp.ResourceTemplate{URITemplate: "test://items/{id}/data", Name: "item"}, echo),
		s.AddResourceTemplate(mcp.ResourceTemplate{URITemplate: "file:///{+path}", Name: "file"}, echo),
		// Listed resources win over templates that match them too.
		s.AddResourceTemplate(mcp.ResourceTemplate{URITemplate: "test://{name}", Name: "any"}, echo),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func TestResources(t *testing.T) {
	tests := []struct {
		name, send, want string
	}{
		{"list", `{"jsonrpc":"2.0","id":1,"method":"resources/list"}`,
			`{"jsonrpc":"2.0","id":1,"result":{"resources":[
				{"uri":"test://text","name":"text","mimeType":"text/plain"},
				{"uri":"test://blob","name":"blob","description":"three bytes"},
				{"uri":"test://empty","name":"empty"},
				{"uri":"test://gone","name":"gone"},
				{"uri":"test://broken","name":"broken"},
				{"uri":"test://panic","name":"panic"}]}}`},
		{"templates", `{"jsonrpc":"2.0","id":1,"method":"resources/templates/list","params":{}}`,
			`{"jsonrpc":"2.0","id":1,"result":{"resourceTemplates":[
				{"uriTemplate":"test://items/{id}/data","name":"item"},
				{"uriTemplate":"file:///{+path}","name":"file"},
				{"uriTemplate":"test://{name}","name":"any"}]}}`},
		{"text", `{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"test://text"}}`,
			`{"jsonrpc":"2.0","id":2,"result":{"contents":[{"uri":"test://text","mimeType":"text/plain","text":"hello"}]}}`},
		{"blob", `{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"test://blob"}}`,
			`{"jsonrpc":"2.0","id":2,"result":{"contents":[{"uri":"test://blob","mimeType":"application/octet-stream","blob":"AQID"}]}}`},
		{"empty text keeps its member and gets the URI read", `{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"test://empty"}}`,
			`{"jsonrpc":"2.0","id":2,"result":{"contents":[{"uri":"test://empty","text":""}]}}`},
		{"template", `{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"test://items/a%20b/data"}}`,
			`{"jsonrpc":"2.0","id":3,"result":{"contents":[{"uri":"test://items/a%20b/data","mimeType":"application/json","text":"{\"id\":\"a b\"}"}]}}`},
		{"reserved expansion spans slashes", `{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"file:///etc/hosts"}}`,
			`{"jsonrpc":"2.0","id":3,"result":{"contents":[{"uri":"file:///etc/hosts","mimeType":"application/json","text":"{\"path\":\"etc/hosts\"}"}]}}`},
		{"simple expansion stops at slashes", `{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"test://items/a/b/data"}}`,
			`{"jsonrpc":"2.0","id":3,"error":{"code":-32002,"message":"resource \"test://items/a/b/data\" not found","data":{"uri":"test://items/a/b/data"}}}`},
		{"unknown", `{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"other://x"}}`,
			`{"jsonrpc":"2.0","id":4,"error":{"code":-32002,"message":"resource \"other://x\" not found","data":{"uri":"other://x"}}}`},
		{"handler says not found", `{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"test://gone"}}`,
			`{"jsonrpc":"2.0","id":4,"error":{"code":-32002,"message":"resource \"test://gone\" not found","data":{"uri":"test://gone"}}}`},
		{"handler error", `{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"test://broken"}}`,
			`{"jsonrpc":"2.0","id":5,"error":{"code":-32603,"message":"disk on fire"}}`},
		{"handler panic", `{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"test://panic"}}`,
			`{"jsonrpc":"2.0","id":5,"error":{"code":-32603,"message":"resource \"test://panic\" failed: oops"}}`},
		{"no uri", `{"jsonrpc":"2.0","id":6,"method":"resources/read","params":{}}`,
			`{"jsonrpc":"2.0","id":6,"error":{"code":-32602,"message":"invalid params: a uri is needed"}}`},
		{"subscribe", `{"jsonrpc":"2.0","id":7,"method":"resources/subscribe","params":{"uri":"test://items/1/data"}}`,
			`{"jsonrpc":"2.0","id":7,"result":{}}`},
		{"subscribe unknown", `{"jsonrpc":"2.0","id":7,"method":"resources/subscribe","params":{"uri":"other://x"}}`,
			`{"jsonrpc":"2.0","id":7,"error":{"code":-32002,"message":"resource \"other://x\" not found","data":{"uri":"other://x"}}}`},
		{"unsubscribe", `{"jsonrpc":"2.0","id":8,"method":"resources/unsubscribe","params":{"uri":"test://text"}}`,
			`{"jsonrpc":"2.0","id":8,"result":{}}`},
	}
	s := resourceServer(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := serve(t, t.Context(), s)
			c.send(tt.send)
			diff(t, decode(t, tt.want), c.recv())
		})
	}
}

func TestResourceListPages(t *testing.T) {
	s := bundle.NewServer(bundle.Options{PageSize: 2, Logger: discard()})
	h := func(context.Context, *bundle.ResourceRequest) ([]mcp.ResourceContents, error) { return nil, nil }
	for _, uri := range []string{"test://a", "test://b", "test://c"} {
		if err := s.AddResource(mcp.Resource{URI: uri, Name: uri}, h); err != nil {
			t.Fatal(err)
		}
	}
	c := serve(t, t.Context(), s)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"resources/list"}`)
	first := c.recv()["result"].(map[string]any)
	cursor, _ := first["nextCursor"].(string)
	if len(first["resources"].([]any)) != 2 || cursor == "" {
		t.Fatalf("first page: %v", first)
	}
	c.sendJSON(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "resources/list", "params": map[string]any{"cursor": cursor}})
	diff(t, decode(t, `{"jsonrpc":"2.0","id":2,"result":{"resources":[{"uri":"test://c","name":"test://c"}]}}`), c.recv())
}

func TestResourceUpdated(t *testing.T) {
	s := resourceServer(t)
	updated := func(uri string) map[string]any {
		return decode(t, `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"`+uri+`"}}`)
	}
	watcher, other := serve(t, t.Context(), s), serve(t, t.Context(), s)
	for _, uri := range []string{"test://text", "test://items/7/data"} {
		watcher.sendJSON(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "resources/subscribe", "params": map[string]any{"uri": uri}})
		watcher.recv()
	}

	s.ResourceUpdated("test://items/7/data")
	diff(t, updated("test://items/7/data"), watcher.recv())
	s.ResourceUpdated("test://blob") // nobody watches it
	watcher.send(`{"jsonrpc":"2.0","id":2,"method":"resources/unsubscribe","params":{"uri":"test://items/7/data"}}`)
	watcher.recv()
	s.ResourceUpdated("test://items/7/data")
	s.ResourceUpdated("test://text")
	diff(t, updated("test://text"), watcher.recv())
	watcher.quiet(50 * time.Millisecond)
	other.quiet(0)
}

func TestAddResourceErrors(t *testing.T) {
	h := func(context.Context, *bundle.ResourceRequest) ([]mcp.ResourceContents, error) { return nil, nil }
	s := bundle.NewServer(bundle.Options{Logger: discard()})
	if err := s.AddResource(mcp.Resource{URI: "test://taken", Name: "taken"}, h); err != nil {
		t.Fatal(err)
	}
	if err := s.AddResourceTemplate(mcp.ResourceTemplate{URITemplate: "test://t/{id}", Name: "t"}, h); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		add  func() error
		want string
	}{
		{"relative URI", func() error { return s.AddResource(mcp.Resource{URI: "notes.txt", Name: "n"}, h) }, "not an absolute URI"},
		{"no name", func() error { return s.AddResource(mcp.Resource{URI: "test://x"}, h) }, "needs a name"},
		{"no handler", func() error { return s.AddResource(mcp.Resource{URI: "test://x", Name: "x"}, nil) }, "needs a name and a handler"},
		{"bad meta", func() error {
			return s.AddResource(mcp.Resource{URI: "test://x", Name: "x", Meta: json.RawMessage(`{`)}, h)
		}, "test://x"},
		{"duplicate", func() error { return s.AddResource(mcp.Resource{URI: "test://taken", Name: "again"}, h) }, "already added"},
		{"template open brace", func() error {
			return s.AddResourceTemplate(mcp.ResourceTemplate{URITemplate: "test://{id", Name: "t"}, h)
		}, "unbalanced"},
		{"template close brace", func() error {
			return s.AddResourceTemplate(mcp.ResourceTemplate{URITemplate: "test://id}", Name: "t"}, h)
		}, "unbalanced"},
		{"template query form", func() error {
			return s.AddResourceTemplate(mcp.ResourceTemplate{URITemplate: "test://s{?q}", Name: "t"}, h)
		}, "{?q}: only"},
		{"template list", func() error {
			return s.AddResourceTemplate(mcp.ResourceTemplate{URITemplate: "test://{a,b}", Name: "t"}, h)
		}, "{a,b}: only"},
		{"template without scheme", func() error {
			return s.AddResourceTemplate(mcp.ResourceTemplate{URITemplate: "{id}/data", Name: "t"}, h)
		}, "absolute"},
		{"template no name", func() error { return s.AddResourceTemplate(mcp.ResourceTemplate{URITemplate: "test://{id}"}, h) }, "needs a name"},
		{"template duplicate", func() error {
			return s.AddResourceTemplate(mcp.ResourceTemplate{URITemplate: "test://t/{id}", Name: "t2"}, h)
		}, "already added"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.add(); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}
