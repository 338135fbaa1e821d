// Package clock is the time a component reads and the timers it arms, as one value: the
// system's (Real), or in tests one moved by hand (Fake), so that a test of a TTL, a
// heartbeat or an idle timer passes that time at once instead of waiting it out.
package clock

import (
	"sort"
	"sync"
	"time"
)

// Clock tells the time and runs functions after a while. Implementations are safe for
// concurrent use.
type Clock interface {
	// Now is the current time.
	Now() time.Time
	// AfterFunc runs f once d has passed, as time.AfterFunc does, and returns the timer
	// that can stop it.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a function waiting to run.
type Timer interface {
	// Stop keeps the function from running; it reports whether that stopped it (false
	// when it has run or was stopped already).
	Stop() bool
}

// Real is the system's clock.
var Real Clock = system{}

type system struct{}

func (system) Now() time.Time                            { return time.Now() }
func (system) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// Or returns c, or Real when c is nil: for a config field whose default is the system's.
func Or(c Clock) Clock {
	if c == nil {
		return Real
	}
	return c
}

// Fake is a clock that moves only when told (Advance); its timers run when it passes
// their time. The zero value is not ready: use NewFake.
type Fake struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

// NewFake returns a fake clock showing start.
func NewFake(start time.Time) *Fake { return &Fake{now: start} }

// Now implements Clock.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// AfterFunc implements Clock: f runs during the Advance that reaches now+d (a d of 0 or
// less: during the next Advance).
func (f *Fake) AfterFunc(d time.Duration, fn func()) Timer {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := &fakeTimer{clock: f, at: f.now.Add(d), fn: fn}
	f.timers = append(f.timers, t)
	return t
}

// Advance moves the clock on by d and runs, on the caller's goroutine and in the order of
// their times, the functions of the timers it passes, each with the clock showing its
// time; a timer armed by one of them runs too when its time is within d.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	end := f.now.Add(d)
	f.mu.Unlock()
	for {
		f.mu.Lock()
		sort.SliceStable(f.timers, func(i, j int) bool { return f.timers[i].at.Before(f.timers[j].at) })
		if len(f.timers) == 0 || f.timers[0].at.After(end) {
			f.now = end
			f.mu.Unlock()
			return
		}
		t := f.timers[0]
		f.timers = f.timers[1:]
		if t.at.After(f.now) {
			f.now = t.at
		}
		f.mu.Unlock()
		t.fn()
	}
}

// Timers is how many timers wait to run: for a test that must know one was armed
// before it advances the clock.
func (f *Fake) Timers() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.timers)
}

type fakeTimer struct {
	clock *Fake
	at    time.Time
	fn    func()
}

// Stop implements Timer.
func (t *fakeTimer) Stop() bool {
	f := t.clock
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, w := range f.timers {
		if w == t {
			f.timers = append(f.timers[:i], f.timers[i+1:]...)
			return true
		}
	}
	return false
}

// Tick sends clk's time on the channel it returns each time d of it passes, dropping the
// ticks a slow reader misses, as a time.Ticker does (which it is for Real), until stop is
// called.
func Tick(clk Clock, d time.Duration) (ticks <-chan time.Time, stop func()) {
	if clk == Real {
		t := time.NewTicker(d)
		return t.C, func() { t.Stop() }
	}
	ch := make(chan time.Time, 1)
	var mu sync.Mutex
	var timer Timer
	stopped := false
	var arm func()
	arm = func() {
		mu.Lock()
		defer mu.Unlock()
		if stopped {
			return
		}
		timer = clk.AfterFunc(d, func() {
			select {
			case ch <- clk.Now():
			default:
			}
			arm()
		})
	}
	arm()
	return ch, func() {
		mu.Lock()
		defer mu.Unlock()
		stopped = true
		timer.Stop()
	}
}
