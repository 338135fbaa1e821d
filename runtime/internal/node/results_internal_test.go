package node

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/clock"
)

// A result with structuredContent and no content gets the JSON as text, as the
// specification says servers should: clients that read only content see it.
func TestStructuredContentAloneIsGivenAsTextToo(t *testing.T) {
	n := New(Config{Results: ResultBounds{MaxBytes: 8 << 10}})
	for _, res := range []string{`{"structuredContent":{"result":42}}`, `{"content":[],"structuredContent":{"result":42}}`} {
		var got struct {
			Content []struct{ Type, Text string }
		}
		if err := json.Unmarshal(n.shapeResult("", json.RawMessage(res)), &got); err != nil {
			t.Fatal(err)
		}
		if len(got.Content) != 1 || got.Content[0].Type != "text" || got.Content[0].Text != `{"result":42}` {
			t.Errorf("%s became %+v", res, got.Content)
		}
	}
}

// When the store is full, the oldest results go first; a result larger than a client may
// keep is cut all the same, and its note says the whole was not kept.
func TestTheStoreDropsTheOldestAndSaysWhatItCouldNotKeep(t *testing.T) {
	s := newResultStore(ResultBounds{MaxBytes: 4 << 10, ClientBytes: 100, StoreBytes: 150}, func() string { return "tag" })
	first := s.put("a", map[int]string{0: strings.Repeat("x", 60)})
	second := s.put("b", map[int]string{0: strings.Repeat("y", 60)})
	third := s.put("a", map[int]string{0: strings.Repeat("z", 60)})
	if _, ok := s.text("a", first, 0); ok {
		t.Error("the oldest result is still kept past the bounds")
	}
	for _, k := range []struct{ owner, id string }{{"b", second}, {"a", third}} {
		if _, ok := s.text(k.owner, k.id, 0); !ok {
			t.Errorf("result %s of %s is gone", k.id, k.owner)
		}
	}
	if s.total > 150 || s.byOwner["a"] > 100 {
		t.Errorf("%d kept in all, %d for a", s.total, s.byOwner["a"])
	}
	if id := s.put("a", map[int]string{0: strings.Repeat("w", 101)}); id != "" {
		t.Error("a result larger than a client may keep was kept")
	}

	n := New(Config{Results: ResultBounds{MaxBytes: 4 << 10, ClientBytes: 4 << 10}})
	res, _ := json.Marshal(map[string]any{"content": []map[string]string{{"type": "text", "text": strings.Repeat("a line\n", 2000)}}})
	var got struct{ Content []struct{ Text string } }
	_ = json.Unmarshal(n.shapeResult("", res), &got)
	if len(got.Content) != 2 || !strings.Contains(got.Content[1].Text, "was not kept") {
		t.Errorf("the note of a result too large to keep: %+v", got.Content)
	}
}

// A kept result is read until its TTL has passed, and is gone after.
func TestAKeptResultGoesWithItsTTL(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC))
	s := newResultStore(ResultBounds{MaxBytes: 4 << 10, TTL: time.Minute, Clock: clk}, func() string { return "tag" })
	id := s.put("a", map[int]string{0: "whole"})
	clk.Advance(time.Minute)
	if text, ok := s.text("a", id, 0); !ok || text != "whole" {
		t.Fatalf("at its TTL the result reads %q, %v; want it kept", text, ok)
	}
	clk.Advance(time.Millisecond)
	if _, ok := s.text("a", id, 0); ok || s.total != 0 {
		t.Errorf("past its TTL the result is still kept (%d bytes kept)", s.total)
	}
}
