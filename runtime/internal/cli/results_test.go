package cli_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/toolnode/toolnode/runtime/internal/testkit"
	"github.com/toolnode/toolnode/runtime/internal/testkit/nodekit"
)

// A flood of long results from several clients keeps what the node holds within its
// bounds: every client gets each result cut to --max-result-bytes, the wholes kept stay
// within --result-client-bytes per client and --result-store-bytes in all (as
// toolnode.status shows them), and the node's memory grows by little more than those.
func TestAFloodOfLongResultsKeepsTheNodeWithinItsBounds(t *testing.T) {
	const clients, callsEach, resultBytes = 4, 25, 1 << 20
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "a"})
	h := nodekit.ChildHTTP(t, toolnode(t, "serve", "--http", "127.0.0.1:0", "--bundles", dir,
		"--max-result-bytes", "16KiB", "--result-client-bytes", "8MiB", "--result-store-bytes", "20MiB"))
	sessions := make([]*nodekit.RawHTTP, clients)
	for i := range sessions {
		sessions[i] = nodekit.NewRawHTTP(t, h.URL)
		sessions[i].Initialize("2025-11-25", `{}`)
	}
	before := testkit.RSSKiB(t, h.Pid())

	blob := strings.Repeat("long line of a result\n", resultBytes/22)
	var wg sync.WaitGroup
	errs := make(chan error, clients*callsEach)
	for _, c := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range callsEach {
				raw, err := c.Call(i, "a.echo", `{"text":"`+strings.ReplaceAll(blob, "\n", `\n`)+`"}`)
				if err == nil && len(raw) > 20<<10 {
					err = fmt.Errorf("a result of %d bytes reached the client", len(raw))
				}
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	grew := testkit.RSSKiB(t, h.Pid()) - before
	t.Logf("%d results of 1 MiB from %d clients, cut to 16 KiB, 20 MiB kept at most: the node grew by %d MiB", clients*callsEach, clients, grew>>10)
	if testkit.MemoryChecked(t) && grew > 120<<10 {
		t.Errorf("the node grew by %d MiB", grew>>10)
	}

	status, err := sessions[0].Call(clients*callsEach, "toolnode.status", `{}`)
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]int64{}
	for _, b := range statusBounds(t, status) {
		if strings.HasPrefix(b.Name, "results.") {
			used[b.Name] = b.Used
			if b.Used > b.Limit {
				t.Errorf("%s: %d used, over its bound of %d", b.Name, b.Used, b.Limit)
			}
		}
	}
	if used["results.store_bytes"] < 16<<20 || used["results.client_bytes"] < 4<<20 {
		t.Errorf("toolnode.status shows the results kept as %v; want the store nearly full", used)
	}
}

// bound is one of the node's bounds as toolnode.status reports it.
type bound struct {
	Name        string
	Limit, Used int64
}

// statusBounds reads the node's bounds from status, a toolnode.status result.
func statusBounds(t *testing.T, status json.RawMessage) []bound {
	t.Helper()
	var st struct {
		StructuredContent struct {
			Node struct{ Bounds []bound }
		} `json:"structuredContent"`
	}
	if err := json.Unmarshal(status, &st); err != nil {
		t.Fatalf("toolnode.status: %v: %.300s", err, status)
	}
	return st.StructuredContent.Node.Bounds
}
