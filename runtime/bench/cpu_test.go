package main

import "testing"

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
