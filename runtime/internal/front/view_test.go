package front_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnode/toolnode/runtime/internal/access"
	"github.com/toolnode/toolnode/runtime/internal/front"
	"github.com/toolnode/toolnode/runtime/internal/serve"
	"github.com/toolnode/toolnode/runtime/internal/testkit"
	"github.com/toolnode/toolnode/runtime/internal/testkit/nodekit"
)

// The auto view lists a catalog within its budget whole; a larger one as the node's own
// tools, the pinned ones and the featured ones, within the budget; an access file's view
// wins over it.
func TestAutoView(t *testing.T) {
	own := "toolnode.execute toolnode.run toolnode.search toolnode.status"
	start := func(t *testing.T, opts front.Options, accessFile string) *nodekit.Node {
		opts.View = access.ViewAuto
		n := nodekit.StartMemory(t, serve.Config{HTTP: nodekit.Loopback, Front: opts, AccessFile: accessFile},
			testkit.Memory{Name: "alpha", Manifest: `"featured": ["echo", "sa*"]`}, testkit.Memory{Name: "beta"})
		n.Ready(t)
		return n
	}
	for _, tt := range []struct {
		name string
		opts front.Options
		want string // "" for every tool
	}{
		{"within the budget", front.Options{ViewMaxTools: 1000, ViewMaxTokens: 1 << 20}, ""},
		{"over the count", front.Options{ViewMaxTools: 10}, "alpha.echo alpha.sample " + own},
		{"over the count, pinned", front.Options{ViewMaxTools: 10, Pins: []access.Pattern{pattern(t, "beta.instance")}},
			"alpha.echo alpha.sample beta.instance " + own},
		{"featured past the budget", front.Options{ViewMaxTools: 5}, "alpha.echo " + own},
		{"over the tokens", front.Options{ViewMaxTokens: 100}, own},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n := start(t, tt.opts, "")
			all := n.Server().Node().Catalog().Len()
			got := listed(t, nodekit.Connect(t, n.URL, "", nil))
			if tt.want == "" {
				if len(got) != all {
					t.Errorf("listed %d of %d tools: %v", len(got), all, got)
				}
				return
			}
			if strings.Join(got, " ") != tt.want {
				t.Errorf("listed %v; want %s", got, tt.want)
			}
		})
	}
	t.Run("the access file sets a client's view", func(t *testing.T) {
		accessFile := filepath.Join(t.TempDir(), "access.json")
		writeFile(t, accessFile, fmt.Sprintf(`{"clients": [
			{"name": "whole", "token_sha256": %q, "allow": ["*"], "view": "full"},
			{"name": "auto", "token_sha256": %q, "allow": ["*"]},
			{"name": "few", "token_sha256": %q, "allow": ["beta.*"]}]}`,
			testkit.TokenSHA("whole-token"), testkit.TokenSHA("auto-token"), testkit.TokenSHA("few-token")))
		n := start(t, front.Options{ViewMaxTools: 20}, accessFile)
		all := n.Server().Node().Catalog().Len()
		if got := listed(t, nodekit.ConnectWithToken(t, n.URL, "whole-token")); len(got) != all {
			t.Errorf("the full view listed %d of %d tools", len(got), all)
		}
		if got := strings.Join(listed(t, nodekit.ConnectWithToken(t, n.URL, "auto-token")), " "); got != "alpha.echo alpha.sample "+own {
			t.Errorf("the auto view listed %s", got)
		}
		// Allowed beta's tools and the node's search and execute: within 20, so whole.
		got := listed(t, nodekit.ConnectWithToken(t, n.URL, "few-token"))
		if len(got) < 10 || !strings.HasPrefix(got[0], "beta.") {
			t.Errorf("a client allowed fewer tools than the budget listed %v", got)
		}
	})
}

func pattern(t *testing.T, s string) access.Pattern {
	t.Helper()
	p, err := access.ParsePattern(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// toolnode's application libraries pick the tools they give a model themselves: the auto
// view lists them every tool, in canonical names.
func TestAutoViewListsEveryToolToTheLibraries(t *testing.T) {
	n := nodekit.StartMemory(t, serve.Config{HTTP: nodekit.Loopback, Front: front.Options{View: access.ViewAuto, ViewMaxTools: 5, Names: front.NamesAuto}},
		testkit.Memory{Name: "alpha", Manifest: `"featured": ["echo"]`})
	n.Ready(t)
	all := n.Server().Node().Catalog().Len()
	lib := mcp.NewClient(&mcp.Implementation{Name: "toolnode-app", Version: "1"}, nil)
	got := listed(t, nodekit.Join(t, lib, &mcp.StreamableClientTransport{Endpoint: n.URL}, ""))
	if len(got) != all || got[0] != "alpha.big" {
		t.Errorf("the application library was listed %v, want all %d tools", got, all)
	}
	other := mcp.NewClient(&mcp.Implementation{Name: "claude-ai", Version: "1"}, nil)
	if got := strings.Join(listed(t, nodekit.Join(t, other, &mcp.StreamableClientTransport{Endpoint: n.URL}, "")), " "); got != "alpha_echo toolnode_execute toolnode_run toolnode_search toolnode_status" {
		t.Errorf("Claude Desktop was listed %s", got)
	}
}
