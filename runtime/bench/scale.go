package main

import (
	"fmt"
	"os"
	"strings"
)

// catalogScale lists a catalog of 2,000 tools (20 bundles of 100) through the node's stdio
// front, in one page and following nextCursor, and with names rendered for strict clients.
func catalogScale(cfg config, w *strings.Builder) error {
	const bundles, perBundle = 20, 100
	_, bin, err := benchBundle(cfg, "many-go")
	if err != nil {
		return err
	}
	dir, err := bundleFarm(bundles, "many", []string{bin, fmt.Sprint(perBundle)}, nil)
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
		c, err := startStdio("", cfg.node, args...)
		if err != nil {
			return err
		}
		l, err := listAll(c)
		if err == nil && l.tools < bundles*perBundle {
			err = fmt.Errorf("%s: listed %d tools, want %d", v.what, l.tools, bundles*perBundle)
		}
		var r result
		if err == nil {
			r, err = measure(lister{c}, "", 1, cfg)
		}
		c.close()
		if err != nil {
			return fmt.Errorf("catalog of %d tools, %s: %w", bundles*perBundle, v.what, err)
		}
		fmt.Fprintf(w, "| %s | %d | %d | %.0f | %s | %s |\n", v.what, l.pages, l.bytes, r.perSec, ms(r.p50), ms(r.p99))
		fmt.Fprintf(os.Stderr, "bench: catalog, %s done\n", v.what)
	}
	fmt.Fprintf(w, "\nOne list at a time; a list is every page, each a round trip, and bytes count the whole answers.\n\n")
	return nil
}
