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
)

// searchSection measures toolnode.search through the node over the whole catalog of
// ./examples and ./bundles (the MEOS tools included) with the plain-language tasks of the
// search-quality test, and over 10,000 synthetic tools in process; and the bytes of
// tools/list in the full view against the search view of the same catalog.
func searchSection(cfg config, w *strings.Builder) error {
	b, err := os.ReadFile(filepath.Join(cfg.root, "runtime", "internal", "search", "testdata", "tasks.json"))
	if err != nil {
		return err
	}
	var f struct {
		Tasks []struct{ Task string } `json:"tasks"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("tasks.json: %w", err)
	}
	args := []string{"serve", "--bundles", filepath.Join(cfg.root, "examples"), "--bundles", filepath.Join(cfg.root, "bundles"),
		"--log-level", "warn", "--page-size", "0"}
	full, err := startStdio("toolnode.search", cfg.node, args...)
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
	tools, listed := countTools(fullList), countTools(searchList)

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

	// The synthetic catalog lives in the search package's benchmarks.
	cmd := exec.Command("go", "test", "./runtime/internal/search", "-run", "^$", "-bench", "^BenchmarkSearch10k$", "-benchtime", "2000x")
	cmd.Dir = cfg.root
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("search benchmark: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`([\d.]+) p50-µs\s+([\d.]+) p99-µs`).FindSubmatch(out)
	if m == nil {
		return fmt.Errorf("search benchmark: no percentiles in\n%s", out)
	}

	fmt.Fprintf(w, "## Search and the search view\n\n")
	fmt.Fprintf(w, "toolnode.search over the catalog of ./examples and ./bundles (%d tools), through the node's stdio front with\n"+
		"the %d plain-language tasks of the search-quality test, 400 calls one at a time; and the index alone over 10,000\n"+
		"synthetic tools (`go test ./runtime/internal/search -bench Search10k`).\n\n", tools, len(f.Tasks))
	fmt.Fprintf(w, "| catalog | p50 | p99 |\n|---|---|---|\n")
	fmt.Fprintf(w, "| %d tools, a search call through the node | %s | %s |\n", tools, us(lat[len(lat)/2]), us(lat[len(lat)*99/100]))
	fmt.Fprintf(w, "| 10,000 synthetic tools, the index alone | %s µs | %s µs |\n\n", m[1], m[2])
	fmt.Fprintf(w, "| view | tools listed | bytes of tools/list |\n|---|---|---|\n")
	fmt.Fprintf(w, "| full | %d | %d |\n", tools, len(fullList))
	fmt.Fprintf(w, "| search | %d | %d (%.1f%% of full) |\n\n", listed, len(searchList),
		100*float64(len(searchList))/float64(len(fullList)))
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
