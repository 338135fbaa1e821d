package main

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// catalogScale lists a catalog of 2,000 tools (20 bundles of 100) through the node's stdio
// front, in one page and following nextCursor, and with names rendered for strict clients.
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
	fmt.Fprintf(w, "## A catalog of %d tools (%d bundles of %d), listed whole\n\n", bundles*perBundle, bundles, perBundle)
	fmt.Fprintf(w, "| listing | pages | bytes | lists/s | p50 | p99 |\n|---|---|---|---|---|---|\n")
	for _, v := range []struct {
		what  string
		flags []string
	}{
		{"one page (`--page-size 0`)", []string{"--page-size", "0"}},
		{"default page size, following nextCursor", nil},
		{"one page, names for strict clients (`--names underscore`)", []string{"--page-size", "0", "--names", "underscore"}},
	} {
		args := append([]string{"serve", "--bundles", dir, "--log-level", "warn"}, v.flags...)
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
		"count the whole answers. The client only looks for nextCursor in them.\n\n")
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
