package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// lazyBundles compares, in one run, 50 lazy echo-go bundles listed from their cached
// surfaces with 50 eager ones and with one bundle alone: the time from `toolnode serve` to
// the merged tools/list, the node's memory, and the latency of the first call of a
// sleeping bundle, which starts it.
func lazyBundles(cfg config, w *strings.Builder) error {
	_, bin, err := benchBundle(cfg, "echo-go")
	if err != nil {
		return err
	}
	const n = 50
	eager, err := bundleFarm(n, "echo", []string{bin}, nil)
	if err != nil {
		return err
	}
	defer os.RemoveAll(eager)
	lazy, err := bundleFarm(n, "echo", []string{bin}, map[string]any{"start": "lazy"})
	if err != nil {
		return err
	}
	defer os.RemoveAll(lazy)
	one, err := bundleFarm(1, "echo", []string{bin}, nil)
	if err != nil {
		return err
	}
	defer os.RemoveAll(one)
	state, err := os.MkdirTemp("", "toolnode-bench-state-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(state)
	if err := fillSurfaces(cfg, lazy, state, n); err != nil {
		return err
	}

	serve := func(dir string) []string {
		return []string{"serve", "--bundles", dir, "--state-dir", state, "--log-level", "warn"}
	}
	configs := []struct {
		what  string
		dir   string
		tools []string
	}{
		{"1 bundle alone", one, echoTools(1)},
		{"50 eager bundles", eager, echoTools(n)},
		{"50 lazy bundles, surfaces cached", lazy, echoTools(n)},
	}
	fmt.Fprintf(w, "## Lazy bundles: listed from their cached surface, started on the first call\n\n")
	fmt.Fprintf(w, "Medians of %d starts of the node over echo-go bundles.\n\n", startRuns)
	fmt.Fprintf(w, "| bundles | serve to merged tools/list | vs one bundle alone | node RSS after the list | bundle processes running |\n|---|---|---|---|---|\n")
	var alone time.Duration
	for i, c := range configs {
		var starts []time.Duration
		for range startRuns {
			d, err := timedStart(c.tools, cfg.node, serve(c.dir)...)
			if err != nil {
				return fmt.Errorf("%s: %w", c.what, err)
			}
			starts = append(starts, d)
		}
		rss, kids, err := listedRSS(cfg, serve(c.dir))
		if err != nil {
			return fmt.Errorf("%s: %w", c.what, err)
		}
		if i == 0 {
			alone = median(starts)
		}
		fmt.Fprintf(w, "| %s | %s | %.2f× | %.1f MiB | %d |\n", c.what, ms(median(starts)), float64(median(starts))/float64(alone), float64(rss)/1024, kids)
		fmt.Fprintf(os.Stderr, "bench: %s done\n", c.what)
	}

	var first, warm []time.Duration
	for i := range startRuns {
		f, h, err := firstCall(cfg, serve(lazy), fmt.Sprintf("echo-%02d.echo", i))
		if err != nil {
			return err
		}
		first, warm = append(first, f), append(warm, h)
	}
	fmt.Fprintf(w, "\nFirst call of a sleeping bundle (it starts, then answers): %s; the next call to it: %s\n"+
		"(medians of %d nodes). The first call pays for the bundle's start; no other bundle starts.\n\n",
		ms(median(first)), ms(median(warm)), startRuns)
	return nil
}

// fillSurfaces runs a node over dir until the n lazy bundles' surfaces are cached in state.
func fillSurfaces(cfg config, dir, state string, n int) error {
	c, err := startLines(cfg.node, "serve", "--bundles", dir, "--state-dir", state, "--log-level", "warn")
	if err != nil {
		return err
	}
	defer c.close()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		files, _ := filepath.Glob(filepath.Join(state, "surfaces", "*.json"))
		if len(files) == n {
			return nil
		}
	}
	return fmt.Errorf("the surfaces of %d lazy bundles were not cached within a minute", n)
}

// listedRSS starts a node, lists its tools, and returns the node's VmRSS in KiB and how
// many processes it runs.
func listedRSS(cfg config, args []string) (int, int, error) {
	c, err := startListed(cfg, args)
	if err != nil {
		return 0, 0, err
	}
	defer c.close()
	pid := c.cmd.Process.Pid
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	rss := 0
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			rss, _ = strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
		}
	}
	if rss == 0 {
		return 0, 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
	}
	return rss, childCount(pid), nil
}

// startListed starts a node and lists its tools, as a client does before calling.
func startListed(cfg config, args []string) (*lineClient, error) {
	c, err := startLines(cfg.node, args...)
	if err != nil {
		return nil, err
	}
	if _, err := listPages(c); err != nil {
		c.close()
		return nil, err
	}
	return c, nil
}

// childCount counts the live processes whose parent is pid.
func childCount(pid int) int {
	entries, _ := os.ReadDir("/proc")
	k := 0
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(fields) > 1 && fields[0] != "Z" && fields[1] == strconv.Itoa(pid) {
			k++
		}
	}
	return k
}

// firstCall starts a node with every bundle asleep and times a first call of tool, which
// starts its bundle, and a second one.
func firstCall(cfg config, args []string, tool string) (first, warm time.Duration, err error) {
	c, err := startListed(cfg, args)
	if err != nil {
		return 0, 0, err
	}
	defer c.close()
	call := func() (time.Duration, error) {
		t := time.Now()
		_, err := c.request("tools/call", `{"name":"`+tool+`","arguments":{"text":"bench"}}`)
		return time.Since(t), err
	}
	if first, err = call(); err != nil {
		return 0, 0, err
	}
	if warm, err = call(); err != nil {
		return 0, 0, err
	}
	if k := childCount(c.cmd.Process.Pid); k != 1 {
		return 0, 0, fmt.Errorf("after calling %s the node runs %d bundle processes, want 1", tool, k)
	}
	return first, warm, nil
}
