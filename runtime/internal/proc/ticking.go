//go:build linux || darwin

package proc

import (
	"sync"
	"time"
)

// ticking calls a function periodically until halted: how a family keeps looking for its
// members while its bundle runs.
type ticking struct {
	stop     chan struct{}
	done     chan struct{}
	haltOnce sync.Once
}

func newTicking() ticking {
	return ticking{stop: make(chan struct{}), done: make(chan struct{})}
}

// start calls tick every d, in a goroutine of its own, until halt.
func (t *ticking) start(d time.Duration, tick func()) {
	go func() {
		defer close(t.done)
		tk := time.NewTicker(d)
		defer tk.Stop()
		for {
			select {
			case <-t.stop:
				return
			case <-tk.C:
				tick()
			}
		}
	}()
}

// halt stops the ticks and waits for the last to end. Safe to call many times, once start
// has been called.
func (t *ticking) halt() {
	t.haltOnce.Do(func() {
		close(t.stop)
		<-t.done
	})
}
