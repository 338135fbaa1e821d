package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/catalog"
	"github.com/toolnode/toolnode/runtime/internal/front"
)

// searchSection measures toolnode.search: how well it ranks (top-1, top-5 and mean
// reciprocal rank over the two parts of the quality set, from the search package's
// TestQuality), how fast it answers over 10,000 tools made of the real catalogs (in
// process) and through the node over the whole catalog of ./examples and ./bundles with
// the quality set's tasks; and the bytes of tools/list, and the tokens they cost a model,
// under the full, auto and search views of the same catalog.
func searchSection(cfg config, w *strings.Builder) error {
	var f struct {
		Tasks []struct{ Task string } `json:"tasks"`
	}
	for _, split := range []string{"tuning", "heldout"} {
		b, err := os.ReadFile(filepath.Join(cfg.root, "runtime", "internal", "search", "testdata", "quality", split+".json"))
		if err != nil {
			return err
		}
		var part struct {
			Tasks []struct{ Task string } `json:"tasks"`
		}
		if err := json.Unmarshal(b, &part); err != nil {
			return fmt.Errorf("quality/%s.json: %w", split, err)
		}
		f.Tasks = append(f.Tasks, part.Tasks...)
	}
	args := []string{"serve", "--bundles", filepath.Join(cfg.root, "examples"), "--bundles", filepath.Join(cfg.root, "bundles"),
		"--log-level", "warn", "--page-size", "0"}
	full, err := startStdio("toolnode.search", cfg.node, append(args, "--view", "full")...)
	if err != nil {
		return fmt.Errorf("search bench (run make first): %w", err)
	}
	defer full.close()
	fullList, err := full.roundTrip(`"tools/list","params":{}`)
	if err != nil {
		return err
	}
	narrow, err := startStdio("toolnode.search", cfg.node, append(args, "--view", "search")...)
	if err != nil {
		return err
	}
	defer narrow.close()
	searchList, err := narrow.roundTrip(`"tools/list","params":{}`)
	if err != nil {
		return err
	}
	auto, err := startStdio("toolnode.search", cfg.node, args...) // the default view
	if err != nil {
		return err
	}
	defer auto.close()
	autoList, err := auto.roundTrip(`"tools/list","params":{}`)
	if err != nil {
		return err
	}
	tools := countTools(fullList)

	var lat []time.Duration
	for i := 0; i < 400; i++ {
		q, _ := json.Marshal(f.Tasks[i%len(f.Tasks)].Task)
		start := time.Now()
		if _, err := full.roundTrip(`"tools/call","params":{"name":"toolnode.search","arguments":{"query":` + string(q) + `}}`); err != nil {
			return err
		}
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)

	// The 10,000-tool catalog and the quality set live in the search package's tests.
	cmd := exec.Command("go", "test", "./runtime/internal/search", "-run", "^$", "-bench", "^BenchmarkSearchCatalog10k$", "-benchtime", "2000x")
	cmd.Dir = cfg.root
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("search benchmark: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`([\d.]+) p50-µs\s+([\d.]+) p99-µs`).FindSubmatch(out)
	if m == nil {
		return fmt.Errorf("search benchmark: no percentiles in\n%s", out)
	}
	// TestQuality fails when the held-out part is below its floors; its figures are
	// printed either way.
	cmd = exec.Command("go", "test", "-count=1", "-v", "./runtime/internal/search", "-run", "^TestQuality$")
	cmd.Dir = cfg.root
	out, _ = cmd.CombinedOutput()
	quality := regexp.MustCompile(`(?m)^quality (\w+): (\d+) tasks: top-1 ([\d.]+%), top-5 ([\d.]+%), MRR ([\d.]+) \((\d+) not counted\)$`).FindAllSubmatch(out, -1)
	if len(quality) != 2 {
		return fmt.Errorf("search quality: no figures in\n%s", out)
	}

	fmt.Fprintf(w, "## Search and the search view\n\n")
	fmt.Fprintf(w, "How well toolnode.search ranks: the quality set's tasks in users' words, each with the tools that answer it\n"+
		"(runtime/internal/search/testdata/quality; the held-out part was written before the ranking was tuned and never\n"+
		"tuned against; `go test ./runtime/internal/search -run TestQuality -v`).\n\n")
	fmt.Fprintf(w, "| part | tasks | top-1 | top-5 | MRR | not counted (no tool of theirs in the catalog) |\n|---|---|---|---|---|---|\n")
	for _, q := range quality {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", q[1], q[2], q[3], q[4], q[5], q[6])
	}
	fmt.Fprintf(w, "\nHow fast: the index alone over 10,000 tools (the MEOS and example catalogs copied under other bundle names,\n"+
		"`go test ./runtime/internal/search -bench SearchCatalog10k`), and a search call through the node's stdio front over\n"+
		"the catalog of ./examples and ./bundles (%d tools), 400 calls one at a time, with the %d tasks of the quality set.\n\n", tools, len(f.Tasks))
	fmt.Fprintf(w, "| catalog | p50 | p99 |\n|---|---|---|\n")
	fmt.Fprintf(w, "| 10,000 tools, the index alone | %s µs | %s µs |\n", m[1], m[2])
	fmt.Fprintf(w, "| %d tools, a search call through the node | %s | %s |\n\n", tools, us(lat[len(lat)/2]), us(lat[len(lat)*99/100]))
	fmt.Fprintf(w, "What a client is listed of that catalog under each `--view`, in one page (`--page-size 0`), under the\n"+
		"names a client that does not take dots is given: the bytes of the tools/list answer, and the tokens a model\n"+
		"spends on them, estimated as bytes/4 (what the auto view's budget counts: at most %d tools and %d tokens).\n\n",
		front.DefaultViewMaxTools, front.DefaultViewMaxTokens)
	fmt.Fprintf(w, "| view | tools listed | bytes of tools/list | tokens (estimated) |\n|---|---|---|---|\n")
	for _, v := range []struct {
		name string
		list []byte
	}{{"full", fullList}, {"auto (the default)", autoList}, {"search", searchList}} {
		fmt.Fprintf(w, "| %s | %d | %d (%.1f%% of full) | %d |\n", v.name, countTools(v.list), len(v.list),
			100*float64(len(v.list))/float64(len(fullList)), catalog.EstimateTokens(len(v.list)))
	}
	fmt.Fprintln(w)
	return nil
}

// countTools counts the tools of a tools/list answer.
func countTools(answer []byte) int {
	var m struct {
		Result struct {
			Tools []json.RawMessage `json:"tools"`
		} `json:"result"`
	}
	_ = json.Unmarshal(answer, &m)
	return len(m.Result.Tools)
}
