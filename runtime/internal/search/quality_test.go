package search

import (
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// qualityTop is how far down the results the expected tool may be; qualityMin is the share
// of all counted tasks for which it must be there.
const (
	qualityTop = 5
	qualityMin = 0.80
	// minTasks keeps the rate meaningful: fewer tasks than this per catalog is a broken set.
	minTasks = 10
)

type task struct {
	Catalog string   `json:"catalog"`
	Task    string   `json:"task"`
	Expect  []string `json:"expect"`
}

// loadCatalog reads a tool list written by testdata/regen.
func loadCatalog(t testing.TB, name string) []Tool {
	t.Helper()
	b, err := readMaybeGzipped(filepath.Join("testdata", name+"-tools.json"))
	if err != nil {
		t.Fatalf("read tool list: %v (regenerate with go run ./runtime/internal/search/testdata/regen)", err)
	}
	var entries []struct {
		Bundle string          `json:"bundle"`
		Tool   json.RawMessage `json:"tool"`
	}
	if err := json.Unmarshal(b, &entries); err != nil {
		t.Fatalf("read tool list %s: %v", name, err)
	}
	tools := make([]Tool, 0, len(entries))
	for _, e := range entries {
		var n struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(e.Tool, &n); err != nil {
			t.Fatalf("tool list %s: %v", name, err)
		}
		tools = append(tools, Tool{Name: n.Name, Bundle: e.Bundle, JSON: e.Tool})
	}
	return tools
}

// readMaybeGzipped reads path, or path.gz when only that exists (the large lists are kept
// compressed).
func readMaybeGzipped(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return b, err
	}
	f, err := os.Open(path + ".gz")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s.gz: %w", path, err)
	}
	return io.ReadAll(zr)
}

func loadTasks(t testing.TB) []task {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "tasks.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Tasks []task `json:"tasks"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("tasks.json: %v", err)
	}
	return f.Tasks
}

// TestQuality runs every task of testdata/tasks.json against its tool list and requires the
// expected tool among the first qualityTop results for at least qualityMin of the tasks.
// The table it logs (go test -v -run TestQuality) is the note on the set.
func TestQuality(t *testing.T) {
	indexes := map[string]*Index{}
	present := map[string]map[string]bool{}
	type tally struct{ hits, total, skipped int }
	tallies := map[string]*tally{}
	for _, tk := range loadTasks(t) {
		ix, ok := indexes[tk.Catalog]
		if !ok {
			tools := loadCatalog(t, tk.Catalog)
			ix = Build(tools)
			indexes[tk.Catalog] = ix
			present[tk.Catalog] = map[string]bool{}
			for _, tl := range tools {
				present[tk.Catalog][tl.Name] = true
			}
			tallies[tk.Catalog] = &tally{}
		}
		tl := tallies[tk.Catalog]
		if !slices.ContainsFunc(tk.Expect, func(n string) bool { return present[tk.Catalog][n] }) {
			tl.skipped++
			t.Logf("%-8s not counted, none of %v in the tool list: %q", tk.Catalog, tk.Expect, tk.Task)
			continue
		}
		res := ix.Search(Query{Text: tk.Task, Limit: qualityTop})
		rank := 0
		var got []string
		for i, h := range res.Results {
			got = append(got, h.Name)
			if rank == 0 && slices.Contains(tk.Expect, h.Name) {
				rank = i + 1
			}
		}
		tl.total++
		mark := "miss"
		if rank > 0 {
			tl.hits++
			mark = fmt.Sprintf("#%d", rank)
		}
		t.Logf("%-8s %-4s %-62q %v", tk.Catalog, mark, tk.Task, got)
	}
	var hits, total int
	for _, name := range []string{"examples", "meos"} {
		tl := tallies[name]
		if tl == nil || tl.total < minTasks {
			t.Errorf("catalog %s: fewer than %d tasks counted; the set or the tool list is broken", name, minTasks)
			continue
		}
		t.Logf("%s: expected tool in the top %d for %d of %d tasks (%.0f%%); %d not counted",
			name, qualityTop, tl.hits, tl.total, 100*float64(tl.hits)/float64(tl.total), tl.skipped)
		hits += tl.hits
		total += tl.total
	}
	rate := float64(hits) / float64(max(total, 1))
	t.Logf("all: %d of %d (%.1f%%)", hits, total, 100*rate)
	if rate < qualityMin {
		t.Errorf("hit rate %.1f%%, want at least %.0f%%", 100*rate, 100*qualityMin)
	}
}
