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
// started on the client's first call and stopped when its session ends.

// Keyed is a Session that says which client it serves, for isolated bundles. Sessions that
// do not implement it share one process per bundle.
type Keyed interface {
	// ClientKey names the client: sessions of one client share a process; "" is anonymous
	// (all anonymous callers share one, and are never blamed for crashes).
	ClientKey() string
	// Ended is closed when the client is gone and its processes may stop; nil when they
	// live as long as the node.
	Ended() <-chan struct{}
}

// maxIsolated bounds the processes one isolated bundle runs for its clients.
const maxIsolated = 64

// isolated holds the per-client processes of one bundle.
type isolated struct {
	mu    sync.Mutex
	procs map[string]*isolatedProc
}

type isolatedProc struct {
	ready chan struct{} // closed once inst or err is set
	inst  *instance
	err   error
}

func clientKey(sess Session) (string, <-chan struct{}) {
	if k, ok := sess.(Keyed); ok {
		return k.ClientKey(), k.Ended()
	}
	return "", nil
}

// pickIsolated returns the process of sess's client in b, starting it when there is none.
func (n *Node) pickIsolated(b *bundle, sess Session) (*instance, error) {
	key, ended := clientKey(sess)
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
	p = &isolatedProc{ready: make(chan struct{})}
	b.iso.procs[key] = p
	b.iso.mu.Unlock()

	p.inst, _, p.err = n.startInstance(b)
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
