package main

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
)

// eraCPU measures the CPU time per call of each process under the echo load with
// profileInflight calls in flight: the echo-go bundle called directly in either era, and
// through the node's stdio and HTTP fronts and the least stdio relay, called by a client of
// either era. What the node adds per relayed call, what any relay adds, and what a
// stateless call costs against a session call, are read here without a profiler's own cost. The rows take turns for cpuTurns(cfg) rounds and each
// figure is the median of its rounds: the CPU of one call moves less with the machine's load
// than the rate does, but it moves, and the eras differ by a few per cent.
func eraCPU(cfg config, w *strings.Builder) error {
	folder, bin, err := benchFolder(cfg, "echo-go")
	if err != nil {
		return err
	}
	defer os.RemoveAll(folder)
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("least relay: %w", err)
	}
	relay := stdioRelayArgs("echo-go.echo", []string{bin})
	node := []string{"serve", "--bundles", folder, "--log-level", "warn"}
	type row struct {
		name string
		c    caller
		pid  int
		node bool
	}
	var rows []row
	defer func() {
		for _, r := range rows {
			r.c.close()
		}
	}()
	for _, p := range []struct {
		name  string
		start func() (*stdioClient, error)
		node  bool
	}{
		{"echo-go called directly, 2025-11-25 session", func() (*stdioClient, error) { return startStdio("echo", bin) }, false},
		{"echo-go called directly, 2026-07-28 stateless", func() (*stdioClient, error) { return startStdioStateless("echo", bin) }, false},
		{"node, stdio front, 2025-11-25 client", func() (*stdioClient, error) { return startStdio("echo-go.echo", cfg.node, node...) }, true},
		{"node, stdio front, 2026-07-28 client", func() (*stdioClient, error) { return startStdioStateless("echo-go.echo", cfg.node, node...) }, true},
		{"least relay, stdio, 2025-11-25 client", func() (*stdioClient, error) { return startStdio("echo-go.echo", self, relay...) }, true},
		{"least relay, stdio, 2026-07-28 client", func() (*stdioClient, error) { return startStdioStateless("echo-go.echo", self, relay...) }, true},
	} {
		c, err := p.start()
		if err != nil {
			return fmt.Errorf("%s: %w", p.name, err)
		}
		rows = append(rows, row{p.name, c, c.cmd.Process.Pid, p.node})
	}
	// One node serves both HTTP clients, in turns: its CPU during a row is that row's.
	session, pid, stop, err := startNodeEnv(cfg, folder, "echo-go.echo", nil)
	if err != nil {
		return err
	}
	defer stop()
	rows = append(rows, row{"node, HTTP front, 2025-11-25 client", session, pid, true},
		row{"node, HTTP front, 2026-07-28 client", startHTTPStateless(session.url, "echo-go.echo"), pid, true})

	costs := make([][]cpuCost, len(rows))
	turns := cpuTurns(cfg)
	for t := range turns {
		// Every other turn runs the rows in the reverse order, so that neither era's row
		// always runs right after the other's: what one leaves behind (a heap to collect,
		// caches to refill, a load that is rising) falls on both.
		for k := range rows {
			i := k
			if t%2 == 1 {
				i = len(rows) - 1 - k
			}
			r := rows[i]
			res, own, children, client, err := cpuPerCall(r.c, r.pid, cfg.duration)
			if err != nil {
				return fmt.Errorf("%s: %w", r.name, err)
			}
			k := cpuCost{perSec: res.perSec, bundle: micros(own), client: micros(client)}
			if r.node {
				k.node, k.bundle = micros(own), micros(children)
			}
			k.all = k.node + k.bundle + k.client
			costs[i] = append(costs[i], k)
		}
	}

	// The rows, by where they are in rows.
	const (
		direct, _, viaNode, viaNodeStateless, viaRelay, viaRelayStateless, viaHTTP, viaHTTPStateless = 0, 1, 2, 3, 4, 5, 6, 7
	)
	fmt.Fprintf(w, "## CPU per call, by era: direct and through the node\n\n")
	fmt.Fprintf(w, "echo-go with %d calls in flight; CPU per call is each process's user and system time (from /proc)\n"+
		"over the calls made. The rows take turns, %s each, and each figure is the median of %d turns. The node\n"+
		"speaks 2026-07-28 to the bundle whichever era its client speaks; the least stdio relay passes each line on\n"+
		"as the client wrote it.\n\n", profileInflight, cfg.duration, turns)
	fmt.Fprintf(w, "| path | calls/s | node or relay | bundle | client | all |\n|---|---|---|---|---|---|\n")
	med := make([]cpuCost, len(rows))
	for i, r := range rows {
		k := medianCost(costs[i])
		med[i] = k
		nodeCPU := ""
		if r.node {
			nodeCPU = fmt.Sprintf("%.1f µs", k.node)
		}
		fmt.Fprintf(w, "| %s | %.0f | %s | %.1f µs | %.1f µs | %.1f µs |\n", r.name, k.perSec, nodeCPU, k.bundle, k.client, k.all)
	}
	fmt.Fprintf(w, "\nA 2026-07-28 call costs the node %.1f µs against %.1f µs for a 2025-11-25 session call over stdio, and %.1f µs against %.1f µs over HTTP;\n"+
		"all three processes %.1f µs against %.1f µs over stdio, %.1f µs against %.1f µs over HTTP.\n\n",
		med[viaNodeStateless].node, med[viaNode].node, med[viaHTTPStateless].node, med[viaHTTP].node,
		med[viaNodeStateless].all, med[viaNode].all, med[viaHTTPStateless].all, med[viaHTTP].all)
	fmt.Fprintf(w, "Turn by turn (the two eras' rows run one after the other), a 2026-07-28 call costs the node %s over stdio\n"+
		"and %s over HTTP.\n\n", eraDifference(costs[viaNode], costs[viaNodeStateless]), eraDifference(costs[viaHTTP], costs[viaHTTPStateless]))
	fmt.Fprintf(w, "%s\n\n", stdioShares(med[direct], med[viaRelay], med[viaRelayStateless], med[viaNode]))
	return nil
}

// stdioShares says where the CPU of a call through the stdio front goes beyond a direct
// call's, for a 2025-11-25 client: what a third process that only copies lines adds, what
// the node does beyond that, and what a 2026-07-28 line costs the bundle. At a fixed number
// of calls in flight on a machine whose cores all three processes share, calls/s follow the
// inverse of the CPU of a call, so the ratios are what the node's calls/s can reach.
func stdioShares(direct, relay, relayStateless, node cpuCost) string {
	return fmt.Sprintf("With a 2025-11-25 client, all three processes spend %.1f µs per call through the stdio front against %.1f µs direct: %.2f× the calls "+
		"the cores can serve. Through the least stdio relay, which checks and changes nothing, they spend %.1f µs (%.2f×): the relay itself %.1f µs, "+
		"the client and the bundle %+.1f µs against direct. The node itself spends %+.1f µs against the relay, its bundle %+.1f µs against the relay's "+
		"(a bare 2026-07-28 line costs the bundle behind the relay %+.1f µs) and its client %+.1f µs.",
		node.all, direct.all, direct.all/node.all,
		relay.all, direct.all/relay.all, relay.node, relay.bundle+relay.client-direct.bundle-direct.client,
		node.node-relay.node, node.bundle-relay.bundle, relayStateless.bundle-relay.bundle, node.client-relay.client)
}

// eraDifference says what a stateless call costs the node against a session call, paired
// by turn: the median of the differences with its 95% interval, what that interval says,
// and in how many turns the stateless call was the cheaper. Pairs taken in the same turn
// share the machine's load of the moment, which the medians of the two rows each on its
// own do not.
func eraDifference(session, stateless []cpuCost) string {
	diffs := make([]float64, len(session))
	cheaper := 0
	for t := range session {
		diffs[t] = stateless[t].node - session[t].node
		if diffs[t] <= 0 {
			cheaper++
		}
	}
	slices.Sort(diffs)
	lo, hi := medianInterval(diffs)
	verdict := "no difference this machine can measure"
	switch {
	case lo > 0:
		verdict = "more than a session call"
	case hi < 0:
		verdict = "less than a session call"
	}
	return fmt.Sprintf("%+.1f µs at the median (95%% interval %+.1f to %+.1f µs: %s; no more than a session call in %d of %d turns)",
		diffs[len(diffs)/2], lo, hi, verdict, cheaper, len(diffs))
}

// medianInterval is the distribution-free interval that holds the median of what sorted
// was drawn from with at least 95% confidence: the order statistics k from either end,
// with k the largest for which fewer than k of n fair coin tosses land heads at most 2.5%
// of the time. With fewer than 6 values no such k exists, and it is the whole range.
func medianInterval(sorted []float64) (lo, hi float64) {
	n := len(sorted)
	if n == 0 {
		return 0, 0
	}
	k, below := 0, 0.0 // below: the chance of fewer than k+1 heads
	for p := math.Pow(0.5, float64(n)); ; {
		// p is the chance of exactly k heads.
		if below+p > 0.025 {
			break
		}
		below += p
		k++
		p *= float64(n-k+1) / float64(k)
	}
	if k == 0 {
		return sorted[0], sorted[n-1]
	}
	return sorted[k-1], sorted[n-k]
}

// cpuTurns is how many turns each row of eraCPU takes: five times the rounds of the other
// tables, since the differences it is read for (a few per cent between the eras, or none)
// are smaller than what one turn's figure moves on a shared machine.
func cpuTurns(cfg config) int { return 5 * cfg.rounds }

// cpuCost is what one row of eraCPU measured in one turn, in µs per call but for the rate.
type cpuCost struct{ perSec, node, bundle, client, all float64 }

// medianCost is the median of each figure over the turns: all is the median of the turns'
// totals, not the sum of the medians.
func medianCost(ks []cpuCost) cpuCost {
	median := func(f func(cpuCost) float64) float64 {
		v := make([]float64, len(ks))
		for i, k := range ks {
			v[i] = f(k)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	return cpuCost{
		perSec: median(func(k cpuCost) float64 { return k.perSec }),
		node:   median(func(k cpuCost) float64 { return k.node }),
		bundle: median(func(k cpuCost) float64 { return k.bundle }),
		client: median(func(k cpuCost) float64 { return k.client }),
		all:    median(func(k cpuCost) float64 { return k.all }),
	}
}
