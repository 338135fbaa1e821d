package node_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolnode/toolnode/runtime/internal/node"
	"github.com/toolnode/toolnode/runtime/internal/testkit"
)

// The node's own tools refuse arguments past their bounds with a tool error that says
// which and by how much, before any work: a 15 MB query is not searched, and a 1 MB name is
// not repeated back.
func TestTheNodesToolsBoundTheirArguments(t *testing.T) {
	t.Parallel()
	n, _ := startMemory(t, node.Config{}, testkit.Memory{Name: "a"})
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

// A bundle's synonyms file counts in toolnode.search's ranking (its "parrot" asks for the
// tool named talk, which would otherwise come after echo, a tool as good), a result says
// which of the query's words it matched, and a bundle whose file cannot be read is logged
// and still searched.
func TestSearchUsesTheBundlesSynonyms(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "a", Extra: `"synonyms": "synonyms.txt"`})
	testkit.Write(t, dir, testkit.Fake{Name: "b", Extra: `"synonyms": "missing.txt"`})
	if err := os.WriteFile(filepath.Join(dir, "a", "synonyms.txt"), []byte("# a's words\ntalk, parrot, say back\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	n, logs := startNodeWith(t, node.Config{Manifests: testkit.Manifests(t, dir, "a", "b")})
	s := &testkit.Session{}
	n.Attach(s)
	defer n.Detach(s)
	res, err := n.Call(context.Background(), s, json.RawMessage(`{"name":"toolnode.search","arguments":{"query":"parrot the text","bundle":"a"}}`))
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		StructuredContent struct {
			Results []struct {
				Name      string   `json:"name"`
				Matched   []string `json:"matched"`
				Unmatched []string `json:"unmatched"`
			} `json:"results"`
		} `json:"structuredContent"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		t.Fatal(err)
	}
	got := r.StructuredContent.Results
	if len(got) == 0 || got[0].Name != "a.talk" {
		t.Fatalf("results %+v, want a.talk first", got)
	}
	if !slices.Equal(got[0].Matched, []string{"text"}) || !slices.Equal(got[0].Unmatched, []string{"parrot"}) {
		t.Errorf("a.talk matched %v and not %v, want [text] and [parrot]", got[0].Matched, got[0].Unmatched)
	}
	res, err = n.Call(context.Background(), s, json.RawMessage(`{"name":"toolnode.search","arguments":{"query":"echo","bundle":"b"}}`))
	if err != nil || !strings.Contains(string(res), `"b.echo"`) {
		t.Errorf("bundle b: %.300s %v", res, err)
	}
	if !strings.Contains(logs.String(), "synonyms left out of search") {
		t.Errorf("no warning about b's missing synonyms file in the log:\n%s", logs.String())
	}
}
