package node_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolnode/toolnode/runtime/internal/testkit"
)

// The node's own tools refuse arguments past their bounds with a tool error that says
// which and by how much, before any work: a 15 MB query is not searched, and a 1 MB name is
// not repeated back.
func TestTheNodesToolsBoundTheirArguments(t *testing.T) {
	n := startNode(t, "a")
	s := &testkit.Session{}
	n.Attach(s)
	defer n.Detach(s)
	for _, tt := range []struct {
		tool, args, want string
	}{
		{"toolnode.search", `{"query":"` + strings.Repeat("speed ", 15<<20/6) + `"}`, "query is 15728640 characters long, more than the 1000"},
		{"toolnode.search", `{"query":"echo","bundle":"` + strings.Repeat("b", 1<<20) + `"}`, "bundle is 1048576 characters long, more than the 64"},
		{"toolnode.execute", `{"name":"` + strings.Repeat("n", 1<<20) + `","arguments":{}}`, "name is 1048576 characters long, more than the 256"},
	} {
		res, err := n.Call(context.Background(), s, json.RawMessage(`{"name":"`+tt.tool+`","arguments":`+tt.args+`}`))
		if err != nil {
			t.Fatalf("%s: %v", tt.tool, err)
		}
		var r struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		}
		if err := json.Unmarshal(res, &r); err != nil || !r.IsError || len(r.Content) == 0 || !strings.Contains(r.Content[0].Text, tt.want) {
			t.Errorf("%s: %.300s, want a tool error saying %q", tt.tool, res, tt.want)
		}
		if len(res) > 4096 {
			t.Errorf("%s: the error is %d bytes long", tt.tool, len(res))
		}
	}
	// Within the bounds, the tools work.
	res, err := n.Call(context.Background(), s, json.RawMessage(`{"name":"toolnode.search","arguments":{"query":"echo"}}`))
	if err != nil || !strings.Contains(string(res), "a.echo") {
		t.Errorf("search: %.300s %v", res, err)
	}
}
