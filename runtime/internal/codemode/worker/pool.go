package worker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/toolnode/toolnode/runtime/internal/codemode"
)

// The node's side: a Pool starts workers, hands each run to a worker of its caller (an
// idle one when it has one, else a new one), and keeps a few idle workers per caller for
// their next runs.

// Config configures a Pool. Zero fields take the defaults.
type Config struct {
	// Off runs every program in the node's own process, as codemode.Run does, with no
	// memory bound: for platforms without the worker's mechanisms, and to compare.
	Off bool
	// MaxMemory bounds each worker's memory, in bytes: a program that passes it ends with
	// an error naming it. Default DefaultMaxMemory.
	MaxMemory int64
	// MaxIdle bounds the idle workers kept for callers' next runs, all callers together.
	// Default DefaultMaxIdle; -1 keeps none.
	MaxIdle int
	// IdleTime is how long an idle worker is kept. Default DefaultIdleTime.
	IdleTime time.Duration
	// MaxLive bounds the workers running at once: a run past it waits for one to end.
	// Default DefaultMaxLive.
	MaxLive int
	// Command is the program and arguments that start a worker. Default: the node's own
	// binary, os.Executable(), as `run-worker`; a test binary started so becomes a worker
	// too (see init in main.go).
	Command []string
	// Logger receives the workers' stderr and the pool's own messages. Default: discard.
	Logger hclog.Logger
}

// Defaults of Config.
const (
	DefaultMaxMemory = 256 << 20
	DefaultMaxIdle   = 4
	DefaultIdleTime  = 30 * time.Second
	DefaultMaxLive   = 16
)

func (c Config) withDefaults() Config {
	if c.MaxMemory <= 0 {
		c.MaxMemory = DefaultMaxMemory
	}
	if c.MaxIdle == 0 {
		c.MaxIdle = DefaultMaxIdle
	}
	if c.MaxIdle < 0 {
		c.MaxIdle = 0
	}
	if c.IdleTime <= 0 {
		c.IdleTime = DefaultIdleTime
	}
	if c.MaxLive <= 0 {
		c.MaxLive = DefaultMaxLive
	}
	if c.Logger == nil {
		c.Logger = hclog.NewNullLogger()
	}
	return c
}

// Caller is whose run it is: workers serve the runs of one caller only.
type Caller struct {
	// Key names the caller (its identity, or its session for an anonymous one); "" is a
	// caller nothing tells apart from another, whose worker serves its one run.
	Key string
	// Ended is closed when the caller is gone: its idle workers stop. Nil when unknown.
	Ended <-chan struct{}
}

// Pool runs programs in workers. Its methods are safe for concurrent use.
type Pool struct {
	cfg   Config
	slots chan struct{} // one per live worker

	mu      sync.Mutex
	idle    []*process // oldest first
	started int        // workers started, ever
	closed  bool
}

// NewPool returns a pool configured by cfg.
func NewPool(cfg Config) *Pool {
	cfg = cfg.withDefaults()
	cfg.Off = cfg.Off || !supported
	return &Pool{cfg: cfg, slots: make(chan struct{}, cfg.MaxLive)}
}

// Config is the pool's configuration, defaults filled in; Off on a platform without
// workers.
func (p *Pool) Config() Config { return p.cfg }

// Enforced says how this machine bounds a worker: "memory 256 MiB (cgroup v1), network none
// (network namespace), ...", or that programs run in the node.
func (p *Pool) Enforced() string {
	if p.cfg.Off {
		return "off: programs run in the node's own process, without a memory bound"
	}
	return enforced(p.cfg)
}

// Stats are what a pool holds now, for toolnode.status.
type Stats struct {
	Live, Idle, Started int
}

// Stats reports what the pool holds now.
func (p *Pool) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return Stats{Live: len(p.slots), Idle: len(p.idle), Started: p.started}
}

// Run runs the program code for caller within bounds b, its inner calls made by host,
// names mapping the catalog's tools to the program's names, and returns its outcome.
// With Off set it runs here, as codemode.Run.
func (p *Pool) Run(ctx context.Context, caller Caller, host codemode.Host, names *codemode.Names, b codemode.Bounds, code string) codemode.Outcome {
	if p.cfg.Off {
		return codemode.Run(ctx, host, names, b, code)
	}
	w, err := p.take(ctx, caller)
	if err != nil {
		if ctx.Err() != nil {
			return codemode.Outcome{Error: &codemode.RunError{Kind: codemode.KindCancelled, Message: "the run was cancelled: " + context.Cause(ctx).Error()}}
		}
		return codemode.Outcome{Error: &codemode.RunError{Kind: codemode.KindProgramError, Message: err.Error()}}
	}
	out, reusable := w.run(ctx, host, names, b.WithDefaults(), code)
	if reusable {
		p.give(w, caller)
	} else {
		p.end(w)
	}
	return out
}

// take returns an idle worker of caller's, or a new one.
func (p *Pool) take(ctx context.Context, caller Caller) (*process, error) {
	if caller.Key != "" {
		p.mu.Lock()
		for i, w := range p.idle {
			if w.caller == caller.Key {
				p.idle = append(p.idle[:i], p.idle[i+1:]...)
				p.mu.Unlock()
				w.wake()
				if w.alive() {
					return w, nil
				}
				p.end(w)
				p.mu.Lock()
				break
			}
		}
		p.mu.Unlock()
	}
	select {
	case p.slots <- struct{}{}:
	default:
		// Every slot is taken: an idle worker of another caller gives its own up.
		p.mu.Lock()
		var out *process
		if len(p.idle) > 0 {
			out, p.idle = p.idle[0], p.idle[1:]
		}
		p.mu.Unlock()
		if out != nil {
			out.wake()
			p.end(out)
		}
		select {
		case p.slots <- struct{}{}:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		<-p.slots
		return nil, errors.New("the node is shutting down")
	}
	p.started++
	p.mu.Unlock()
	w, err := start(p.cfg)
	if err != nil {
		<-p.slots
		return nil, fmt.Errorf("the program's worker process could not start: %w (toolnode serve --run-worker=off runs programs in the node's own process, without their memory bound)", err)
	}
	w.caller = caller.Key
	return w, nil
}

// give keeps w, done with a run of caller, for caller's next run: until it has been idle
// for IdleTime, the caller is gone, or newer idle workers push it out.
func (p *Pool) give(w *process, caller Caller) {
	p.mu.Lock()
	if p.closed || caller.Key == "" || p.cfg.MaxIdle == 0 {
		p.mu.Unlock()
		p.end(w)
		return
	}
	p.idle = append(p.idle, w)
	var out *process
	if len(p.idle) > p.cfg.MaxIdle {
		out, p.idle = p.idle[0], p.idle[1:]
	}
	p.mu.Unlock()
	if out != nil {
		p.end(out)
	}
	w.sleep(p.cfg.IdleTime, caller.Ended, func() {
		if p.drop(w) {
			p.end(w)
		}
	})
}

// drop removes w from the idle workers and reports whether it was one.
func (p *Pool) drop(w *process) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, x := range p.idle {
		if x == w {
			p.idle = append(p.idle[:i], p.idle[i+1:]...)
			return true
		}
	}
	return false
}

// end stops w and frees its slot once it has exited, without holding up the caller.
func (p *Pool) end(w *process) {
	go func() {
		w.stop()
		<-p.slots
	}()
}

// Close stops the idle workers; runs going end with their callers.
func (p *Pool) Close() {
	p.mu.Lock()
	p.closed = true
	idle := p.idle
	p.idle = nil
	p.mu.Unlock()
	for _, w := range idle {
		w.wake()
		p.end(w)
	}
}
