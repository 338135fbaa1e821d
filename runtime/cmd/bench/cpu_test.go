package main

import (
	"strings"
	"testing"
)

// The interval of the median is the pair of order statistics a sign test gives at 95%:
// checked against the binomial tables for a few sizes.
func TestMedianIntervalTakesTheBinomialOrderStatistics(t *testing.T) {
	for _, tt := range []struct{ n, lo, hi int }{
		{1, 1, 1}, {5, 1, 5}, {6, 1, 6}, {9, 2, 8}, {15, 4, 12}, {20, 6, 15},
	} {
		sorted := make([]float64, tt.n)
		for i := range sorted {
			sorted[i] = float64(i + 1)
		}
		lo, hi := medianInterval(sorted)
		if lo != float64(tt.lo) || hi != float64(tt.hi) {
			t.Errorf("n=%d: interval %v to %v, want %d to %d", tt.n, lo, hi, tt.lo, tt.hi)
		}
	}
	if lo, hi := medianInterval(nil); lo != 0 || hi != 0 {
		t.Errorf("no values: %v to %v", lo, hi)
	}
}

// The shares of a stdio call are read from the rows they name: a third process, the node's
// own work and the bundle's, each against the row it differs from.
func TestStdioShares(t *testing.T) {
	direct := cpuCost{bundle: 10, client: 10, all: 20}
	relay := cpuCost{node: 8, bundle: 13, client: 12, all: 33}
	relayStateless := cpuCost{node: 8, bundle: 14.5, client: 12, all: 34.5}
	node := cpuCost{node: 12, bundle: 16, client: 12, all: 40}
	got := stdioShares(direct, relay, relayStateless, node)
	for _, want := range []string{
		"40.0 µs per call through the stdio front against 20.0 µs direct: 0.50×",
		"they spend 33.0 µs (0.61×): the relay itself 8.0 µs, the client and the bundle +5.0 µs",
		"The node itself spends +4.0 µs against the relay, its bundle +3.0 µs",
		"costs the bundle behind the relay +1.5 µs) and its client +0.0 µs",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("stdioShares says %q; want it to say %q", got, want)
		}
	}
}
