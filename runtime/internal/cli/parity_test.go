package cli_test

import (
	"github.com/toolnode/toolnode/runtime/internal/reload"
	"github.com/toolnode/toolnode/runtime/internal/serve"
	"github.com/toolnode/toolnode/runtime/internal/testkit"
	"github.com/toolnode/toolnode/runtime/internal/testkit/nodekit"

	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// canonical re-encodes v through JSON with object keys sorted, so that two values
// decoded into the same SDK types compare by content.
func canonical(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var x any
	if err := json.Unmarshal(b, &x); err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(x)
	return string(b)
}

// surfaceLists is the four lists a client gets, decoded into the official SDK's types.
type surfaceLists struct {
	Tools     []*mcp.Tool
	Prompts   []*mcp.Prompt
	Resources []*mcp.Resource
	Templates []*mcp.ResourceTemplate
}

func listAll(t *testing.T, s *mcp.ClientSession) surfaceLists {
	t.Helper()
	ctx := context.Background()
	return surfaceLists{
		Tools:     nodekit.Collect(t, s.Tools(ctx, nil)),
		Prompts:   nodekit.Collect(t, s.Prompts(ctx, nil)),
		Resources: nodekit.Collect(t, s.Resources(ctx, nil)),
		Templates: nodekit.Collect(t, s.ResourceTemplates(ctx, nil)),
	}
}

// TestBothFrontsListWhatManifestPrints: for the same bundles, eager and lazy, the lists
// a client gets over stdio and over HTTP (paged) are the same, and equal to the surface
// toolnode manifest prints.
func TestBothFrontsListWhatManifestPrints(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "alpha", Seats: []string{"node-lamp"}, Env: map[string]string{"FAKE_SURFACE": "1"}})
	testkit.Write(t, dir, testkit.Fake{Name: "beta", Seats: []string{"node-lamp"}, Env: map[string]string{"FAKE_SURFACE": "1"}, Extra: `"start": "lazy"`})
	testkit.Write(t, dir, testkit.Fake{Name: "gamma", Extra: `"prefix": false`})

	code, out, errs := runCLI("manifest", "--bundles", dir)
	if code != 0 {
		t.Fatalf("manifest: exit %d\n%s", code, errs)
	}
	var want surfaceLists
	var m struct {
		Tools, Prompts, Resources json.RawMessage
		Templates                 json.RawMessage `json:"resourceTemplates"`
	}
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	for raw, into := range map[*json.RawMessage]any{&m.Tools: &want.Tools, &m.Prompts: &want.Prompts, &m.Resources: &want.Resources, &m.Templates: &want.Templates} {
		if err := json.Unmarshal(*raw, into); err != nil {
			t.Fatalf("manifest list %s: %v", *raw, err)
		}
	}
	if len(want.Prompts) != 2 || len(want.Resources) != 2 || len(want.Templates) != 2 {
		t.Fatalf("manifest lists %d prompts, %d resources, %d templates; want 2 of each", len(want.Prompts), len(want.Resources), len(want.Templates))
	}

	node := func(cfg serve.Config, pageSize int) *nodekit.Node {
		cfg.Source, cfg.Node.StateDir, cfg.Front.PageSize = reload.Source{Dirs: []string{dir}}, t.TempDir(), pageSize
		return nodekit.Start(t, cfg)
	}
	stdio := node(serve.Config{Stdio: true}, 7).Client(t, "", nil)
	http := nodekit.Connect(t, node(serve.Config{HTTP: nodekit.Loopback}, 5).URL, "", nil)
	wantJSON := canonical(t, want)
	for front, s := range map[string]*mcp.ClientSession{"stdio": stdio, "HTTP": http} {
		if got := canonical(t, listAll(t, s)); got != wantJSON {
			t.Errorf("%s lists differ from the manifest:\n%s\nmanifest:\n%s", front, got, wantJSON)
		}
	}
}
