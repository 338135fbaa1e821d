package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/telemetry"
)

var profileFlag = flag.String("profile-http", "", "only profile the HTTP front and the floor under the echo load, into this file and file.floor, and print where their CPU goes per call")

// profileInflight is the load the HTTP front is profiled under.
const profileInflight = 8

// profiled is one process profiled under the load.
type profiled struct {
	name    string
	res     result
	perCall time.Duration // CPU time per call
	bundle  time.Duration // CPU time per call of the process's children
	client  time.Duration // CPU time per call of the client driving it
	stacks  []stack
	total   time.Duration // of samples
}

// profileHTTP is the whole of the program when -profile-http is given.
func profileHTTP(cfg config) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s%s\n", machine(), loadAverage("at the start"))
	if err := httpCPU(cfg, &b, *profileFlag); err != nil {
		return err
	}
	fmt.Print(b.String())
	return nil
}

// httpCPUSection is httpCPU as a section of the report, its profiles kept in build/.
func httpCPUSection(cfg config, w *strings.Builder) error {
	return httpCPU(cfg, w, filepath.Join(cfg.root, "build", "http-front.pprof"))
}

// httpCPU drives the node's HTTP front over the echo-go bundle, and then the floor, with
// the same load, measures the CPU time each process spends per call, and breaks it down by
// what their CPU profiles, written to out and out.floor, say they were doing. Both
// processes write a profile when TOOLNODE_CPUPROFILE names a file.
func httpCPU(cfg config, w *strings.Builder, out string) error {
	out, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	dir, bin, err := benchFolder(cfg, "echo-go")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	load := 5 * cfg.duration
	c, pid, stop, err := startNodeEnv(cfg, dir, "echo-go.echo", []string{telemetry.ProfileEnv + "=" + out})
	if err != nil {
		return err
	}
	node, err := profileUnderLoad("node, HTTP front", c, pid, stop, load, out)
	if err != nil {
		return err
	}
	floor, err := startFloor(telemetry.ProfileEnv + "=" + out + ".floor")
	if err != nil {
		return err
	}
	fl, err := profileUnderLoad("floor", floor.c, floor.pid, floor.stop, load, out+".floor")
	if err != nil {
		return err
	}
	relay, err := startHTTPRelay("echo-go.echo", []string{bin}, telemetry.ProfileEnv+"="+out+".relay")
	if err != nil {
		return err
	}
	rl, err := profileUnderLoad("least HTTP relay", relay.c, relay.pid, relay.stop, load, out+".relay")
	if err != nil {
		return err
	}

	fmt.Fprintf(w, "## CPU per HTTP call: the HTTP front against the floor and the least HTTP relay\n\n")
	fmt.Fprintf(w, "echo-go behind the node's HTTP front, %d calls in flight for %s, then the floor and the least HTTP relay\n"+
		"(in front of its own echo-go) under the same load (`make bench-http-profile` runs this alone). CPU per call\n"+
		"is a process's user and system time over the calls made; the breakdowns share each process's CPU\n"+
		"out by the samples of its CPU profile (pprof; each writes one where `TOOLNODE_CPUPROFILE` says),\n"+
		"kept in %s, %s.floor and %s.relay.\n\n",
		profileInflight, load, rel(cfg, out), rel(cfg, out), rel(cfg, out))
	fmt.Fprintf(w, "| process | calls/s | p50 | p99 | CPU per call | its bundle's | the client's | all three | samples |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, p := range []profiled{node, fl, rl} {
		fmt.Fprintf(w, "| %s | %.0f | %s | %s | %.1f µs | %.1f µs | %.1f µs | %.1f µs | %s |\n", p.name, p.res.perSec, us(p.res.p50), us(p.res.p99),
			micros(p.perCall), micros(p.bundle), micros(p.client), micros(p.perCall+p.bundle+p.client), p.total)
	}
	all := func(p profiled) float64 { return float64(p.perCall + p.bundle + p.client) }
	fmt.Fprintf(w, "\nThe node spends %.2f× the floor's CPU per call. With its bundle and the client, a call through\n"+
		"the node costs %.2f× the CPU of a call to the floor: on a machine whose cores are all busy, the\n"+
		"node's rate can reach at most %.2f× the floor's until that changes.\n\n",
		float64(node.perCall)/float64(fl.perCall), all(node)/all(fl), all(fl)/all(node))
	fmt.Fprintf(w, "Against the least HTTP relay, which also writes each call to a bundle and reads its answer, the node\n"+
		"spends %.2f× the CPU per call (%+.1f µs), its bundle %+.1f µs and the client %+.1f µs: all three %.2f×, so the node's\n"+
		"rate can reach at most %.2f× the relay's.\n\n",
		float64(node.perCall)/float64(rl.perCall), micros(node.perCall-rl.perCall), micros(node.bundle-rl.bundle),
		micros(node.client-rl.client), all(node)/all(rl), all(rl)/all(node))
	writeBreakdown(w, node, fl, rl)
	return nil
}

// rel names path from the repository root when it is under it.
func rel(cfg config, path string) string {
	root, err := filepath.Abs(cfg.root)
	if err != nil {
		return path
	}
	if r, err := filepath.Rel(root, path); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return path
}

// profileUnderLoad puts the load on c, stops the process (pid, which writes its profile as
// path.pid), moves the profile to path and reads it.
func profileUnderLoad(name string, c caller, pid int, stop func(), load time.Duration, path string) (profiled, error) {
	res, perCall, bundle, client, err := cpuPerCall(c, pid, load)
	c.close()
	stop()
	if err != nil {
		return profiled{}, fmt.Errorf("%s: %w", name, err)
	}
	if err := os.Rename(fmt.Sprintf("%s.%d", path, pid), path); err != nil {
		return profiled{}, fmt.Errorf("%s wrote no profile: %w", name, err)
	}
	traces, err := exec.Command("go", "tool", "pprof", "-traces", path).Output()
	if err != nil {
		return profiled{}, fmt.Errorf("go tool pprof -traces %s: %w", path, err)
	}
	stacks, total := parseTraces(traces)
	return profiled{name: name, res: res, perCall: perCall, bundle: bundle, client: client, stacks: stacks, total: total}, nil
}

func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// cpuPerCall puts the load on c and returns what was measured and the CPU time (user and
// system) spent per call meanwhile, warm-up included, by process pid, by its children (the
// bundle, for the node) and by this process (the client).
func cpuPerCall(c caller, pid int, load time.Duration) (res result, own, children, client time.Duration, err error) {
	kids := childrenOf(pid)
	pids := append([]int{pid, os.Getpid()}, kids...)
	before := make([]time.Duration, len(pids))
	for i, p := range pids {
		if before[i], err = cpuTime(p); err != nil {
			return result{}, 0, 0, 0, err
		}
	}
	if res, err = measure(c, `{"text":"bench"}`, profileInflight, config{duration: load, rounds: 1}); err != nil {
		return result{}, 0, 0, 0, err
	}
	calls := warmCalls + res.perSec*load.Seconds()
	spent := make([]time.Duration, len(pids))
	for i, p := range pids {
		after, err := cpuTime(p)
		if err != nil {
			return result{}, 0, 0, 0, err
		}
		spent[i] = time.Duration(float64(after-before[i]) / calls)
	}
	for _, d := range spent[2:] {
		children += d
	}
	return res, spent[0], children, spent[1], nil
}

// childrenOf lists the processes whose parent is pid.
func childrenOf(pid int) []int {
	var kids []int
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		p, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
		if err != nil {
			continue
		}
		// After the command name in parentheses: state, then the parent's pid.
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			kids = append(kids, p)
		}
	}
	return kids
}

// cpuTime is the user and system CPU time process pid has used so far.
func cpuTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("cpu time of %d: %w", pid, err)
	}
	// The command name, in parentheses, may hold spaces: count fields after it.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("cpu time of %d: short /proc stat", pid)
	}
	var ticks int64
	for _, s := range f[11:13] { // utime and stime, fields 14 and 15
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("cpu time of %d: %w", pid, err)
		}
		ticks += n
	}
	// Linux reports in USER_HZ, 100 on every architecture Go runs on.
	return time.Duration(ticks) * 10 * time.Millisecond, nil
}

// stack is one sampled call stack, leaf first, and the CPU time sampled in it.
type stack struct {
	frames []string
	t      time.Duration
}

var traceValue = regexp.MustCompile(`^\s*(\d+(?:\.\d+)?)(ns|us|µs|ms|s)\s+(\S.*)$`)

// parseTraces reads the output of `go tool pprof -traces`: blocks separated by lines of
// dashes, each a value and the leaf function on its first line and callers on the next.
func parseTraces(out []byte) ([]stack, time.Duration) {
	var stacks []stack
	var total time.Duration
	for _, block := range strings.Split(string(out), "-----------+-------------------------------------------------------") {
		lines := strings.Split(strings.TrimSpace(block), "\n")
		m := traceValue.FindStringSubmatch(lines[0])
		if m == nil {
			continue
		}
		d, err := time.ParseDuration(m[1] + strings.Replace(m[2], "µs", "us", 1))
		if err != nil {
			continue
		}
		s := stack{t: d, frames: []string{strings.TrimSpace(m[3])}}
		for _, l := range lines[1:] {
			if f := strings.TrimSpace(l); f != "" {
				s.frames = append(s.frames, f)
			}
		}
		stacks = append(stacks, s)
		total += d
	}
	return stacks, total
}

// writeBreakdown writes two tables of the CPU per call of each process, each stack counting
// once in each: by the stage of a call the stack is in, and by the kind of work done at
// its leaf. The last column is what the first process spends over the second.
func writeBreakdown(b *strings.Builder, ps ...profiled) {
	table := func(title string, classes []class) []string {
		fmt.Fprintf(b, "| %s |", title)
		for _, p := range ps {
			fmt.Fprintf(b, " %s |", p.name)
		}
		fmt.Fprintf(b, " difference |\n|---|%s---|\n", strings.Repeat("---|", len(ps)))
		perCall := make([][]float64, len(ps)) // [process][class], µs
		for j, p := range ps {
			sums := make([]time.Duration, len(classes)+1)
			for _, s := range p.stacks {
				joined := strings.Join(s.frames, " < ")
				i := 0
				for i < len(classes) && !classes[i].re.MatchString(joined) {
					i++
				}
				sums[i] += s.t
			}
			for _, t := range sums {
				perCall[j] = append(perCall[j], float64(t)/float64(p.total)*micros(p.perCall))
			}
		}
		for i := range len(classes) + 1 {
			name := "other"
			if i < len(classes) {
				name = classes[i].name
			}
			fmt.Fprintf(b, "| %s |", name)
			for j := range ps {
				fmt.Fprintf(b, " %.1f µs |", perCall[j][i])
			}
			fmt.Fprintf(b, " %+.1f µs |\n", perCall[0][i]-perCall[len(ps)-1][i])
		}
		fmt.Fprintln(b)
		// The classes the first process spends most more on than the last.
		order := make([]int, len(classes)+1)
		for i := range order {
			order[i] = i
		}
		diff := func(i int) float64 { return perCall[0][i] - perCall[len(ps)-1][i] }
		sort.Slice(order, func(x, y int) bool { return diff(order[x]) > diff(order[y]) })
		var most []string
		for _, i := range order[:min(3, len(order))] {
			if i < len(classes) {
				most = append(most, fmt.Sprintf("%s (%+.1f µs)", classes[i].name, diff(i)))
			}
		}
		return most
	}
	most := table("stage of the call", stages)
	table("kind of work at the leaf", kinds)
	if len(ps) > 1 {
		fmt.Fprintf(b, "Where %s spends most over %s: %s.\n\n", ps[0].name, ps[len(ps)-1].name, strings.Join(most, "; "))
	}
}

// class is a kind of stack, known by a pattern over its frames joined leaf first with
// " < "; a stack belongs to the first class of a list that matches it.
type class struct {
	name string
	re   *regexp.Regexp
}

func classes(pairs ...string) []class {
	var cs []class
	for i := 0; i < len(pairs); i += 2 {
		cs = append(cs, class{pairs[i], regexp.MustCompile(pairs[i+1])})
	}
	return cs
}

// gcBackground matches the collector's own goroutines, and the yields of its sweeper,
// whose stacks the profiler sees cut at runtime.mcall.
const gcBackground = `runtime\.(gcBgMarkWorker|bgsweep|bgscavenge)\b|^runtime\.gosched_m < runtime\.mcall$`

// stages follow a call through the node, from the request's bytes to the answer's. They
// are known by packages and by functions of net/http, which stay put while the node's own
// code changes shape; a few name functions of the front and have alternatives for its
// shapes so far.
var stages = classes(
	"garbage collector's own work (mark, sweep, their yields)", gcBackground,
	"node: write the call to the bundle's stdin (write(2) to the pipe)", `(os\.\(\*File\)\.Write|os\.\(\*rawConn\)\.Write|golang\.org/x/sys/unix\.Write|jsonl\.pipeRoom)\b`,
	"node: read the bundle's stdout (read(2) from the pipe)", `(os\.\(\*File\)\.Read|os\.\(\*rawConn\)\.Read|internal/poll\.\(\*FD\)\.Read)\b.*(jsonrpc2|toolnode/runtime)[^<]*$`,
	"node: take the answer off the bundle's stdout (parse, match the id, wake the caller)", `(jsonrpc2|toolnode/runtime)[^<]*$`,
	"node: route the call and keep track of it (catalog, ids, contexts, timers, tables)", `toolnode/runtime/internal/(node|upstream)\.`,
	"front: decode the request as JSON-RPC", `(encoding/json\.Unmarshal|toolnode/runtime/internal/rpc\.Parse\w*)\b.* < [^<]*toolnode/runtime/internal/front[./]`,
	"front: read the body", `io\.ReadAll < [^<]*toolnode/runtime/internal/front[./]|toolnode/runtime/internal/front/httpfront\.readBody\b`,
	"front: session lookup", `toolnode/runtime/internal/front/httpfront\.\(\*Handler\)\.session\b`,
	"front: encode the answer, set headers, write the body", `toolnode/runtime/internal/(front/httpfront\.(\(\*stream\)\.(finish|event)|writeMessage)|rpc\.\(\*Message\)\.(Encode|Append))\b`,
	"front: header checks and the rest of the handler", `toolnode/runtime/internal/front[./]`,
	"floor: its whole handler (decode, answer, encode, write)", `main\.floorHandler\b`,
	"least relay: its handler and its reader (read, rename, write to the bundle, match the answer, write it)", `main\.\(\*(httpRelay|pending)\)\.`,
	"net/http: flush the response (write(2) to the socket)", `net/http\.\(\*response\)\.finishRequest\b`,
	"net/http: read and parse the request line and headers", `net/http\.\(\*conn\)\.readRequest\b`,
	"net/http: the rest of the connection loop (deadlines, background read)", `net/http\.\(\*conn\)\.serve\b|net/http\.\(\*connReader\)\.backgroundRead\b`,
	"scheduler: park, wake and find goroutines, poll the network (hand-offs)", `runtime\.(mcall|mstart|schedule|findRunnable|park_m|goexit0)\b`,
)

// kinds sort the same stacks by what the leaf does, whatever the stage.
var kinds = classes(
	"garbage collector's own work", gcBackground,
	"allocation (mallocgc, with its GC assists)", `runtime\.mallocgc`,
	"system calls (read, write, epoll_wait, futex...)", `^(internal/runtime/syscall/linux\.Syscall6|runtime\.(futex|epollwait|usleep|nanosleep|write1|read|osyield))\b`,
	"scheduler, runtime locks and atomics", `^(runtime|internal/runtime)[./]`,
	"encoding/json", `^encoding/json\.`,
	"net/http, textproto, bufio", `^(net/http|net/textproto|vendor/golang\.org/x/net|bufio)[./]`,
	"maps, sync, contexts, timers", `^(sync|internal/sync|context|time)[./]`,
	"toolnode's own code", `^github\.com/toolnode/`,
	"strings, bytes, reflect, hashing", `^(aeshashbody|indexbytebody|memeqbody|bytes|strings|internal/stringslite|internal/bytealg|strconv|internal/strconv|reflect|unicode/utf8)\b`,
	"file and socket wrappers (internal/poll, os, net, syscall)", `^(internal/poll|os|net|syscall)[./]`,
)
