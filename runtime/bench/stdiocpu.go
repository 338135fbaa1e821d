package main

import (
	"fmt"
	"os"
	"strings"
)

// stdioCPU measures the CPU time per call of each process on the stdio path, under the
// echo load with profileInflight calls in flight: the echo-go bundle called directly in
// either era, and the node's stdio front before it, called by a client of either era.
// What the node adds per relayed call is read here without a profiler's own cost.
func stdioCPU(cfg config, w *strings.Builder) error {
	folder, bin, err := benchFolder(cfg, "echo-go")
	if err != nil {
		return err
	}
	defer os.RemoveAll(folder)
	node := []string{"serve", "--bundles", folder, "--log-level", "warn"}
	type path struct {
		name  string
		start func() (*stdioClient, error)
		node  bool
	}
	paths := []path{
		{"echo-go called directly, 2025-11-25 session", func() (*stdioClient, error) { return startStdio("echo", bin) }, false},
		{"echo-go called directly, 2026-07-28 stateless", func() (*stdioClient, error) { return startStdioStateless("echo", bin) }, false},
		{"node, stdio front, 2025-11-25 client", func() (*stdioClient, error) { return startStdio("echo-go.echo", cfg.node, node...) }, true},
		{"node, stdio front, 2026-07-28 client", func() (*stdioClient, error) { return startStdioStateless("echo-go.echo", cfg.node, node...) }, true},
	}
	load := 2 * cfg.duration
	fmt.Fprintf(w, "## CPU per call over stdio: direct and through the node\n\n")
	fmt.Fprintf(w, "echo-go with %d calls in flight for %s per row; CPU per call is each process's user and system\n"+
		"time (from /proc) over the calls made. The node speaks 2026-07-28 to the bundle whichever era its client speaks.\n\n", profileInflight, load)
	fmt.Fprintf(w, "| path | calls/s | node | bundle | client | all |\n|---|---|---|---|---|---|\n")
	for _, p := range paths {
		c, err := p.start()
		if err != nil {
			return fmt.Errorf("%s: %w", p.name, err)
		}
		res, own, children, client, err := cpuPerCall(c, c.cmd.Process.Pid, load)
		c.close()
		if err != nil {
			return fmt.Errorf("%s: %w", p.name, err)
		}
		nodeCPU, bundle := "", own
		if p.node {
			nodeCPU, bundle = fmt.Sprintf("%.1f µs", micros(own)), children
		}
		fmt.Fprintf(w, "| %s | %.0f | %s | %.1f µs | %.1f µs | %.1f µs |\n", p.name, res.perSec, nodeCPU, micros(bundle), micros(client), micros(own+children+client))
	}
	fmt.Fprintln(w)
	return nil
}
