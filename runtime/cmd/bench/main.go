// Command bench measures toolnode against the same bundles called directly, side by side in
// one run, and writes the table to docs/PERFORMANCE.md. `make bench` runs it.
package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

type config struct {
	root     string // repository root
	node     string // toolnode binary
	duration time.Duration
	rounds   int
	out      string
	only     string // comma-separated section names; "" runs every section
}

func main() {
	var cfg config
	flag.StringVar(&cfg.root, "root", ".", "repository root")
	flag.DurationVar(&cfg.duration, "duration", 2*time.Second, "length of one measurement")
	flag.IntVar(&cfg.rounds, "rounds", 3, "measurements per configuration; the median is reported")
	flag.StringVar(&cfg.out, "out", "docs/PERFORMANCE.md", "file the report is written to (- for none)")
	flag.StringVar(&cfg.only, "only", "", "run only these `SECTIONS` (comma-separated: "+strings.Join(sectionNames(), ", ")+")")
	flag.Parse()
	cfg.node = filepath.Join(cfg.root, "bin", "toolnode")
	do := run
	switch {
	case *floorFlag != "":
		do = func(config) error { return runFloor(*floorFlag) }
	case *relayFlag != "":
		do = func(config) error { return runRelay(*relayFlag, flag.Args()) }
	case *profileFlag != "":
		do = profileHTTP
	}
	if err := do(cfg); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// section is one part of the report.
type section struct {
	name string
	run  func(config, *strings.Builder) error
}

func sections() []section {
	return []section{{"calls", callLatency}, {"echo", echoLatency}, {"startup", startup}, {"hotadd", hotAdd},
		{"memory", memory}, {"scale", sessionScale}, {"lazy", lazyBundles}, {"catalog", catalogScale}, {"search", searchSection}, {"pool", pool},
		{"meos", meosThroughput}, {"run", runSection}, {"runworker", runWorkerSection}, {"peers", peers}, {"httpcpu", httpCPUSection}, {"cpu", eraCPU},
		{"telemetry", telemetrySection}, {"cluster", clusterHop}, {"replicas", replicasSection}, {"app", appOverhead},
		{"tasks", taskCost}, {"approvals", approvalCost}, {"exchange", exchangeCost}, {"results", resultsCut},
		{"sandbox", sandboxSection}, {"against", againstSection}}
}

func sectionNames() []string {
	var names []string
	for _, s := range sections() {
		names = append(names, s.name)
	}
	return names
}

func run(cfg config) error {
	var report strings.Builder
	fmt.Fprintf(&report, "# Performance\n\nMade by `make bench` (`go run ./runtime/cmd/bench`) on %s.\n\n%s%s\n",
		time.Now().UTC().Format("2006-01-02 15:04 MST"), machine(), loadAverage("at the start"))
	fmt.Fprintf(&report, "Each figure is the median of %d runs of %s; the configurations of a table run in the same\n"+
		"process, most taking turns one run at a time, so their ratios are what to read on a shared machine.\n\n", cfg.rounds, cfg.duration)
	for _, s := range sections() {
		if cfg.only != "" && !slices.Contains(strings.Split(cfg.only, ","), s.name) {
			continue
		}
		if err := s.run(cfg, &report); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
	}
	report.WriteString(loadAverage("at the end"))
	fmt.Print(report.String())
	if cfg.out != "-" {
		return os.WriteFile(cfg.out, []byte(report.String()), 0o644)
	}
	return nil
}

func machine() string {
	model := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		if m := regexp.MustCompile(`model name\s*:\s*(.*)`).FindSubmatch(b); m != nil {
			model = string(m[1])
		}
	}
	return fmt.Sprintf("Machine: %d cores (%s), %s, %s/%s.\n", runtime.NumCPU(), model, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// loadAverage says how busy the machine was when, which the figures of a machine shared
// with other work depend on.
func loadAverage(when string) string {
	b, err := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if err != nil || len(f) < 3 {
		return ""
	}
	return fmt.Sprintf("Load average %s: %s, %s, %s (1, 5, 15 min).\n", when, f[0], f[1], f[2])
}

// result is one configuration measured.
type result struct {
	perSec   float64
	p50, p99 time.Duration
}

// warmCalls is how many calls measure makes before it measures.
const warmCalls = 200

// measure runs inflight workers calling c for the duration, rounds times, and returns the
// median calls per second and the latency percentiles over all rounds.
func measure(c caller, args string, inflight int, cfg config) (result, error) {
	if err := warm(c, args); err != nil {
		return result{}, err
	}
	var rs []round
	for range cfg.rounds {
		r, err := measureRound(c, args, inflight, cfg.duration)
		if err != nil {
			return result{}, err
		}
		rs = append(rs, r)
	}
	return summarize(rs), nil
}

// warm makes calls before any is measured: the first pay for page faults and lazy set-up.
func warm(c caller, args string) error {
	for range warmCalls {
		if err := c.call(args); err != nil {
			return err
		}
	}
	return nil
}

// round is one measurement: its rate and every call's latency.
type round struct {
	perSec float64
	lat    []time.Duration
}

// measureRound runs inflight workers calling c for d.
func measureRound(c caller, args string, inflight int, d time.Duration) (round, error) {
	var mu sync.Mutex
	var lat []time.Duration
	var firstErr error
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(d)
	for range inflight {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for time.Now().Before(deadline) {
				t := time.Now()
				if err := c.call(args); err != nil {
					mu.Lock()
					firstErr = err
					mu.Unlock()
					return
				}
				mine = append(mine, time.Since(t))
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return round{}, firstErr
	}
	return round{perSec: float64(len(lat)) / time.Since(start).Seconds(), lat: lat}, nil
}

// summarize gives the median rate of rounds and the latency percentiles over all of them.
func summarize(rs []round) result {
	var rates []float64
	var all []time.Duration
	for _, r := range rs {
		rates = append(rates, r.perSec)
		all = append(all, r.lat...)
	}
	sort.Float64s(rates)
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	return result{perSec: rates[len(rates)/2], p50: all[len(all)/2], p99: all[len(all)*99/100]}
}

// bundleDir links one example bundle into a folder of its own, for a node serving only it.
func bundleDir(cfg config, name string) (string, error) {
	abs, err := filepath.Abs(filepath.Join(cfg.root, "examples", name))
	if err != nil {
		return "", err
	}
	return linkBundle(abs)
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// startNodeHTTP runs the node with an HTTP front over dir and waits until it answers.
func startNodeHTTP(cfg config, dir, tool string) (*httpClient, func(), error) {
	c, _, stop, err := startNodeEnv(cfg, dir, tool, nil)
	return c, stop, err
}

// startNodeEnv is startNodeHTTP with env added to the node's environment and args to its
// command line; it also returns the node's pid.
func startNodeEnv(cfg config, dir, tool string, env []string, args ...string) (*httpClient, int, func(), error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, 0, nil, err
	}
	cmd := exec.Command(cfg.node, append([]string{"serve", "--bundles", dir, "--http", addr, "--log-level", "warn"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, 0, nil, err
	}
	stop := func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if c, err := startHTTP("http://"+addr+"/mcp", tool); err == nil {
			return c, cmd.Process.Pid, stop, nil
		}
	}
	stop()
	return nil, 0, nil, fmt.Errorf("node at %s did not answer", addr)
}

// callLatency compares a trivial call made directly on a bundle over stdio with the same
// call through the node's stdio and HTTP fronts, and the floor.
func callLatency(cfg config, w *strings.Builder) error {
	fmt.Fprintf(w, "## A trivial call (`greet`), direct and through the node\n\n")
	fmt.Fprintf(w, "| bundle | path | in flight | calls/s | vs direct | vs floor | p50 | p99 |\n|---|---|---|---|---|---|---|---|\n")
	var notes []string
	for _, lang := range []string{"go", "c"} {
		note, err := greetRows(cfg, w, lang)
		if err != nil {
			return err
		}
		notes = append(notes, note)
	}
	fmt.Fprintf(w, "\n%s\n\n", strings.Join(notes, "\n"))
	return nil
}

func greetRows(cfg config, w *strings.Builder, lang string) (string, error) {
	dir, err := bundleDir(cfg, lang)
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	return nodeRows(cfg, w, lang, dir, "greet", `{"name":"bench"}`, false, filepath.Join(cfg.root, "examples", lang, "build", "example-"+lang))
}

func us(d time.Duration) string { return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond)) }
