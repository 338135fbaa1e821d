package gcpace

import (
	"os"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"
)

func TestPercentFor(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		name       string
		live       uint64
		floor      uint64
		base, want int
	}{
		{"no collection yet: the least goal is the floor", 0, 32 * mib, 100, 800},
		{"a small heap: the least goal is live plus floor", 1 * mib, 32 * mib, 100, 825},
		{"a heap of a few MiB: floor over live", 8 * mib, 32 * mib, 100, 400},
		{"a heap as large as the floor: the base", 32 * mib, 32 * mib, 100, 100},
		{"a large heap: the base", 1 << 30, 32 * mib, 100, 100},
		{"a larger base stands", 8 * mib, 32 * mib, 500, 500},
		{"no floor: the base", 8 * mib, 0, 100, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := PercentFor(tc.live, tc.floor, tc.base)
			if got != tc.want {
				t.Fatalf("PercentFor(%d, %d, %d) = %d, want %d", tc.live, tc.floor, tc.base, got, tc.want)
			}
			goal := max(tc.live*uint64(100+got)/100, heapMinimum*uint64(got)/100)
			if got > tc.base && goal > tc.live+tc.floor+mib {
				t.Errorf("the heap's goal %d passes live plus floor %d", goal, tc.live+tc.floor)
			}
		})
	}
}

// gogc is the collector's percent as the runtime reports it.
func gogc(t *testing.T) int {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		t.Fatal("the runtime does not report /gc/gogc:percent")
	}
	return int(s[0].Value.Uint64())
}

// TestPacerFollowsTheLiveHeap runs the pacer in this process: its percent rises for a
// small live heap, falls back to the base when the live heap passes the floor, and Stop
// gives the base back.
func TestPacerFollowsTheLiveHeap(t *testing.T) {
	if os.Getenv("GOGC") != "" {
		t.Skip("GOGC is set in the environment: the pacer leaves the collector alone then")
	}
	const floor = 16 << 20
	p := Start(floor)
	if p == nil {
		t.Fatal("Start returned nil with no GOGC set")
	}
	defer p.Stop()
	// until collects until the runtime's percent satisfies ok, or fails after 10 s.
	until := func(what string, ok func(int) bool) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); ; {
			runtime.GC()
			time.Sleep(10 * time.Millisecond) // the cleanup runs on a goroutine of its own
			if got := gogc(t); ok(got) {
				if got != p.Percent() {
					t.Fatalf("the runtime's percent %d is not the pacer's %d", got, p.Percent())
				}
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the percent stays %d", what, gogc(t))
			}
		}
	}
	until("a small live heap", func(pc int) bool { return pc > 100 })

	held := make([][]byte, 0, 64)
	for range 48 { // 48 MiB live: three floors
		held = append(held, make([]byte, 1<<20))
	}
	until("a live heap past the floor", func(pc int) bool { return pc == 100 })
	runtime.KeepAlive(held)
	held = nil

	until("the heap small again", func(pc int) bool { return pc > 100 })
	p.Stop()
	if got := gogc(t); got != 100 {
		t.Fatalf("after Stop the percent is %d, want 100", got)
	}
}

func TestGOGCInTheEnvironmentStands(t *testing.T) {
	t.Setenv("GOGC", "150")
	if p := Start(0); p != nil {
		p.Stop()
		t.Fatal("Start paced the collector although GOGC is set")
	}
}
