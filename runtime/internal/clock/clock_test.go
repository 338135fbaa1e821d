package clock

import (
	"testing"
	"time"
)

// A fake clock runs the timers it passes, in the order of their times and with the time
// showing theirs, including one armed by another; a stopped timer never runs.
func TestFakeClockRunsTheTimersItPasses(t *testing.T) {
	start := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	c := NewFake(start)
	var ran []string
	note := func(name string) func() {
		return func() { ran = append(ran, name+"@"+c.Now().Sub(start).String()) }
	}
	c.AfterFunc(3*time.Second, note("c"))
	c.AfterFunc(time.Second, func() {
		note("a")()
		c.AfterFunc(time.Second, note("a+1s"))
	})
	stopped := c.AfterFunc(2*time.Second, note("stopped"))
	if !stopped.Stop() || stopped.Stop() {
		t.Error("Stop: want true once, then false")
	}
	c.AfterFunc(10*time.Second, note("later"))
	c.Advance(5 * time.Second)
	want := []string{"a@1s", "a+1s@2s", "c@3s"}
	if len(ran) != len(want) {
		t.Fatalf("ran %v, want %v", ran, want)
	}
	for i := range want {
		if ran[i] != want[i] {
			t.Errorf("ran %v, want %v", ran, want)
			break
		}
	}
	if got := c.Now().Sub(start); got != 5*time.Second || c.Timers() != 1 {
		t.Errorf("after Advance(5s) the clock shows +%s with %d timers; want +5s and 1", got, c.Timers())
	}
	if Or(nil) != Real || Or(c) != c {
		t.Error("Or: want Real for nil, else the clock given")
	}
	if d := time.Since(Real.Now()); d < 0 || d > time.Minute {
		t.Errorf("Real.Now is %s off the system's time", d)
	}
}

// A tick of a fake clock comes each time its period passes; ticks not read are dropped,
// and none comes once stopped.
func TestFakeClockTicks(t *testing.T) {
	c := NewFake(time.Unix(0, 0))
	ticks, stop := Tick(c, time.Second)
	c.Advance(999 * time.Millisecond)
	select {
	case <-ticks:
		t.Fatal("a tick before its period")
	default:
	}
	c.Advance(5 * time.Second) // five periods; one tick is kept
	if got := <-ticks; !got.Equal(time.Unix(1, 0)) {
		t.Errorf("the first tick shows %s, want 1s", got)
	}
	select {
	case <-ticks:
		t.Error("ticks not read were kept")
	default:
	}
	stop()
	c.Advance(time.Minute)
	select {
	case <-ticks:
		t.Error("a tick after stop")
	default:
	}
	if _, stop := Tick(Real, time.Hour); stop != nil {
		stop()
	}
}
