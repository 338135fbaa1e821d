package node

import (
	"sync"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/clock"
	"github.com/toolnode/toolnode/runtime/internal/manifest"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// States of bundles that run on demand.
const (
	// StateAsleep is a bundle listed from the surface it showed last, with no process: the
	// first call, read or get starts it.
	StateAsleep State = "asleep"
	// StateWaking is an asleep bundle started by a call, which waits for it.
	StateWaking State = "waking"
)

// sleepState is what the node keeps of a bundle to run it on demand; guarded by Node.mu,
// but lastUse by bundle.mu.
type sleepState struct {
	lastUse   time.Time // the last call routed to it; zero when none was
	startedAt time.Time // when its processes were launched, and again when one is ready
	offers    Offers    // its capabilities, from its last process or its cached surface
	filling   bool      // started only to learn its surface: it goes to sleep once known
	woken     bool      // an asleep bundle launched by wake
}

// listed reports whether b's tools are in the catalog: a bundle keeps them while it
// restarts, sleeps or wakes, so that calls wait for it rather than find them gone.
func listed(b *bundle) bool {
	switch b.state {
	case StateReady, StateRestarting, StateAsleep, StateWaking:
		return true
	}
	return false
}

// lazy reports whether m runs on demand. A bundle isolated per client starts a process
// for each client anyway, so it is never lazy; nor is one another node serves, whose
// surface that node keeps.
func (n *Node) lazy(m *manifest.Manifest) bool {
	return (n.cfg.Lazy || m.Lazy()) && m.Isolation != manifest.IsolationClient && m.Link == nil
}

// asleep returns a bundle for m that is listed from its cached surface without running,
// or nil when m is not lazy or has no cached surface matching its fingerprint fp (then it
// is started once to show it, and sleeps after). The caller holds n.mu.
func (n *Node) asleep(m *manifest.Manifest, fp string) *bundle {
	if !n.lazy(m) {
		return nil
	}
	sf, ok := n.loadSurface(m, fp)
	if !ok {
		return nil
	}
	b := newBundle(n, m, fp)
	n.setState(b, StateAsleep)
	b.lists = sf.lists()
	b.sleep.offers = sf.Offers
	return b
}

// launch runs b's processes; settled is called once each has started or failed. A bundle
// with an idle_stop is watched and put to sleep when idle.
func (n *Node) launch(b *bundle, settled func()) {
	n.mu.Lock()
	b.sleep.startedAt = n.clk.Now()
	// Launched other than by a call, a lazy bundle has no cached surface to be listed
	// from: it runs to show one, then sleeps.
	b.sleep.filling = n.lazy(b.m) && !b.sleep.woken
	n.mu.Unlock()
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		n.run(b, settled)
	}()
	if idle := b.m.IdleAfter(); idle > 0 {
		n.wg.Add(1)
		go func() {
			defer n.wg.Done()
			n.watchIdle(b, idle)
		}()
	}
}

// wake starts b when it is asleep, for a call that will wait for it; otherwise it does
// nothing.
func (n *Node) wake(b *bundle) {
	n.mu.Lock()
	if b.state != StateAsleep || b.sleep.woken || b.stopReason != "" || n.closed {
		n.mu.Unlock()
		return
	}
	b.sleep.woken = true
	n.setState(b, StateWaking)
	// Counted before n.mu is let go, so that Close, which marks the node closed under
	// n.mu, waits for this launch.
	n.wg.Add(1)
	n.mu.Unlock()
	b.log.Info("waking bundle for a call")
	go func() {
		defer n.wg.Done()
		n.launch(b, func() {})
	}()
}

// waitStopped waits until a bundle that was asked to stop has stopped; one still asleep
// never ran and never will.
func (n *Node) waitStopped(b *bundle) {
	n.mu.Lock()
	never := b.state == StateAsleep && !b.sleep.woken
	n.mu.Unlock()
	if !never {
		<-b.done
	}
}

// watchIdle puts b to sleep once it has gone idle for idle without a call in flight. It
// looks every idle/4 (10ms to 1s) on the node's clock, each look in the clock's timer (a
// fake clock's Advance makes them at once), until b is stopped or asleep; it returns once
// no look is under way.
func (n *Node) watchIdle(b *bundle, idle time.Duration) {
	every := max(min(idle/4, time.Second), 10*time.Millisecond)
	var (
		mu      sync.Mutex
		timer   clock.Timer
		stopped bool
		looking sync.WaitGroup
		look    func()
	)
	look = func() {
		mu.Lock()
		if stopped {
			mu.Unlock()
			return
		}
		looking.Add(1)
		mu.Unlock()
		defer looking.Done()
		if n.idleLook(b, idle) {
			return
		}
		mu.Lock()
		if !stopped {
			timer = n.clk.AfterFunc(every, look)
		}
		mu.Unlock()
	}
	mu.Lock()
	timer = n.clk.AfterFunc(every, look)
	mu.Unlock()
	<-b.stop // closed too when b is put to sleep
	mu.Lock()
	stopped = true
	timer.Stop()
	mu.Unlock()
	looking.Wait()
}

// idleLook is one look of watchIdle: a call in flight keeps b awake (its end starts the
// idle time); otherwise b is put to sleep if it has been idle long enough, which it
// reports.
func (n *Node) idleLook(b *bundle, idle time.Duration) bool {
	n.mu.Lock()
	if busy(b) {
		b.mu.Lock()
		b.sleep.lastUse = n.clk.Now()
		b.mu.Unlock()
	}
	n.mu.Unlock()
	return n.putToSleep(b, idle)
}

// busy reports whether a call is in flight on any process of b; the caller holds n.mu.
func busy(b *bundle) bool {
	for _, s := range b.slots {
		if s != nil && s.busy.Load() > 0 {
			return true
		}
	}
	return false
}

// putToSleep stops b and lists it asleep in its place, when it is ready, no call is in
// flight, and no call came within idle (for idle 0: none ever came, b ran only to show its
// surface). It reports whether b was put to sleep.
func (n *Node) putToSleep(b *bundle, idle time.Duration) bool {
	n.mu.Lock()
	// b's lock orders this decision with a call's stamp of lastUse (see liveBundle): either
	// the call stamps first and b stays awake, or b is retired first and the call goes to
	// the bundle in its place.
	b.mu.Lock()
	last := b.sleep.lastUse
	quiet := last.IsZero()
	if idle > 0 {
		if last.Before(b.sleep.startedAt) {
			last = b.sleep.startedAt
		}
		quiet = n.clk.Now().Sub(last) >= idle
	}
	// A call waiting in pick for a process keeps b awake too: one that woke b waits there
	// while b starts, and a start slower than idle must not put b to sleep under it.
	if n.closed || n.bundles[b.name] != b || b.state != StateReady || busy(b) || b.queued.Load() > 0 || !quiet {
		b.mu.Unlock()
		n.mu.Unlock()
		return false
	}
	b.retired = true
	b.mu.Unlock()
	nb := newBundle(n, b.m, b.fp)
	nb.state, nb.lists, nb.restarts, nb.stats = StateAsleep, b.lists, b.restarts, b.stats
	nb.sleep.offers = b.sleep.offers
	n.bundles[b.name] = nb
	n.noteBundles()
	n.noteQuiet()
	n.mu.Unlock()
	if idle > 0 {
		b.log.Info("bundle idle; stopping it until its next call", "idle_stop", idle)
	} else {
		b.log.Info("bundle surface known; stopping it until its first call")
	}
	n.requestStop(b, "asleep: stopped while idle")
	return true
}

// surfaceSeen records what a process of b showed when it started or re-listed: its
// capabilities, and for a lazy bundle the cached surface. A bundle started only to learn
// its surface goes to sleep.
func (n *Node) surfaceSeen(b *bundle, inst *instance, l lists) {
	o := offersOf(inst.client.Init.Capabilities)
	n.mu.Lock()
	b.sleep.offers = o
	b.mu.Lock()
	fill := b.sleep.filling && b.sleep.lastUse.IsZero()
	b.mu.Unlock()
	b.sleep.filling = false
	n.mu.Unlock()
	if !n.lazy(b.m) && b.m.IdleAfter() == 0 {
		return
	}
	if err := n.saveSurface(b.m, b.fp, l, o); err != nil {
		b.log.Warn("cannot cache the bundle's surface; it will start once more next time to show it", "error", err)
	}
	if fill {
		n.putToSleep(b, 0)
	}
}

// offersOf is what a bundle's capabilities offer.
func offersOf(caps mcp.ServerCapabilities) Offers {
	return Offers{
		Prompts:     caps.Prompts != nil,
		Resources:   caps.Resources != nil,
		Subscribe:   caps.Resources != nil && caps.Resources.Subscribe,
		Completions: caps.Completions != nil,
	}
}
