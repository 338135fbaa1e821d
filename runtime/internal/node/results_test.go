package node_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/node"
	"github.com/toolnode/toolnode/runtime/internal/testkit"
)

// keyed is a client of the key.
type keyed struct {
	testkit.Session
	key string
}

// who is the caller the client calls as.
func (k *keyed) who() node.Caller { return node.Caller{Key: k.key, Bound: k.key} }

// readKept reads a kept result's URI for sess, as resources/read does.
func readKept(t *testing.T, n *node.Node, sess *keyed, uri string) (text string, meta map[string]int, err error) {
	t.Helper()
	params, _ := json.Marshal(map[string]string{"uri": uri})
	req, rerr := node.ReadRequest("resources/read", params)
	if rerr != nil {
		t.Fatal(rerr)
	}
	raw, err := n.ReadResource(context.Background(), node.Detached(sess, sess.who(), nil), req).Answer()
	if err != nil {
		return "", nil, err
	}
	var r struct {
		Contents []struct {
			Text string `json:"text"`
		} `json:"contents"`
		Meta map[string]map[string]int `json:"_meta"`
	}
	if err := json.Unmarshal(raw, &r); err != nil || len(r.Contents) != 1 {
		t.Fatalf("resources/read %s answered %.300s", uri, raw)
	}
	return r.Contents[0].Text, r.Meta["io.toolnode/result"], nil
}

// A result past the budget reaches its caller cut to it at a whole JSON item, with a note
// naming the rest; the caller reads the whole back in ranges, by resources/read and by
// toolnode.read_result; another client is told no such resource exists.
func TestALongResultIsCutAndItsWholeReadBackByItsCallerOnly(t *testing.T) {
	t.Parallel()
	n, _ := startMemory(t, node.Config{Results: node.ResultBounds{MaxBytes: 8 << 10}}, testkit.Memory{Name: "a"})
	owner, other := &keyed{key: "client:owner"}, &keyed{key: "client:other"}
	var items []string
	for i := range 3000 {
		items = append(items, fmt.Sprintf(`{"i":%d,"é":"ü"}`, i))
	}
	text := `[` + strings.Join(items, ",") + `]`
	r, err := callAs(t, n, owner, owner.who(), 30*time.Second, "a.echo", map[string]any{"text": text})
	if err != nil {
		t.Fatal(err)
	}
	whole := "a:" + text // what echo answers
	if len(r.Content) != 2 {
		t.Fatalf("got %d content items, want the cut text and a note", len(r.Content))
	}
	kept, note := r.Content[0].Text, r.Content[1].Text
	if len(kept)+len(note) > 8<<10 || !strings.HasPrefix(whole, kept) {
		t.Errorf("kept %d bytes and a note of %d; want at most 8KiB, a prefix of the whole", len(kept), len(note))
	}
	m := regexp.MustCompile(`(toolnode://result/\S+/content/0) from offset (\d+)`).FindStringSubmatch(note)
	if m == nil {
		t.Fatalf("the note names no URI and offset: %s", note)
	}
	uri := m[1]
	if m[2] != fmt.Sprint(len(kept)) {
		t.Errorf("the note's offset is %s, want %d", m[2], len(kept))
	}
	var b strings.Builder
	for off := 0; off < len(whole); {
		part, meta, err := readKept(t, n, owner, fmt.Sprintf("%s?offset=%d&length=%d", uri, off, 5000))
		if err != nil {
			t.Fatalf("read at %d: %v", off, err)
		}
		if meta["offset"] != off || meta["total"] != len(whole) {
			t.Fatalf("read at %d says %v", off, meta)
		}
		b.WriteString(part)
		off += meta["length"]
	}
	if b.String() != whole {
		t.Fatal("the ranges read back do not make the whole")
	}
	if _, _, err := readKept(t, n, other, uri); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("another client read the result: %v", err)
	}
	r, err = callAs(t, n, owner, owner.who(), 30*time.Second, "toolnode.read_result", map[string]any{"uri": uri, "offset": len(kept)})
	if rest := r.text(); err != nil || r.IsError || !strings.HasPrefix(rest, whole[len(kept):len(kept)+100]) {
		t.Errorf("toolnode.read_result: %.200s", rest)
	}
	if r, err := callAs(t, n, other, other.who(), 30*time.Second, "toolnode.read_result", map[string]any{"uri": uri}); err != nil || !r.IsError {
		t.Errorf("another client read the result through toolnode.read_result: %.200s %v", r.text(), err)
	}
}

// A flood of long results keeps the bytes the node holds within its bounds: per client, and
// in all.
func TestKeptResultsStayWithinTheirBounds(t *testing.T) {
	t.Parallel()
	b := node.ResultBounds{MaxBytes: 4 << 10, ClientBytes: 200 << 10, StoreBytes: 300 << 10}
	n, _ := startMemory(t, node.Config{Results: b}, testkit.Memory{Name: "a"})
	text := strings.Repeat("line of a long answer\n", 3000) // 66 KB
	for i := range 20 {
		sess := &keyed{key: fmt.Sprintf("client:%d", i%3)}
		if _, err := callAs(t, n, sess, sess.who(), 30*time.Second, "a.echo", map[string]any{"text": text}); err != nil {
			t.Fatal(err)
		}
		if got := n.ResultBytes(); got > b.StoreBytes {
			t.Fatalf("after %d results the node keeps %d bytes, more than %d", i+1, got, b.StoreBytes)
		}
	}
	for _, bound := range n.Bounds() {
		if bound.Name == "results.client_bytes" && bound.Used > b.ClientBytes || bound.Name == "results.store_bytes" && bound.Used > b.StoreBytes {
			t.Errorf("%s: %d used of %d", bound.Name, bound.Used, bound.Limit)
		}
	}
}

// A task's result is cut as a call's is: the front keeps for the task what CallToolTask
// gives it.
func TestATasksLongResultIsCutToo(t *testing.T) {
	t.Parallel()
	n, _ := startMemory(t, node.Config{Results: node.ResultBounds{MaxBytes: 4 << 10}}, testkit.Memory{Name: "a"})
	owner := &keyed{key: "client:owner"}
	params, _ := json.Marshal(map[string]any{"name": "a.echo", "arguments": map[string]any{"text": strings.Repeat("a line\n", 5000)}})
	req, rerr := node.ReadRequest("tools/call", params)
	if rerr != nil {
		t.Fatal(rerr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan json.RawMessage, 1)
	n.CallToolTask(ctx, node.Detached(owner, owner.who(), node.DoneFunc(func(o node.Outcome) {
		if o.Err != nil {
			t.Error(o.Err)
		}
		done <- o.Result
	})), req, n.FindTool(req))
	var r result
	select {
	case raw := <-done:
		_ = json.Unmarshal(raw, &r)
	case <-ctx.Done():
		t.Fatal("the task's call did not end")
	}
	if len(r.Content) != 2 || len(r.Content[0].Text) > 4<<10 || !strings.Contains(r.Content[1].Text, "toolnode://result/") {
		t.Errorf("the task's result is not cut: %d items, %d bytes first", len(r.Content), len(r.text()))
	}
}
