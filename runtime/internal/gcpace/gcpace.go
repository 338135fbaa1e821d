// Package gcpace paces the garbage collector of a long-running node: it lets the heap grow
// by at least a floor of headroom before the next collection, and by the runtime's usual
// share of the live heap when that is more.
//
// Go collects when the heap has grown by GOGC percent of what the last collection left
// live (100 by default), and at least every 4 MiB. A node relaying calls keeps little
// live (a few MiB) but makes about 2 KB of short-lived garbage per call, so at tens of
// thousands of calls a second it collected a dozen times a second and the collector was
// 5-9% of its CPU. With a floor, a small heap is collected as if GOGC were larger, and a
// large one exactly as before: the memory this costs is bounded by the floor.
package gcpace

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// DefaultFloor is the headroom a node keeps by default: 32 MiB, a small share of what a
// machine that runs one has, and enough that relaying calls collects a few times a second
// instead of a dozen.
const DefaultFloor = 32 << 20

// liveMetric is the heap the last collection left live.
const liveMetric = "/gc/heap/live:bytes"

// Pacer keeps a floor of headroom above the live heap by setting the collector's percent
// after each collection. Its zero value is not usable: see Start.
type Pacer struct {
	floor   uint64
	base    int // the percent without the floor: GOGC's, or 100
	mu      sync.Mutex
	stopped bool
	percent int // the percent last set
	sample  [1]metrics.Sample
}

// Start paces the collector with a floor of headroom (DefaultFloor when floor <= 0) until
// Stop. It returns nil, and paces nothing, when GOGC is set in the environment (the user's
// own choice stands) or when the runtime does not report the live heap.
func Start(floor int64) *Pacer {
	if os.Getenv("GOGC") != "" {
		return nil
	}
	if floor <= 0 {
		floor = DefaultFloor
	}
	p := &Pacer{floor: uint64(floor), base: 100, percent: 100}
	p.sample[0].Name = liveMetric
	metrics.Read(p.sample[:])
	if p.sample[0].Value.Kind() != metrics.KindUint64 {
		return nil
	}
	p.adjust()
	p.arm()
	return p
}

// arm asks to hear of the next collection: a cleanup of an object nothing refers to runs
// after the collection that finds it unreachable, and arms the next one.
func (p *Pacer) arm() {
	runtime.AddCleanup(new([16]byte), func(p *Pacer) {
		if p.adjust() {
			p.arm()
		}
	}, p)
}

// adjust sets the percent for the live heap the last collection left: the base percent,
// or more where that would grow the heap by less than the floor. It reports whether the
// pacer is still running.
func (p *Pacer) adjust() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return false
	}
	metrics.Read(p.sample[:])
	want := PercentFor(p.sample[0].Value.Uint64(), p.floor, p.base)
	// Small changes are not worth setting: each is a call into the runtime's pacer.
	if want != p.percent && (want > p.percent+p.percent/10 || want < p.percent-p.percent/10 || want == p.base) {
		debug.SetGCPercent(want)
		p.percent = want
	}
	return true
}

// heapMinimum is the runtime's least heap goal at GOGC=100 (its defaultHeapMinimum); it
// scales with the percent, so a large percent also raises the least goal.
const heapMinimum = 4 << 20

// PercentFor is the collector's percent for a live heap: base, or, where base percent of
// live is less than floor, the percent that makes the heap's goal live plus floor. That
// percent is capped where the runtime's least goal, which scales with it, would pass that
// goal (a heap under 4 MiB).
func PercentFor(live, floor uint64, base int) int {
	p := (live + floor) * 100 / heapMinimum
	if live > 0 {
		p = min(p, floor*100/live)
	}
	if p > uint64(base) {
		return int(min(p, 1<<30))
	}
	return base
}

// Percent is the collector's percent the pacer last set.
func (p *Pacer) Percent() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.percent
}

// Stop ends the pacing and gives the collector back its base percent. Stop on a nil
// Pacer does nothing.
func (p *Pacer) Stop() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopped = true
	debug.SetGCPercent(p.base)
	p.percent = p.base
}
