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

	"github.com/toolnode/toolnode/runtime/internal/manifest"
)

// The quality set (testdata/quality) is split in two: tuning.json, the tasks the ranking
// was tuned on, and heldout.json, written and committed before any tuning and never tuned
// against. The floors hold on the held-out part: the expected tool first for qualityTop1 of
// its tasks and among the first qualityTop (5) for qualityTop5 of them.
const (
	qualityTop  = 5
	qualityTop1 = 0.70
	qualityTop5 = 0.95
	// qualityDepth is how far down the results a task's rank is looked for, for the mean
	// reciprocal rank: a tool further down counts 0.
	qualityDepth = 10
	// minTasks keeps the rates meaningful: fewer tasks than this in a split is a broken set.
	minTasks = 100
)

type task struct {
	Catalog string   `json:"catalog"`
	Task    string   `json:"task"`
	Expect  []string `json:"expect"`
	// Split is the file the task comes from: "tuning" or "heldout".
	Split string `json:"-"`
}

// splits are the parts of the quality set, each a file of testdata/quality.
var splits = []string{"tuning", "heldout"}

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
	synonyms := map[string]*Synonyms{}
	for _, e := range entries {
		var n struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(e.Tool, &n); err != nil {
			t.Fatalf("tool list %s: %v", name, err)
		}
		if n.Name == "toolnode.search" {
			continue // the node leaves its search tool out of its index (FromCatalog)
		}
		syn, ok := synonyms[e.Bundle]
		if !ok {
			syn = bundleSynonyms(t, e.Bundle)
			synonyms[e.Bundle] = syn
		}
		tools = append(tools, Tool{Name: n.Name, Bundle: e.Bundle, JSON: e.Tool, Synonyms: syn})
	}
	return tools
}

// bundleSynonyms reads the synonyms of the repository's bundle of that name
// (bundles/NAME/bundle.json), nil when it has none.
func bundleSynonyms(t testing.TB, name string) *Synonyms {
	t.Helper()
	path := filepath.Join("..", "..", "..", "bundles", name, "bundle.json")
	if _, err := os.Stat(path); err != nil {
		return nil
	}
	m, err := manifest.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if m.SynonymsPath() == "" {
		return nil
	}
	s, err := LoadSynonyms(m.SynonymsPath())
	if err != nil {
		t.Fatal(err)
	}
	return s
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

// loadTasks reads every task of the quality set, each with its split.
func loadTasks(t testing.TB) []task {
	t.Helper()
	var all []task
	for _, split := range splits {
		b, err := os.ReadFile(filepath.Join("testdata", "quality", split+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var f struct {
			Tasks []task `json:"tasks"`
		}
		if err := json.Unmarshal(b, &f); err != nil {
			t.Fatalf("quality/%s.json: %v", split, err)
		}
		for _, tk := range f.Tasks {
			tk.Split = split
			all = append(all, tk)
		}
	}
	return all
}

// Figures are a split's measures: how often the expected tool is first, how often among
// the first qualityTop, and the mean reciprocal rank (1/rank, 0 below qualityDepth).
type figures struct {
	tasks, top1, top5 int
	rr                float64
	// uncounted are the tasks none of whose tools is in the list.
	uncounted int
}

func (f figures) String() string {
	n := float64(max(f.tasks, 1))
	return fmt.Sprintf("%d tasks: top-1 %.1f%%, top-%d %.1f%%, MRR %.3f (%d not counted)",
		f.tasks, 100*float64(f.top1)/n, qualityTop, 100*float64(f.top5)/n, f.rr/n, f.uncounted)
}

// quality runs the tasks of one split against their tool lists and logs each task's rank
// and first results; a task none of whose tools is in its list is not counted.
func quality(t *testing.T, split string) figures {
	indexes := map[string]*Index{}
	present := map[string]map[string]bool{}
	var f figures
	for _, tk := range loadTasks(t) {
		if tk.Split != split {
			continue
		}
		ix, ok := indexes[tk.Catalog]
		if !ok {
			tools := loadCatalog(t, tk.Catalog)
			ix = Build(tools)
			indexes[tk.Catalog] = ix
			present[tk.Catalog] = map[string]bool{}
			for _, tl := range tools {
				present[tk.Catalog][tl.Name] = true
			}
		}
		if !slices.ContainsFunc(tk.Expect, func(n string) bool { return present[tk.Catalog][n] }) {
			// The catalog lost the tool (the generator excluded it) or the list was made
			// without the road network: said, and left out of the figures.
			f.uncounted++
			t.Logf("%-8s not counted: none of %v is in the %s tool list (made with the road network? "+
				"MEOS_WAYS=bundles/meos/tests/data/ways.csv go run ./runtime/internal/search/testdata/regen): %q",
				tk.Catalog, tk.Expect, tk.Catalog, tk.Task)
			continue
		}
		res := ix.Search(Query{Text: tk.Task, Limit: qualityDepth})
		rank := 0
		var got []string
		for i, h := range res.Results {
			if i < qualityTop {
				got = append(got, h.Name)
			}
			if rank == 0 && slices.Contains(tk.Expect, h.Name) {
				rank = i + 1
			}
		}
		f.tasks++
		mark := "miss"
		if rank > 0 {
			f.rr += 1 / float64(rank)
			mark = fmt.Sprintf("#%d", rank)
		}
		if rank == 1 {
			f.top1++
		}
		if rank > 0 && rank <= qualityTop {
			f.top5++
		}
		t.Logf("%-8s %-4s %-62q %v", tk.Catalog, mark, tk.Task, got)
	}
	if f.tasks < minTasks {
		t.Errorf("%s: %d tasks counted, fewer than %d; the set or a tool list is broken", split, f.tasks, minTasks)
	}
	return f
}

// TestQuality measures search on each part of the quality set and holds the held-out part
// to its floors. go test -v -run TestQuality/tuning lists the tuning tasks with their ranks;
// the figures are the note on the set (make bench prints them too).
func TestQuality(t *testing.T) {
	for _, split := range splits {
		t.Run(split, func(t *testing.T) {
			f := quality(t, split)
			// The line make bench reads.
			fmt.Printf("quality %s: %v\n", split, f)
			if split != "heldout" {
				return
			}
			n := float64(max(f.tasks, 1))
			if r := float64(f.top5) / n; r < qualityTop5 {
				t.Errorf("held-out top-%d %.1f%%, want at least %.0f%%", qualityTop, 100*r, 100*qualityTop5)
			}
			if r := float64(f.top1) / n; r < qualityTop1 {
				t.Errorf("held-out top-1 %.1f%%, want at least %.0f%%", 100*r, 100*qualityTop1)
			}
		})
	}
}
