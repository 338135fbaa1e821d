package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// catalogScale lists a catalog of 2,000 tools (20 bundles of 100) through the node's stdio
// front, in one page and following nextCursor, with names rendered for strict clients, and
// with every definition pinned by a lock file.
func catalogScale(cfg config, w *strings.Builder) error {
	const bundles, perBundle = 20, 100
	_, bin, err := benchBundle(cfg, "many-go")
	if err != nil {
		return err
	}
	dir, err := bundleFarm(bundles, "many", []string{bin, strconv.Itoa(perBundle)}, nil)
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	// The lock pins every tool, so that the node with --lock lists the same catalog.
	lock := filepath.Join(dir, "toolnode.lock")
	if out, err := exec.Command(cfg.node, "pin", "--bundles", dir, "--lock", lock).CombinedOutput(); err != nil {
		return fmt.Errorf("toolnode pin: %v\n%s", err, out)
	}
	fmt.Fprintf(w, "## A catalog of %d tools (%d bundles of %d), listed whole\n\n", bundles*perBundle, bundles, perBundle)
	fmt.Fprintf(w, "| listing | pages | bytes | lists/s | p50 | p99 |\n|---|---|---|---|---|---|\n")
	for _, v := range []struct {
		what  string
		flags []string
	}{
		{"one page (`--page-size 0`)", []string{"--page-size", "0", "--names", "canonical"}},
		{"default page size, following nextCursor", []string{"--names", "canonical"}},
		{"one page, names for strict clients (`--names underscore`)", []string{"--page-size", "0", "--names", "underscore"}},
		{"one page, every definition pinned (`--lock`)", []string{"--page-size", "0", "--lock", lock}},
	} {
		args := append([]string{"serve", "--bundles", dir, "--log-level", "warn", "--view", "full"}, v.flags...)
		c, err := startLines(cfg.node, args...)
		if err != nil {
			return err
		}
		pages, err := listPages(c)
		var r result
		if err == nil {
			// Checked once, outside the timing: the timed lists only look for nextCursor.
			var names map[string]bool
			if names, err = toolNames(pages); err == nil && len(names) < bundles*perBundle {
				err = fmt.Errorf("listed %d distinct tools, want %d", len(names), bundles*perBundle)
			}
		}
		if err == nil {
			r, err = timeLists(c, cfg)
		}
		c.close()
		if err != nil {
			return fmt.Errorf("catalog of %d tools, %s: %w", bundles*perBundle, v.what, err)
		}
		size := 0
		for _, p := range pages {
			size += len(p)
		}
		fmt.Fprintf(w, "| %s | %d | %d | %.0f | %s | %s |\n", v.what, len(pages), size, r.perSec, ms(r.p50), ms(r.p99))
		fmt.Fprintf(os.Stderr, "bench: catalog, %s done\n", v.what)
	}
	fmt.Fprintf(w, "\nOne list at a time over the stdio front; a list is every page, each a round trip, and bytes\n"+
		"count the whole answers. The client only looks for nextCursor in them. A lock is checked when the\n"+
		"catalog is built, not when it is listed: its cost is in the table below, not in a list's.\n\n")
	// What a lock costs where it is checked: once per rebuild of the catalog.
	cmd := exec.Command("go", "test", "./runtime/internal/pin", "-run", "^$", "-bench", "^BenchmarkCheck2000", "-benchtime", "20x")
	cmd.Dir = cfg.root
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("pin benchmark: %v\n%s", err, out)
	}
	fmt.Fprintf(w, "| checking a lock of %d tools (`go test ./runtime/internal/pin -bench Check2000`) | time |\n|---|---|\n", bundles*perBundle)
	for _, b := range []struct{ name, what string }{
		{"BenchmarkCheck2000", "the first catalog: every definition digested"},
		{"BenchmarkCheck2000Rebuild", "a rebuild with the same definitions (a bundle restarted): digests remembered"},
	} {
		m := regexp.MustCompile(b.name + `-\d+\s+\d+\s+(\d+) ns/op`).FindSubmatch(out)
		if m == nil {
			return fmt.Errorf("pin benchmark: no %s in\n%s", b.name, out)
		}
		nsop, _ := strconv.Atoi(string(m[1]))
		fmt.Fprintf(w, "| %s | %s |\n", b.what, ms(time.Duration(nsop)))
	}
	w.WriteString("\n")
	return nil
}

// timeLists lists the whole catalog again and again for cfg.duration, cfg.rounds times, and
// returns the median lists per second and the percentiles of one list.
func timeLists(c *lineClient, cfg config) (result, error) {
	var rates []float64
	var all []time.Duration
	for range cfg.rounds {
		start := time.Now()
		n := 0
		for time.Since(start) < cfg.duration {
			t := time.Now()
			if _, err := listPages(c); err != nil {
				return result{}, err
			}
			all = append(all, time.Since(t))
			n++
		}
		rates = append(rates, float64(n)/time.Since(start).Seconds())
	}
	slices.Sort(rates)
	slices.Sort(all)
	return result{perSec: rates[len(rates)/2], p50: all[len(all)/2], p99: all[len(all)*99/100]}, nil
}
