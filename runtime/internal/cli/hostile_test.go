package cli_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/toolnode/toolnode/runtime/internal/testkit"
	"github.com/toolnode/toolnode/runtime/internal/testkit/nodekit"
)

// A flood of clients costs a node's process a bounded amount of memory, measured in the
// process: so the node is the binary, in a process of its own.

// Sessions past the bound are refused with a clear error, and many sessions keep the node's
// memory bounded. (The bound of one client's sessions is raised out of the way: every
// session here comes from one address; httpfront's tests hold that bound.)
func TestSessionsAreBounded(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "s"})
	h := nodekit.ChildHTTP(t, toolnode(t, "serve", "--http", "127.0.0.1:0", "--bundles", dir, "--max-sessions", "200", "--max-client-sessions", "2000"))
	before := testkit.RSSKiB(t, h.Pid())
	refused := 0
	var last string
	tr := &http.Transport{MaxIdleConnsPerHost: 8}
	hc := &http.Client{Transport: tr}
	defer tr.CloseIdleConnections()
	for i := range 2000 {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"flood","version":"1"}}}`, i)
		req, _ := http.NewRequest(http.MethodPost, h.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusServiceUnavailable {
			refused++
			last = string(b)
		}
	}
	if refused != 1800 {
		t.Errorf("%d of 2000 sessions refused, want 1800 past the bound of 200", refused)
	}
	if !strings.Contains(last, "limit") {
		t.Errorf("the refusal does not say why: %s", last)
	}
	if grew := testkit.RSSKiB(t, h.Pid()) - before; testkit.MemoryChecked(t) && grew > 64<<10 {
		t.Errorf("2000 initialize requests grew the node by %d KiB", grew)
	}
}

// A batch of 150,000 calls is refused whole, and the node's memory stays bounded.
func TestAHugeBatchIsRefused(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "b"})
	h := nodekit.ChildHTTP(t, toolnode(t, "serve", "--http", "127.0.0.1:0", "--bundles", dir))
	c := nodekit.NewRawHTTP(t, h.URL)
	c.Initialize("2025-03-26", `{}`)
	before := testkit.RSSKiB(t, h.Pid())
	var sb strings.Builder
	sb.WriteByte('[')
	for i := range 150000 {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i)
	}
	sb.WriteByte(']')
	resp := c.Post(sb.String(), "application/json, text/event-stream")
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "over the limit") {
		t.Errorf("the batch got %d %s", resp.StatusCode, b)
	}
	if grew := testkit.RSSKiB(t, h.Pid()) - before; testkit.MemoryChecked(t) && grew > 200<<10 {
		t.Errorf("a 150,000-call batch grew the node by %d KiB", grew)
	}
}
