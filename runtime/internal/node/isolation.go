package node

import (
	"context"
	"fmt"
	"sync"

	"github.com/toolnode/toolnode/runtime/internal/manifest"
)

// A bundle with "isolation": "client" gets a process of its own per client, so that what a
// server that does not tag its messages says can only be about its one client's calls.
// The bundle's supervised processes list its tools; calls go to the client's process,
// started on the client's first call and stopped when the client is gone. A client is its
// identity (an OAuth subject, an access file's client); an anonymous session is a client
// of its own; an anonymous caller without a session (a stateless request) gets a process
// for its one call, since nothing tells its requests from another's.

// maxIsolated bounds the processes one isolated bundle runs for its clients, and
// maxIsolatedPerClient those it runs for one client (by ClientBound): no client alone can
// take them all.
const (
	maxIsolated          = 64
	maxIsolatedPerClient = 8
)

// isolated holds the per-client processes of one bundle.
type isolated struct {
	mu    sync.Mutex
	procs map[string]*isolatedProc
}

type isolatedProc struct {
	ready chan struct{} // closed once inst or err is set
	inst  *instance
	err   error
	bound string // what it counts against (Caller.Bound)
}

// pickIsolated returns the process of the client of x in b for a call of context ctx,
// starting it when there is none.
func (n *Node) pickIsolated(ctx context.Context, b *bundle, x Exchange) (*instance, error) {
	c := x.Caller()
	key, ended, bound := c.Key, c.Ended, c.bound()
	if key == "" {
		// An anonymous caller without a session: a process for this call alone.
		key, ended = fmt.Sprintf("call:%p", ctx.Done()), ctx.Done()
		if ended == nil {
			ended = make(chan struct{}) // a call that cannot end keeps it until the bundle stops
		}
	}
	b.iso.mu.Lock()
	if b.iso.procs == nil {
		b.iso.procs = map[string]*isolatedProc{}
	}
	p := b.iso.procs[key]
	if p != nil {
		b.iso.mu.Unlock()
		<-p.ready
		if p.err == nil {
			select {
			case <-p.inst.client.Done(): // it exited: start another
			default:
				return p.inst, nil
			}
		}
		b.iso.mu.Lock()
		if b.iso.procs[key] == p {
			delete(b.iso.procs, key)
		}
		p = nil
	}
	if len(b.iso.procs) >= maxIsolated {
		b.iso.mu.Unlock()
		return nil, fmt.Errorf("bundle %q runs a process per client and has %d already, its limit", b.name, maxIsolated)
	}
	mine := 0
	for _, other := range b.iso.procs {
		if other.bound == bound {
			mine++
		}
	}
	if mine >= maxIsolatedPerClient {
		b.iso.mu.Unlock()
		return nil, fmt.Errorf("bundle %q runs a process per client, and %d for this client already, the limit for one client; end a session first", b.name, maxIsolatedPerClient)
	}
	p = &isolatedProc{ready: make(chan struct{}), bound: bound}
	b.iso.procs[key] = p
	b.iso.mu.Unlock()

	p.inst, _, p.err = n.startInstance(b, nil)
	close(p.ready)
	if p.err != nil {
		b.iso.mu.Lock()
		delete(b.iso.procs, key)
		b.iso.mu.Unlock()
		return nil, fmt.Errorf("start a process of bundle %q for its client: %w", b.name, p.err)
	}
	b.log.Info("started a process for one client", "pid", p.inst.client.Pid(), "client", key)
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		select {
		case <-ended:
		case <-b.stop:
		case <-p.inst.client.Done():
		}
		b.iso.mu.Lock()
		if b.iso.procs[key] == p {
			delete(b.iso.procs, key)
		}
		b.iso.mu.Unlock()
		p.inst.client.Close(context.Background())
	}()
	return p.inst, nil
}

func isolatedBundle(b *bundle) bool { return b.m.Isolation == manifest.IsolationClient }
