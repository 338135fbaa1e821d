package rpc

import (
	"encoding/json"
	"strconv"
	"testing"
)

// TestPendingIDs: the ids Pending hands out are 1, 2, 3... as JSON integers, each still
// itself after thousands more, each taking back its own call once, and none an allocation
// of its own.
func TestPendingIDs(t *testing.T) {
	var p Pending
	const n = 5000
	ids := make([]ID, 0, n)
	got := make([]int, n+1)
	for i := 1; i <= n; i++ {
		id, err := p.Add(func(json.RawMessage, error) { got[i]++ })
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	for i, id := range ids {
		if want := strconv.Itoa(i + 1); id.String() != want {
			t.Fatalf("id %d is %q", i+1, id.String())
		}
		if u, ok := id.Uint(); !ok || u != uint64(i+1) {
			t.Fatalf("id %s reads as %d, %v", id, u, ok)
		}
	}
	for _, id := range ids {
		a := p.Take(id)
		if a == nil {
			t.Fatalf("call %s not waiting", id)
		}
		a.Answer(nil, nil)
		if p.Take(id) != nil {
			t.Fatalf("call %s taken twice", id)
		}
	}
	for i := 1; i <= n; i++ {
		if got[i] != 1 {
			t.Fatalf("call %d answered %d times", i, got[i])
		}
	}
	if allocs := testing.AllocsPerRun(1000, func() {
		id, _ := p.Add(func(json.RawMessage, error) {})
		p.Take(id)
	}); allocs > 0.1 {
		t.Errorf("an id costs %.2f allocations", allocs)
	}
}

// BenchmarkPending registers a call and takes it back, as every relayed call does.
func BenchmarkPending(b *testing.B) {
	var p Pending
	for b.Loop() {
		id, _ := p.Add(func(json.RawMessage, error) {})
		p.Take(id)
	}
}
