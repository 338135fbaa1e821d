package cli_test

import (
	"github.com/toolnode/toolnode/runtime/internal/testkit"
	"github.com/toolnode/toolnode/runtime/internal/testkit/nodekit"

	"context"
	"encoding/json"
	"runtime"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A node that serves one stdio client and nothing else runs on one processor, unless
// GOMAXPROCS says otherwise; with the HTTP front it keeps Go's default. toolnode.status
// reports what it runs on.
func TestAStdioOnlyNodeRunsOnOneProcessor(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "alpha"})
	for _, c := range []struct {
		name string
		env  []string
		args []string
		want int
	}{
		{"stdio alone", nil, nil, 1},
		{"stdio alone, GOMAXPROCS set", []string{"GOMAXPROCS=3"}, nil, 3},
		{"stdio beside HTTP", nil, []string{"--stdio", "--http", "127.0.0.1:0"}, runtime.GOMAXPROCS(0)},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := toolnode(t, append([]string{"serve", "--bundles", dir}, c.args...)...)
			cmd.Env = append(cmd.Env, c.env...)
			session, _ := nodekit.ChildStdio(t, cmd, "", nil)
			res, err := session.CallTool(context.Background(), &mcp.CallToolParams{Name: "toolnode.status"})
			if err != nil {
				t.Fatal(err)
			}
			var st struct{ Node struct{ Procs int } }
			b, _ := json.Marshal(res.StructuredContent)
			if err := json.Unmarshal(b, &st); err != nil {
				t.Fatal(err)
			}
			if st.Node.Procs != c.want {
				t.Fatalf("the node runs on %d processors, want %d", st.Node.Procs, c.want)
			}
		})
	}
}
