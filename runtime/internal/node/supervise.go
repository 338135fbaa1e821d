package node

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/toolnode/toolnode/runtime/internal/clock"
	"github.com/toolnode/toolnode/runtime/internal/manifest"
	"github.com/toolnode/toolnode/runtime/internal/sandbox"
	"github.com/toolnode/toolnode/runtime/internal/upstream"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// Supervision says how bundles are kept alive. Zero fields take the defaults.
//
// A bundle is never given up on: one that keeps failing is retried with a backoff that
// doubles up to MaxBackoff, so a fix (a file restored, a service back) is picked up within
// that time without a restart of the node or an edit of the manifest.
type Supervision struct {
	// Backoff is the wait before the first restart of a process that exited; it doubles
	// with each failure that follows. Default 200ms.
	Backoff time.Duration
	// MaxBackoff bounds the wait, and so how long a bundle in a crash loop waits at most
	// before its next try. Default 1m.
	MaxBackoff time.Duration
	// Stable is how long a process must run for its exit not to count as a failure in a
	// row (and for the backoff to start over). Default 30s.
	Stable time.Duration
	// CrashLoop is the number of failures in a row that make a crash loop: the bundle's
	// state says so, its tools are withdrawn and calls to it fail at once while no process
	// of it runs. Default 5.
	CrashLoop int
	// PingEvery is the interval of health pings; a process that does not answer one
	// within PingTimeout is restarted. Default 30s and 10s; negative disables pings.
	PingEvery, PingTimeout time.Duration
}

func (s Supervision) withDefaults() Supervision {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&s.Backoff, 200*time.Millisecond)
	def(&s.MaxBackoff, time.Minute)
	def(&s.Stable, 30*time.Second)
	def(&s.PingEvery, 30*time.Second)
	def(&s.PingTimeout, 10*time.Second)
	if s.CrashLoop == 0 {
		s.CrashLoop = 5
	}
	return s
}

// State is where a bundle is in its life.
type State string

// Bundle states.
const (
	StateStarting   State = "starting"
	StateReady      State = "ready"
	StateRestarting State = "restarting"
	// StateCrashLoop is a bundle that failed Supervision.CrashLoop times in a row and is
	// waiting for its next try.
	StateCrashLoop State = "crash-loop"
	StateStopped   State = "stopped"
)

// bundle is one manifest being run: a pool of identical processes ("slots"), each kept
// alive by a goroutine of its own.
type bundle struct {
	name string
	log  hclog.Logger
	m    *manifest.Manifest
	fp   string // what the manifest and its program looked like when started

	stopOnce sync.Once
	stop     chan struct{} // closed to stop every slot
	done     chan struct{} // closed when every slot has ended

	// mu is the bundle's own lock, so that a call need not take Node.mu: slots are written
	// holding both it and Node.mu, and read holding either; sleep.lastUse and retired are
	// guarded by it alone. It is taken after Node.mu, never before.
	mu      sync.Mutex
	retired bool // put to sleep: a bundle in its place takes its calls (see putToSleep)

	// Guarded by Node.mu.
	state      State
	err        error // the last failure, kept after a recovery as the last reason
	stopReason string
	restarts   int
	failures   int       // in a row
	retryAt    time.Time // when the next try is due, while none of its processes runs
	slots      []*instance
	lists      lists
	iso        isolated // the processes of each client, for "isolation": "client"
	blame      blame    // the clients whose calls crash it
	sleep      sleepState

	stats *stats // shared with the bundle that follows it after a sleep

	queued atomic.Int64 // calls waiting in pick for a process of the bundle
}

// instance is one process of a bundle.
type instance struct {
	client *upstream.Client
	// initialized is set once the client's handshake is done: a list_changed sent before
	// it is not acted on (the start lists everything after it), and c.Init is whole.
	initialized atomic.Bool
	busy        atomic.Int64
	mu          sync.Mutex         // guards flights, so that calls to other processes do not meet
	flights     map[uint64]*flight // calls in flight by bundle-side id, which their progress tokens name too
	// The sweep of the calls in flight past their deadline (see sweep.go): armed on the
	// node's clock while there are some, every sweepEvery.
	clk        clock.Clock
	epoch      time.Time // the node's
	sweeping   bool
	sweepEvery time.Duration
}

func newBundle(n *Node, m *manifest.Manifest, fp string) *bundle {
	n.cfg.Telemetry.BundleState(m.Name, string(StateStarting))
	b := &bundle{
		name:  m.Name,
		log:   n.log.Named(m.Name),
		m:     m,
		fp:    fp,
		stop:  make(chan struct{}),
		done:  make(chan struct{}),
		state: StateStarting,
		slots: make([]*instance, m.Pool()),
		stats: &stats{},
	}
	n.saySandbox(b)
	return b
}

// sandboxOf is the sandbox of the bundle m describes: its own, else the node's default
// (--sandbox); nil for none, and for a bundle that is no process the node starts.
func (n *Node) sandboxOf(m *manifest.Manifest) *sandbox.Policy {
	switch {
	case m.Remote() || m.Link != nil || m.InMemory != nil:
		return nil
	case m.Sandbox != nil:
		return m.Sandbox
	case !n.cfg.Sandbox.Zero():
		p := n.cfg.Sandbox
		return &p
	}
	return nil
}

// saySandbox logs the bundle's sandbox and what of it this machine enforces, with a
// warning naming each setting it does not.
func (n *Node) saySandbox(b *bundle) {
	p := n.sandboxOf(b.m)
	if p == nil || p.Zero() {
		return
	}
	e := sandbox.Probe()
	if missing := e.Unenforced(*p); len(missing) > 0 {
		verb := "the bundle starts without them"
		if p.Require {
			verb = "the sandbox requires them: the bundle will not start"
		}
		b.log.Warn(fmt.Sprintf("sandbox settings not enforced on this machine: %s; %s", strings.Join(missing, ", "), verb),
			"sandbox", e.Describe(*p))
		return
	}
	b.log.Info("sandbox", "sandbox", e.Describe(*p))
}

// setState moves b to state s, for toolnode.status and the toolnode_bundle_state metric.
// The caller holds n.mu, or b is not yet shared.
func (n *Node) setState(b *bundle, s State) {
	b.state = s
	n.cfg.Telemetry.BundleState(b.name, string(s))
}

// requestStop stops the bundle's slots; reason goes into the errors of calls in flight.
func (n *Node) requestStop(b *bundle, reason string) {
	n.mu.Lock()
	if b.stopReason == "" {
		b.stopReason = reason
	}
	n.mu.Unlock()
	b.stopOnce.Do(func() { close(b.stop) })
}

// run keeps every slot of b alive until b is stopped; settled is called once the first
// start of every slot has succeeded or failed.
func (n *Node) run(b *bundle, settled func()) {
	var wg sync.WaitGroup
	var pending sync.WaitGroup
	for slot := range b.slots {
		wg.Add(1)
		pending.Add(1)
		go func() {
			defer wg.Done()
			n.runSlot(b, slot, sync.OnceFunc(pending.Done))
		}()
	}
	go func() {
		pending.Wait()
		settled()
	}()
	wg.Wait()
	close(b.done)
}

func (n *Node) runSlot(b *bundle, slot int, settled func()) {
	defer settled()
	sup := n.sup
	backoff := sup.Backoff
	for {
		retry := false
		inst, l, err := n.startInstance(b, func(err error) {
			retry = n.recordFailure(b, fmt.Errorf("start: %w", err), backoff)
			settled()
		})
		if err != nil {
			if !retry {
				return
			}
			if !sleep(b.stop, backoff) {
				return
			}
			backoff = min(backoff*2, sup.MaxBackoff)
			continue
		}
		n.mu.Lock()
		b.mu.Lock()
		b.slots[slot] = inst
		b.mu.Unlock()
		n.noteQuiet()
		listed := b.state == StateReady || b.state == StateRestarting
		b.retryAt = time.Time{}
		// Idle time counts from here: a start slower than idle_stop is not idleness.
		b.sleep.startedAt = n.clk.Now()
		n.setState(b, StateReady)
		changed := !listsEqual(b.lists, l)
		if changed {
			b.lists = l
		}
		n.mu.Unlock()
		b.log.Info("bundle ready", "at", where(inst.client), "era", inst.client.Era().String(), "slot", slot,
			"tools", len(l.tools), "prompts", len(l.prompts), "resources", len(l.resources))
		if changed || !listed {
			n.rebuild()
		}
		n.surfaceSeen(b, inst, l)
		settled()

		started := time.Now()
		exited := n.watch(b, inst)
		n.mu.Lock()
		b.mu.Lock()
		b.slots[slot] = nil
		b.mu.Unlock()
		n.noteQuiet()
		n.mu.Unlock()
		if !exited {
			inst.client.Close(context.Background())
			return
		}
		inst.client.Close(context.Background()) // reaps it, and a wrapper's leftovers too
		status := inst.client.ExitStatus()
		if cause := inst.client.Cause(); cause != "" {
			b.log.Error(fmt.Sprintf("bundle %s: %s", b.name, cause), "restart_in", backoff)
		}
		if time.Since(started) >= sup.Stable {
			n.mu.Lock()
			b.failures = 0
			n.mu.Unlock()
			backoff = sup.Backoff
		}
		if !n.recordFailure(b, fmt.Errorf("exited (%s)%s", status, upstream.LastWords(inst.client.StderrTail())), backoff) {
			return
		}
		if b.m.Remote() {
			b.log.Warn("remote bundle disconnected; connecting again", "url", b.m.URL, "status", status, "slot", slot, "in", backoff)
		} else {
			b.log.Warn("bundle process exited; restarting", "status", status, "slot", slot, "in", backoff)
		}
		if !sleep(b.stop, backoff) {
			return
		}
		backoff = min(backoff*2, sup.MaxBackoff)
	}
}

// recordFailure counts a failure of b, whose next try is due after wait, and reports
// whether to try again: always, unless the bundle is being stopped. From CrashLoop
// failures in a row the bundle is in a crash loop: its tools are withdrawn until one of
// its processes runs again.
func (n *Node) recordFailure(b *bundle, err error, wait time.Duration) bool {
	n.mu.Lock()
	select {
	case <-b.stop:
		n.mu.Unlock()
		return false
	default:
	}
	b.failures++
	b.restarts++
	n.cfg.Telemetry.BundleRestarted(b.name)
	b.err = err
	idle := live(b) == 0
	if idle {
		b.retryAt = time.Now().Add(wait)
	}
	entered := false
	switch {
	case b.failures >= n.sup.CrashLoop && idle:
		entered = b.state != StateCrashLoop
		n.setState(b, StateCrashLoop)
	case idle:
		n.setState(b, StateRestarting)
	}
	failures := b.failures
	n.mu.Unlock()
	if !entered {
		b.log.Warn("bundle failed", "error", err, "failures_in_a_row", failures, "next_try_in", wait)
		return true
	}
	b.log.Error("bundle is in a crash loop; its tools are withdrawn until it runs again",
		"failures_in_a_row", failures, "last_error", err, "next_try_in", wait, "tries_at_least_every", n.sup.MaxBackoff)
	n.rebuild()
	return true
}

func live(b *bundle) int {
	k := 0
	for _, s := range b.slots {
		if s != nil {
			k++
		}
	}
	return k
}

// watch waits for the instance to end on its own (true), answering health pings, or for the
// bundle to be stopped (false). A process that misses a ping is killed, which counts as
// ending on its own.
func (n *Node) watch(b *bundle, inst *instance) bool {
	var tick <-chan time.Time
	if n.sup.PingEvery > 0 {
		t := time.NewTicker(n.sup.PingEvery)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-inst.client.Done():
			return true
		case <-b.stop:
			return false
		case <-tick:
			ctx, cancel := context.WithTimeout(context.Background(), n.sup.PingTimeout)
			err := inst.client.Ping(ctx)
			cancel()
			if err != nil {
				b.log.Error("bundle did not answer a ping; killing it (a remote one: disconnecting)", "bundle", where(inst.client), "error", err)
				kill, stop := context.WithCancel(context.Background())
				stop() // a hung process gets no grace
				inst.client.Close(kill)
				return true
			}
		}
	}
}

func sleep(stop <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-stop:
		return false
	}
}

// where names an instance in logs: its process id, or the URL of a remote bundle.
func where(c *upstream.Client) any {
	if u := c.URL(); u != "" {
		return u
	}
	return c.Pid()
}

// startInstance starts one process of b (or connects to a remote bundle), finds the era it
// speaks, runs the handshake and lists what it offers.
//
// A start that fails is told to failed (when not nil) as soon as it is known, before a
// process that did not answer is stopped, which takes up to twice its grace: the failure
// is reported when the start timeout says.
func (n *Node) startInstance(b *bundle, failed func(error)) (*instance, lists, error) {
	var c *upstream.Client
	fail := func(err error) (*instance, lists, error) {
		if failed != nil {
			failed(err)
		}
		if c != nil {
			c.Close(context.Background())
		}
		return nil, lists{}, err
	}
	m := b.m
	timeout := m.Timeouts.Start
	ctx, cancel := context.WithTimeoutCause(context.Background(), timeout, fmt.Errorf("no answer within the start timeout of %s", timeout))
	defer cancel()
	go func() {
		select {
		case <-b.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	inst := &instance{clk: n.clk, epoch: n.epoch, flights: map[uint64]*flight{}}
	cfg, err := upstream.ConfigFor(m, n.cfg.LookupEnv, b.log)
	if err != nil {
		return fail(err)
	}
	if cfg.Process.Path != "" {
		cfg.Process.Sandbox = n.sandboxOf(m)
	}
	if n.cfg.StateKey != nil && cfg.Process.Path != "" && !slices.ContainsFunc(cfg.Process.Env, func(v string) bool {
		return strings.HasPrefix(v, StateKeyVar+"=") // the manifest's own, set or inherited
	}) {
		cfg.Process.Env = append(cfg.Process.Env, StateKeyVar+"="+BundleStateKey(n.cfg.StateKey, m.Name))
	}
	cfg.Process.StderrLineMax = n.limits.StderrLine
	cfg.MaxLine, cfg.MaxQueue, cfg.Limits = n.limits.MaxLine, n.limits.MaxQueue, n.limits.Message
	cfg.Batch = n.cfg.Batch
	cfg.Handler = bundleHandler{n: n, b: b, inst: inst}
	cfg.ClientInfo = mcp.Implementation{Name: "toolnode", Version: n.cfg.Version}
	// Offered so that bundles may ask; the node relays each request to the client whose
	// call caused it, which answers or refuses. MCP Apps too: a bundle lists its tools'
	// views for the clients that show them (a 2026-07-28 bundle is told each caller's own
	// capabilities with its calls).
	cfg.Capabilities = json.RawMessage(`{"roots":{"listChanged":true},"sampling":{},"elicitation":{},` +
		`"extensions":{"` + mcp.ExtensionUI + `":` + string(mcp.UIClientCapability()) + `}}`)
	cfg.DiscoverTimeout = min(upstream.DefaultDiscoverTimeout, timeout/2)
	if c, err = upstream.Start(cfg); err != nil {
		return fail(err)
	}
	inst.client = c
	if err := c.Initialize(ctx); err != nil {
		return fail(err)
	}
	inst.initialized.Store(true)
	l, err := fetchLists(ctx, c)
	if err != nil {
		return fail(err)
	}
	return inst, l, nil
}

// pickNow returns the least busy process of b, or nil when none is running. It takes b's
// lock only: it is on every call's way.
func (n *Node) pickNow(b *bundle) *instance {
	b.mu.Lock()
	defer b.mu.Unlock()
	return leastBusy(b)
}

// leastBusy returns the least busy process of b, or nil when none is running; b.mu is held.
func leastBusy(b *bundle) *instance {
	var best *instance
	for _, s := range b.slots {
		if s != nil && (best == nil || s.busy.Load() < best.busy.Load()) {
			best = s
		}
	}
	return best
}

// pick returns the least busy process of b, waiting up to wait for one while the bundle
// (re)starts, so that a call made during a restart is served rather than refused.
func (n *Node) pick(b *bundle, wait time.Duration) (*instance, error) {
	deadline := time.Now().Add(wait)
	queued := false
	defer func() {
		if queued {
			n.cfg.Telemetry.QueueDepth(b.name, int(b.queued.Add(-1)))
		}
	}()
	for {
		best := n.pickNow(b)
		n.mu.Lock()
		state, err, reason := b.state, b.err, b.stopReason
		n.mu.Unlock()
		switch {
		case best != nil:
			return best, nil
		case reason != "":
			return nil, fmt.Errorf("bundle %q is %s", b.name, reason)
		case state == StateCrashLoop:
			return nil, fmt.Errorf("bundle %q is in a crash loop (last error: %v)", b.name, err)
		case time.Now().After(deadline):
			return nil, fmt.Errorf("bundle %q is %s (last error: %v)", b.name, state, err)
		}
		if !queued {
			// Waiting for a process of the bundle: the toolnode_bundle_queue_depth metric.
			queued = true
			n.cfg.Telemetry.QueueDepth(b.name, int(b.queued.Add(1)))
		}
		select {
		case <-b.stop:
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// stats counts a bundle's calls and keeps its recent latencies.
type stats struct {
	mu      sync.Mutex
	calls   uint64
	failed  uint64
	recent  [512]time.Duration
	next    int
	samples int
}

func (s *stats) record(d time.Duration, failed bool) {
	s.mu.Lock()
	s.calls++
	if failed {
		s.failed++
	}
	s.recent[s.next] = d
	s.next = (s.next + 1) % len(s.recent)
	s.samples = min(s.samples+1, len(s.recent))
	s.mu.Unlock()
}

func (s *stats) snapshot() (calls, failed uint64, p50, p99 time.Duration) {
	s.mu.Lock()
	lat := slices.Clone(s.recent[:s.samples])
	calls, failed = s.calls, s.failed
	s.mu.Unlock()
	if len(lat) == 0 {
		return calls, failed, 0, 0
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	return calls, failed, lat[len(lat)/2], lat[len(lat)*99/100]
}
