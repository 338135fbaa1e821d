package main

import (
	"fmt"
	"os"
	"runtime"
	"strings"
)

// pool calls a tool that burns 1 ms of CPU, eight calls in flight, through the node with a
// pool of 1, 2 and 4 processes of the C echo bundle, which runs one call at a time.
func pool(cfg config, w *strings.Builder) error {
	_, bin, err := benchBundle(cfg, "echo-c")
	if err != nil {
		return err
	}
	direct, err := startStdio("burn", bin)
	if err != nil {
		return err
	}
	defer direct.close()
	var routes []route
	for _, n := range []int{1, 2, 4} {
		dir, err := bundleFarm(1, "burn", []string{bin}, map[string]any{"instances": n})
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		c, err := startStdio("burn-00.burn", cfg.node, "serve", "--bundles", dir, "--log-level", "warn")
		if err != nil {
			return err
		}
		defer c.close()
		routes = append(routes, route{name: fmt.Sprintf("node, `\"instances\": %d`", n), c: c})
	}
	routes = append(routes, route{name: "direct stdio, one process", c: direct})
	fmt.Fprintf(w, "## A pool of processes (`instances`) for a tool burning 1 ms of CPU\n\n")
	fmt.Fprintf(w, "| tool | path | in flight | calls/s | vs 1 instance | p50 | p99 |\n|---|---|---|---|---|---|---|\n")
	res, err := compareRoutes(cfg, w, "burn 1 ms", `{"ms":1}`, []int{8}, routes, -1)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\nEach process of the bundle runs one call at a time, so only more processes use more cores;\n"+
		"with %d cores here, 4 instances can at best go %d× faster than 1 (%.2f× measured), and the node\n"+
		"needs some of that CPU itself.\n\n", runtime.NumCPU(), runtime.NumCPU(), res[0][2].perSec/res[0][0].perSec)
	return nil
}
