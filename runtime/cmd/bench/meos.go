package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// meosFolder finds the built MEOS bundle and links it into a folder of its own, for a node
// serving only it; the caller removes the folder.
func meosFolder(cfg config) (bundle, folder string, err error) {
	bundle, err = filepath.Abs(filepath.Join(cfg.root, "bundles", "meos"))
	if err != nil {
		return "", "", err
	}
	if _, err := os.Stat(filepath.Join(bundle, "build", "meos-bundle")); err != nil {
		return "", "", fmt.Errorf("MEOS bundle (run make -C bundles/meos first): %w", err)
	}
	folder, err = linkBundle(bundle)
	return bundle, folder, err
}

// meosThroughput compares meos.length and meos.distance called directly on the MEOS bundle
// over stdio with the same calls through the node's stdio front, and an aggregate over a
// fleet with the same through pymeos. The inputs of the first are the 3-4-5 segments of the
// bundle's tests/cases.json, as in its own `make bench`.
func meosThroughput(cfg config, w *strings.Builder) error {
	bundle, dir, err := meosFolder(cfg)
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(bundle, "build", "meos-bundle")
	b, err := os.ReadFile(filepath.Join(bundle, "tests", "cases.json"))
	if err != nil {
		return err
	}
	var cases struct{ Fixtures map[string]string }
	if err := json.Unmarshal(b, &cases); err != nil {
		return fmt.Errorf("bundles/meos/tests/cases.json: %w", err)
	}
	p, r := cases.Fixtures["P"], cases.Fixtures["R"]
	if p == "" || r == "" {
		return fmt.Errorf("bundles/meos/tests/cases.json lacks the fixtures P and R")
	}

	fmt.Fprintf(w, "## MEOS analytics (`meos.length`, `meos.distance`, an aggregate), direct and through the node\n\n")
	fmt.Fprintf(w, "| tool | path | in flight | calls/s | vs direct | p50 | p99 |\n|---|---|---|---|---|---|---|\n")
	var notes []string
	for _, call := range []struct {
		tool string
		args map[string]string
	}{
		{"length", map[string]string{"point": p}},
		{"distance", map[string]string{"point": p, "other": r}},
	} {
		note, err := meosRows(cfg, w, bin, dir, call.tool, call.args)
		if err != nil {
			return err
		}
		notes = append(notes, note)
	}
	catalog, err := meosCatalog(cfg, w, dir)
	if err != nil {
		return err
	}
	notes = append(notes, catalog)
	generated, err := meosGenerated(cfg, w, dir, p)
	if err != nil {
		return err
	}
	notes = append(notes, generated)
	aggregate, err := meosAggregate(cfg, w, bin, dir)
	if err != nil {
		return err
	}
	notes = append(notes, aggregate)
	notes = append(notes, "The bundle runs one call at a time (MEOS is not thread-safe), so with eight in flight\n"+
		"calls mostly queue: the gain over one in flight is the pipe never sitting idle between calls.")
	fmt.Fprintf(w, "\n%s\n\n", strings.Join(notes, "\n"))
	return nil
}

// meosRows writes the rows of one tool, called on the bundle binary and through a node
// serving dir, and returns a note on what the node adds.
func meosRows(cfg config, w *strings.Builder, bin, dir, tool string, arguments map[string]string) (string, error) {
	args, err := json.Marshal(arguments)
	if err != nil {
		return "", err
	}
	direct, err := startStdio(tool, bin)
	if err != nil {
		return "", fmt.Errorf("MEOS bundle: %w", err)
	}
	defer direct.close()
	viaNode, err := startStdio("meos."+tool, cfg.node, "serve", "--bundles", dir, "--log-level", "warn")
	if err != nil {
		return "", err
	}
	defer viaNode.close()
	paths := []struct {
		name string
		c    caller
	}{{"direct stdio", direct}, {"node, stdio front", viaNode}}
	var note string
	for _, inflight := range []int{1, 8} {
		var base result
		for i, path := range paths {
			res, err := measure(path.c, string(args), inflight, cfg)
			if err != nil {
				return "", fmt.Errorf("meos.%s %s: %w", tool, path.name, err)
			}
			if i == 0 {
				base = res
			}
			fmt.Fprintf(w, "| %s | %s | %d | %.0f | %.2f× | %s | %s |\n", tool, path.name, inflight, res.perSec, res.perSec/base.perSec, us(res.p50), us(res.p99))
			if i == 1 && inflight == 1 {
				note = fmt.Sprintf("%s: the stdio front adds %s at the median and %s at p99, one call in flight.",
					tool, us(res.p50-base.p50), us(res.p99-base.p99))
			}
		}
		fmt.Fprintf(os.Stderr, "bench: meos.%s, %d in flight done\n", tool, inflight)
	}
	return note, nil
}

// meosCatalog lists the MEOS bundle's whole catalog (the curated tools and the generated
// ones) through the node's stdio front, every page, and reports the bytes and the median
// time of a full listing.
func meosCatalog(cfg config, w *strings.Builder, dir string) (string, error) {
	c, err := startLines(cfg.node, "serve", "--bundles", dir, "--log-level", "warn", "--view", "full")
	if err != nil {
		return "", err
	}
	defer c.close()
	// The node lists a bundle's tools once the bundle has started: wait for the catalog
	// to stop growing.
	var tools int
	for deadline := time.Now().Add(60 * time.Second); ; {
		pages, err := listPages(c)
		if err != nil {
			return "", err
		}
		names, err := toolNames(pages)
		if err != nil {
			return "", err
		}
		if len(names) > 19 && len(names) == tools {
			break
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("the MEOS catalog did not settle within 60 s (%d tools)", len(names))
		}
		tools = len(names)
		time.Sleep(200 * time.Millisecond)
	}
	const rounds = 20
	var times []time.Duration
	var bytes, pageCount int
	for i := 0; i < rounds; i++ {
		start := time.Now()
		pages, err := listPages(c)
		if err != nil {
			return "", err
		}
		times = append(times, time.Since(start))
		bytes, pageCount = 0, len(pages)
		for _, p := range pages {
			bytes += len(p)
		}
	}
	fmt.Fprintf(w, "| catalog: tools/list, every page | node, stdio front | 1 | %d tools, %d pages | %d bytes | %s | median of %d |\n",
		tools, pageCount, bytes, ms(median(times)), rounds)
	return fmt.Sprintf("catalog: listing all %d MEOS tools through the node takes %s and %.1f MB.",
		tools, ms(median(times)), float64(bytes)/1e6), nil
}

// meosGenerated compares a generated accessor, meos.tpoint_length, with the hand-written
// meos.length doing the same work, both through the node in the same run: the difference is
// what the generated decoding and encoding cost.
func meosGenerated(cfg config, w *strings.Builder, dir, point string) (string, error) {
	var res [2]result
	for i, call := range []struct{ tool, arg string }{{"length", "point"}, {"tpoint_length", "temp"}} {
		args, err := json.Marshal(map[string]string{call.arg: point})
		if err != nil {
			return "", err
		}
		c, err := startStdio("meos."+call.tool, cfg.node, "serve", "--bundles", dir, "--log-level", "warn")
		if err != nil {
			return "", err
		}
		res[i], err = measure(c, string(args), 1, cfg)
		c.close()
		if err != nil {
			return "", fmt.Errorf("meos.%s: %w", call.tool, err)
		}
		fmt.Fprintf(w, "| %s (%s) | node, stdio front | 1 | %.0f | %.2f× | %s | %s |\n",
			call.tool, []string{"hand-written", "generated"}[i], res[i].perSec, res[i].perSec/res[0].perSec, us(res[i].p50), us(res[i].p99))
	}
	return fmt.Sprintf("generated: meos.tpoint_length costs %s more than the hand-written meos.length at the median.",
		us(res[1].p50-res[0].p50)), nil
}

// fleetSize is how many trajectories meosAggregate counts in one call.
const fleetSize = 10_000

// fleet is fleetSize trajectories: vehicle k leaves k % 60 minutes after 08:00 and drives
// north for 30 minutes, as in the bundle's tests/test_aggregates.py.
func fleet() []string {
	start := time.Date(2025, 1, 1, 8, 0, 0, 0, time.UTC)
	const layout = "2006-01-02 15:04:05+00"
	out := make([]string, fleetSize)
	for k := range out {
		leave := start.Add(time.Duration(k%60) * time.Minute)
		out[k] = fmt.Sprintf("[POINT(%d 0)@%s, POINT(%d 30)@%s]", k, leave.Format(layout), k,
			leave.Add(30*time.Minute).Format(layout))
	}
	return out
}

// meosAggregate times the temporal count of a fleet of trajectories in one call of
// meos.temporal_tcount_agg, on the bundle directly and through the node, against the same
// count through pymeos (tests/bench_pymeos.py in the bundle's venv), taking turns one call
// at a time; the answers must be the same text.
func meosAggregate(cfg config, w *strings.Builder, bin, dir string) (string, error) {
	trips := fleet()
	args, err := json.Marshal(map[string][]string{"values": trips})
	if err != nil {
		return "", err
	}
	file := filepath.Join(dir, "fleet.json")
	if err := os.WriteFile(file, args[len(`{"values":`):len(args)-1], 0o644); err != nil {
		return "", err
	}
	bundle := filepath.Dir(filepath.Dir(bin))
	py, err := startPymeos(filepath.Join(bundle, "build", "venv", "bin", "python"),
		filepath.Join(bundle, "tests", "bench_pymeos.py"), file)
	if err != nil {
		return "", fmt.Errorf("pymeos (run make -C bundles/meos first): %w", err)
	}
	defer py.close()
	direct, err := startStdio("temporal_tcount_agg", bin)
	if err != nil {
		return "", err
	}
	defer direct.close()
	viaNode, err := startStdio("meos.temporal_tcount_agg", cfg.node, "serve", "--bundles", dir, "--log-level", "warn")
	if err != nil {
		return "", err
	}
	defer viaNode.close()

	tool := func(c *stdioClient) func() (string, error) {
		return func() (string, error) {
			line, err := c.roundTrip(`"tools/call","params":{"name":"` + c.tool + `","arguments":` + string(args) + `}`)
			if err != nil {
				return "", err
			}
			var answer struct {
				Result struct {
					StructuredContent struct{ Result string }
				}
			}
			err = json.Unmarshal(line, &answer)
			return answer.Result.StructuredContent.Result, err
		}
	}
	paths := []struct {
		name string
		call func() (string, error)
	}{{"direct stdio", tool(direct)}, {"node, stdio front", tool(viaNode)}, {"pymeos, in Python", py.run}}
	times := make([][]time.Duration, len(paths))
	var want string
	for round := 0; round <= cfg.rounds; round++ { // round 0 warms every path up
		for i, path := range paths {
			start := time.Now()
			got, err := path.call()
			took := time.Since(start)
			if err != nil {
				return "", fmt.Errorf("temporal count of %d trajectories, %s: %w", fleetSize, path.name, err)
			}
			if want == "" {
				want = got
			} else if got != want {
				return "", fmt.Errorf("temporal count of %d trajectories: %s and %s answer differently (%.60q, %.60q)",
					fleetSize, path.name, paths[0].name, got, want)
			}
			if round > 0 {
				times[i] = append(times[i], took)
			}
		}
	}
	fmt.Fprintf(os.Stderr, "bench: meos.temporal_tcount_agg of %d trajectories done\n", fleetSize)
	base := median(times[0])
	for i, path := range paths {
		m := median(times[i])
		fmt.Fprintf(w, "| temporal_tcount_agg, %d trajectories in one call | %s | 1 | %.2f | %.2f× | %s | slowest of %d: %s |\n",
			fleetSize, path.name, 1/m.Seconds(), base.Seconds()/m.Seconds(), ms(m), len(times[i]), ms(slices.Max(times[i])))
	}
	return fmt.Sprintf("aggregate: the temporal count of %d trajectories takes %s in one call through the node and "+
		"%s through pymeos (MEOS's same transition and final functions, reading the same text), the same answer.",
		fleetSize, ms(median(times[1])), ms(median(times[2]))), nil
}

// pymeosRunner drives tests/bench_pymeos.py: one run per line written, one JSON answer per
// line read.
type pymeosRunner struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func startPymeos(python, script, fleet string) (*pymeosRunner, error) {
	cmd := exec.Command(python, script, fleet)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &pymeosRunner{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}, nil
}

// run counts the fleet once in Python and returns the count as MEOS text; the time is the
// caller's, around the whole exchange, as for the tool calls.
func (p *pymeosRunner) run() (string, error) {
	if _, err := io.WriteString(p.in, "run\n"); err != nil {
		return "", err
	}
	line, err := p.out.ReadBytes('\n')
	if err != nil {
		return "", fmt.Errorf("bench_pymeos.py: %w", err)
	}
	var answer struct{ Result string }
	if err := json.Unmarshal(line, &answer); err != nil {
		return "", fmt.Errorf("bench_pymeos.py answered %.80q: %w", line, err)
	}
	return answer.Result, nil
}

func (p *pymeosRunner) close() { stopChild(p.cmd, p.in) }
