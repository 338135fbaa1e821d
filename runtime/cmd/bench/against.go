package main

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

var againstFlag = flag.String("against", "", "another toolnode `BINARY` (say, one built before a change) that the against section measures beside bin/toolnode, in turns")

// againstRow is one process the against section measures: a node of either build, or a
// least relay, behind a 2025-11-25 client.
type againstRow struct {
	name string
	c    caller
	pid  int
	stop func()
}

// againstSection measures the node's CPU per call and calls/s, built from this tree and as
// the -against binary, beside the least relays, over stdio and HTTP with a 2025-11-25
// client and profileInflight calls in flight. The rows take turns, so that on a shared
// machine both builds meet the same load; each turn's ratio of this build to the other is
// read in pairs. Without -against the section writes nothing.
func againstSection(cfg config, w *strings.Builder) error {
	if *againstFlag == "" {
		return nil
	}
	folder, bin, err := benchFolder(cfg, "echo-go")
	if err != nil {
		return err
	}
	defer os.RemoveAll(folder)
	rows, err := startAgainstRows(cfg, folder, bin)
	defer func() {
		for _, r := range rows {
			r.stop()
		}
	}()
	if err != nil {
		return err
	}
	costs := make([][]cpuCost, len(rows))
	reads, writes := make([][]float64, len(rows)), make([][]float64, len(rows))
	for t := range cpuTurns(cfg) {
		for k := range rows {
			i := k
			if t%2 == 1 {
				i = len(rows) - 1 - k
			}
			r0, w0 := syscallsOf(rows[i].pid)
			res, own, children, client, err := cpuPerCall(rows[i].c, rows[i].pid, cfg.duration)
			if err != nil {
				return fmt.Errorf("%s: %w", rows[i].name, err)
			}
			r1, w1 := syscallsOf(rows[i].pid)
			calls := warmCalls + res.perSec*cfg.duration.Seconds()
			costs[i] = append(costs[i], cpuCost{perSec: res.perSec, node: micros(own), bundle: micros(children), client: micros(client)})
			reads[i] = append(reads[i], float64(r1-r0)/calls)
			writes[i] = append(writes[i], float64(w1-w0)/calls)
		}
	}
	writeAgainst(w, rows, costs, reads, writes)
	return nil
}

// syscallsOf returns how many read and write system calls process pid has made (from
// /proc/pid/io); zeros where that cannot be read.
func syscallsOf(pid int) (reads, writes int64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(line, ": ")
		n, _ := strconv.ParseInt(v, 10, 64)
		switch k {
		case "syscr":
			reads = n
		case "syscw":
			writes = n
		}
	}
	return reads, writes
}

// medianOf is the median of v, which it sorts.
func medianOf(v []float64) float64 {
	slices.Sort(v)
	return v[len(v)/2]
}

// startAgainstRows starts the rows of againstSection: for stdio and then HTTP, the other
// build's node, this build's and the least relay. On an error it returns the rows started.
func startAgainstRows(cfg config, folder, bin string) ([]againstRow, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("least relay: %w", err)
	}
	other := cfg
	other.node = *againstFlag
	serve := []string{"serve", "--bundles", folder, "--log-level", "warn"}
	var rows []againstRow
	for _, p := range []struct{ name, program string }{{"node, stdio, " + *againstFlag, other.node}, {"node, stdio, bin/toolnode", cfg.node}} {
		c, err := startStdio("echo-go.echo", p.program, serve...)
		if err != nil {
			return rows, fmt.Errorf("%s: %w", p.name, err)
		}
		rows = append(rows, againstRow{p.name, c, c.cmd.Process.Pid, c.close})
	}
	c, err := startStdio("echo-go.echo", self, stdioRelayArgs("echo-go.echo", []string{bin})...)
	if err != nil {
		return rows, fmt.Errorf("least stdio relay: %w", err)
	}
	rows = append(rows, againstRow{"least stdio relay", c, c.cmd.Process.Pid, c.close})
	for _, p := range []struct {
		name string
		cfg  config
	}{{"node, HTTP, " + *againstFlag, other}, {"node, HTTP, bin/toolnode", cfg}} {
		c, pid, stop, err := startNodeEnv(p.cfg, folder, "echo-go.echo", nil)
		if err != nil {
			return rows, fmt.Errorf("%s: %w", p.name, err)
		}
		rows = append(rows, againstRow{p.name, c, pid, func() { c.close(); stop() }})
	}
	relay, err := startHTTPRelay("echo-go.echo", []string{bin})
	if err != nil {
		return rows, err
	}
	return append(rows, againstRow{"least HTTP relay", relay.c, relay.pid, relay.stop}), nil
}

// writeAgainst writes the against section: the medians of each row, then this build
// against the other, turn by turn, over stdio (rows 0-2) and HTTP (rows 3-5).
func writeAgainst(w *strings.Builder, rows []againstRow, costs [][]cpuCost, reads, writes [][]float64) {
	fmt.Fprintf(w, "## This build against %s\n\n", *againstFlag)
	fmt.Fprintf(w, "echo-go, a 2025-11-25 client, %d calls in flight; CPU per call is each process's user and system time\n"+
		"(from /proc) over the calls made. The rows take turns, %d turns each; figures are medians.\n\n", profileInflight, len(costs[0]))
	fmt.Fprintf(w, "| process | calls/s | CPU per call | against the least relay | its bundle's | the client's | its reads, writes per call |\n|---|---|---|---|---|---|---|\n")
	for i, r := range rows {
		k, relay := medianCost(costs[i]), medianCost(costs[i/3*3+2])
		fmt.Fprintf(w, "| %s | %.0f | %.1f µs | %.2f× | %.1f µs | %.1f µs | %.2f, %.2f |\n", r.name, k.perSec, k.node, k.node/relay.node, k.bundle, k.client,
			medianOf(reads[i]), medianOf(writes[i]))
	}
	fmt.Fprintf(w, "\n| this build over the other, turn by turn | CPU per call | calls/s |\n|---|---|---|\n")
	for _, front := range []struct {
		name string
		at   int
	}{{"stdio", 0}, {"HTTP", 3}} {
		ratio := func(f func(cpuCost) float64) string {
			base, this := costs[front.at], costs[front.at+1]
			v := make([]float64, len(base))
			for t := range base {
				v[t] = f(this[t]) / f(base[t])
			}
			slices.Sort(v)
			lo, hi := medianInterval(v)
			return fmt.Sprintf("%.3f× (95%% interval %.3f to %.3f)", v[len(v)/2], lo, hi)
		}
		fmt.Fprintf(w, "| %s | %s | %s |\n", front.name, ratio(func(k cpuCost) float64 { return k.node }),
			ratio(func(k cpuCost) float64 { return k.perSec }))
	}
	fmt.Fprintln(w)
}
