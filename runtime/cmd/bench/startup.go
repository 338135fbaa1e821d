package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/reload"
)

// startRuns is how many times each start is timed; the median is reported.
const startRuns = 5

// timedStart starts a server over stdio and returns how long it took until its tools/list
// answered with every tool in want.
func timedStart(want []string, name string, args ...string) (time.Duration, error) {
	t := time.Now()
	c, err := startLines(name, args...)
	if err != nil {
		return 0, err
	}
	defer c.close()
	pages, err := listPages(c)
	d := time.Since(t)
	if err != nil {
		return 0, err
	}
	names, err := toolNames(pages)
	if err != nil {
		return 0, err
	}
	for _, tool := range want {
		if !names[tool] && !names[strings.ReplaceAll(tool, ".", "_")] { // either form of the name

			return 0, fmt.Errorf("%s listed %d tools, without %s", name, len(names), tool)
		}
	}
	return d, nil
}

// echoTools names the echo tools of the bundles echo-00 ... echo-(n-1).
func echoTools(n int) []string {
	var tools []string
	for i := range n {
		tools = append(tools, fmt.Sprintf("echo-%02d.echo", i))
	}
	return tools
}

// startup times a node from its start until the merged tools/list answers, with 0, 1, 10
// and 50 copies of the echo-go bundle, against the same bundles spawned directly at once.
func startup(cfg config, w *strings.Builder) error {
	_, bin, err := benchBundle(cfg, "echo-go")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "## Start-up: from `toolnode serve` to the merged tools/list\n\n")
	fmt.Fprintf(w, "Medians of %d starts.\n\n", startRuns)
	fmt.Fprintf(w, "| echo-go bundles | spawned directly, all at once | through the node | node vs direct | node vs one bundle alone |\n|---|---|---|---|---|\n")
	var alone time.Duration
	var ratio50 float64
	for _, n := range []int{0, 1, 10, 50} {
		var direct, viaNode []time.Duration
		dir, err := bundleFarm(n, "echo", []string{bin}, nil)
		if err != nil {
			return err
		}
		for range startRuns {
			if n > 0 {
				d, err := startMany(bin, n)
				if err != nil {
					os.RemoveAll(dir)
					return err
				}
				direct = append(direct, d)
			}
			d, err := timedStart(echoTools(n), cfg.node, "serve", "--bundles", dir, "--log-level", "warn")
			if err != nil {
				os.RemoveAll(dir)
				return err
			}
			viaNode = append(viaNode, d)
		}
		os.RemoveAll(dir)
		node := median(viaNode)
		if n == 0 {
			fmt.Fprintf(w, "| 0 | | %s | | |\n", ms(node))
			continue
		}
		if n == 1 {
			alone = median(direct)
		}
		vsAlone := float64(node) / float64(alone)
		if n == 50 {
			ratio50 = vsAlone
		}
		fmt.Fprintf(w, "| %d | %s | %s | %.2f× | %.2f× |\n", n, ms(median(direct)), ms(node),
			float64(node)/float64(median(direct)), vsAlone)
		fmt.Fprintf(os.Stderr, "bench: start-up with %d bundles done\n", n)
	}
	verdict := "met"
	if ratio50 > 1.5 {
		verdict = "missed"
	}
	fmt.Fprintf(w, "\nA start counts the spawn, the handshake and tools/list; through the node, also the node's own\n"+
		"start and the merge. Target: 50 bundles ready within 1.5× one bundle alone: %s (%.2f×). Starting\n"+
		"50 processes at once on this machine takes what the direct column shows, whoever starts them.\n\n", verdict, ratio50)
	return nil
}

// startMany spawns n copies of the echo bundle at once, as the node does, and returns how
// long until every one had listed its tools.
func startMany(bin string, n int) (time.Duration, error) {
	t := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	clients := make(chan *lineClient, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := startLines(bin)
			if err == nil {
				clients <- c
				_, err = listPages(c)
			}
			errs <- err
		}()
	}
	wg.Wait()
	d := time.Since(t)
	close(errs)
	close(clients)
	for c := range clients {
		c.close()
	}
	for err := range errs {
		if err != nil {
			return 0, err
		}
	}
	return d, nil
}

// hotAdd times a bundle copied into a folder the node watches, until the node has told its
// client the tool list changed and the new tool is listed.
func hotAdd(cfg config, w *strings.Builder) error {
	src, _, err := benchBundle(cfg, "echo-go")
	if err != nil {
		return err
	}
	watched, err := os.MkdirTemp("", "toolnode-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(watched)
	c, err := startLines(cfg.node, "serve", "--bundles", watched, "--log-level", "warn")
	if err != nil {
		return err
	}
	defer c.close()
	var copied, notified, listed []time.Duration
	for i := range startRuns {
		name := fmt.Sprintf("added-%d", i)
		// A late second notification of the previous add must not end this one's wait.
		time.Sleep(2 * reload.DefaultQuiet)
		c.drain()
		t := time.Now()
		if err := copyBundle(src, filepath.Join(watched, name), name); err != nil {
			return err
		}
		copied = append(copied, time.Since(t))
		changed := func(line []byte) bool { return bytes.Contains(line, []byte(`"notifications/tools/list_changed"`)) }
		if _, err := c.await("tools/list_changed", 20*time.Second, changed); err != nil {
			return fmt.Errorf("hot add of %s: %w", name, err)
		}
		notified = append(notified, time.Since(t))
		line, err := c.request("tools/list", "{}")
		if err != nil {
			return err
		}
		listed = append(listed, time.Since(t))
		if !bytes.Contains(line, []byte(`"`+name+`.echo"`)) {
			return fmt.Errorf("hot add: %s.echo not listed after tools/list_changed: %s", name, line)
		}
	}
	quiet := reload.DefaultQuiet
	total := median(listed)
	fmt.Fprintf(w, "## Hot add: a bundle copied into a watched folder\n\n")
	fmt.Fprintf(w, "| step, from the start of the copy | median of %d | slowest |\n|---|---|---|\n", startRuns)
	for _, r := range []struct {
		what string
		ds   []time.Duration
	}{
		{"copy done (bundle.json and the 5 MB program)", copied},
		{"`notifications/tools/list_changed` received", notified},
		{"new tool listed by `tools/list`", listed},
	} {
		fmt.Fprintf(w, "| %s | %s | %s |\n", r.what, ms(median(r.ds)), ms(slices.Max(r.ds)))
	}
	fmt.Fprintf(w, "\nThe node reloads once the watched folder has been still for %s. It sees the new\n"+
		"directory appear, not the files written into it, so that wait runs from the start of the copy:\n"+
		"it is %.0f%% of the figure; the rest (%s) is the bundle's start, the merge and the notification.\n\n",
		ms(quiet), 100*float64(quiet)/float64(total), ms(total-quiet))
	return nil
}

// copyBundle copies the echo-go bundle (its program too) to dst under another name, as a
// user dropping a bundle into a watched folder would.
func copyBundle(src, dst, name string) error {
	prog, err := os.ReadFile(filepath.Join(src, "build", "echo-go"))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dst, "echo-go"), prog, 0o755); err != nil {
		return err
	}
	return writeBundle(filepath.Dir(dst), name, []string{"./echo-go"}, nil)
}

// memory reads the node's resident memory, its own process only, serving 1 and 50 echo-go
// bundles after it is ready and has made some calls.
func memory(cfg config, w *strings.Builder) error {
	_, bin, err := benchBundle(cfg, "echo-go")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "## Memory of the node process\n\n")
	fmt.Fprintf(w, "| bundles | node RSS (median of 3 starts) | node peak RSS |\n|---|---|---|\n")
	var rss [2]int
	for i, n := range []int{1, 50} {
		dir, err := bundleFarm(n, "echo", []string{bin}, nil)
		if err != nil {
			return err
		}
		var kb, peak []int
		for range 3 {
			r, p, err := nodeRSS(cfg, dir, n)
			if err != nil {
				os.RemoveAll(dir)
				return err
			}
			kb, peak = append(kb, r), append(peak, p)
		}
		os.RemoveAll(dir)
		slices.Sort(kb)
		slices.Sort(peak)
		rss[i] = kb[1]
		fmt.Fprintf(w, "| %d | %.1f MiB | %.1f MiB |\n", n, float64(kb[1])/1024, float64(peak[1])/1024)
	}
	fmt.Fprintf(w, "\nEach bundle beyond the first costs the node %.0f KiB. Bundles' own memory is not counted.\n\n",
		float64(rss[1]-rss[0])/49)
	return nil
}

// nodeRSS starts a node over dir, waits for its n echo bundles, calls each of them a few
// times, and returns the node's VmRSS and VmHWM in KiB.
func nodeRSS(cfg config, dir string, n int) (rss, peak int, err error) {
	c, err := startLines(cfg.node, "serve", "--bundles", dir, "--log-level", "warn")
	if err != nil {
		return 0, 0, err
	}
	defer c.close()
	if _, err := listPages(c); err != nil {
		return 0, 0, err
	}
	for i := range 200 {
		tool := fmt.Sprintf("echo-%02d.echo", i%n)
		if _, err := c.request("tools/call", `{"name":"`+tool+`","arguments":{"text":"bench"}}`); err != nil {
			return 0, 0, err
		}
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", c.cmd.Process.Pid))
	if err != nil {
		return 0, 0, err
	}
	field := func(key string) int {
		for _, line := range strings.Split(string(status), "\n") {
			if v, ok := strings.CutPrefix(line, key+":"); ok {
				kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
				return kb
			}
		}
		return 0
	}
	if rss, peak = field("VmRSS"), field("VmHWM"); rss == 0 {
		return 0, 0, fmt.Errorf("no VmRSS in /proc/%d/status", c.cmd.Process.Pid)
	}
	return rss, peak, nil
}
