package bundle_test

import (
	"context"
	"testing"
	"time"
)

// listenLine is a 2026-07-28 subscriptions/listen with id for the resources uris (a JSON
// array).
func listenLine(id, uris string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"subscriptions/listen","params":{` + meta2026(`{}`) +
		`,"notifications":{"toolsListChanged":true,"resourceSubscriptions":` + uris + `}}}`
}

func TestListen(t *testing.T) {
	s := resourceServer(t)
	c := serve(t, t.Context(), s)
	updated := func(id, uri string) map[string]any {
		return decode(t, `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":`+id+`},"uri":"`+uri+`"}}`)
	}

	// server/discover says that resources can be subscribed to, as 2026-07-28 asks of a
	// server that serves subscriptions/listen for resources.
	c.send(`{"jsonrpc":"2.0","id":"d","method":"server/discover","params":{` + meta2026(`{}`) + `}}`)
	caps := c.recv()["result"].(map[string]any)["capabilities"].(map[string]any)
	diff(t, map[string]any{"subscribe": true, "listChanged": false}, caps["resources"])

	// Unknown resources and list changes (the server sends none) are left out of the
	// acknowledgment.
	c.send(listenLine(`"a"`, `["test://text","other://x","test://items/7/data"]`))
	diff(t, decode(t, `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{
		"_meta":{"io.modelcontextprotocol/subscriptionId":"a"},
		"notifications":{"resourceSubscriptions":["test://text","test://items/7/data"]}}}`), c.recv())
	c.send(listenLine(`7`, `["test://text","test://blob"]`))
	diff(t, decode(t, `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{
		"_meta":{"io.modelcontextprotocol/subscriptionId":7},
		"notifications":{"resourceSubscriptions":["test://text","test://blob"]}}}`), c.recv())
	c.send(listenLine(`7`, `["test://text"]`))
	diff(t, decode(t, `{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"invalid request: id 7 is already in use"}}`), c.recv())

	s.ResourceUpdated("test://items/7/data")
	diff(t, updated(`"a"`, "test://items/7/data"), c.recv())
	s.ResourceUpdated("test://blob")
	diff(t, updated(`7`, "test://blob"), c.recv())
	s.ResourceUpdated("test://text")
	diff(t, updated(`"a"`, "test://text"), c.recv())
	diff(t, updated(`7`, "test://text"), c.recv())

	// Cancelled: no answer, and no more updates on it.
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a"}}`)
	// Answered after the cancellation is read, so the updates below come after it.
	c.send(`{"jsonrpc":"2.0","id":"p","method":"ping"}`)
	diff(t, decode(t, `{"jsonrpc":"2.0","id":"p","result":{}}`), c.recv())
	s.ResourceUpdated("test://items/7/data")
	s.ResourceUpdated("test://text")
	diff(t, updated(`7`, "test://text"), c.recv())
	c.quiet(50 * time.Millisecond)
	if err := c.closeInput(); err != nil {
		t.Errorf("Serve: %v", err)
	}
	c.quiet(0) // the end of the input answers no subscription
}

func TestListenRefused(t *testing.T) {
	tests := []struct{ name, send, want string }{
		{"without 2026-07-28 _meta the method does not exist",
			`{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"resourceSubscriptions":["test://text"]}}}`,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method not found: subscriptions/listen"}}`},
		{"a filter that is not an object",
			`{"jsonrpc":"2.0","id":2,"method":"subscriptions/listen","params":{` + meta2026(`{}`) + `,"notifications":[]}}`,
			`{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"invalid params: json: cannot unmarshal array into Go struct field .notifications of type bundle.listenFilter"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := serve(t, t.Context(), resourceServer(t))
			c.send(tt.send)
			diff(t, decode(t, tt.want), c.recv())
		})
	}
}

func TestListenEndsWithServe(t *testing.T) {
	ctx, stop := context.WithCancel(t.Context())
	s := resourceServer(t)
	c := serve(t, ctx, s)
	c.send(listenLine(`"w"`, `["test://text"]`))
	c.recv()
	// Another session of the same server has no subscription to end.
	other := serve(t, t.Context(), s)
	stop()
	diff(t, decode(t, `{"jsonrpc":"2.0","id":"w","result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":"w"}}}`), c.recv())
	other.quiet(0)
}
