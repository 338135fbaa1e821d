package node

import (
	"maps"
	"runtime"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/catalog"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// Providers: every source of the catalog's tools is one, and routing hands a call to the
// provider of the tool's entry once the node has decided it may be made (the tool exists,
// the caller may call it, its approval holds). A bundle is one (its processes, a remote
// server, a cluster link: bundleProvider relays to them); the node's own tools are another,
// served in process (ownProvider, own.go). Nothing above this seam asks which kind a tool's
// provider is: what differs between them (tasks, requests to clients, the lock file) is a
// method here.

// provider serves the tools of one source of the catalog. Its methods are safe for
// concurrent use and do not block.
type provider interface {
	// call serves c, a tools/call of the tool of entry e that the node has checked, and
	// gives c's done its Outcome, once; a failure after the call was sent is settled as c
	// says. It notes on c the bundle it reached (Bundle; "" for none).
	call(c *call, e catalog.Entry)
	// taskMode says whether a call of the tool of e may (mcp.TaskOptional), must
	// (mcp.TaskRequired) or must not (mcp.TaskForbidden) become a task.
	taskMode(e catalog.Entry) string
	// holdsTasks reports whether the provider holds the tasks of its calls itself (a
	// bundle of the 2026-07-28 revision offering the tasks extension): the node then
	// passes them through.
	holdsTasks() bool
	// asksClients reports whether a call may bring requests to the client while it runs
	// (elicitation, sampling, roots); see Node.AsksClients.
	asksClients() bool
	// locked reports whether its tools are held to the lock file and their definitions'
	// changes logged: a bundle's are, the node's own are the node's.
	locked() bool
}

// providerOf returns the provider of the catalog entries of source, as the catalog names
// it (catalog.Entry.Bundle).
func (n *Node) providerOf(source string) provider {
	if p, ok := (*n.providers.Load())[source]; ok {
		return p
	}
	// A bundle that came after the last rebuild: its entries are not in the catalog yet,
	// but a call may name it (a cluster's forward).
	return &bundleProvider{n: n, name: source}
}

// noteProviders makes the providers of the bundles of n.bundles, and the node's own, those
// providerOf finds. The caller holds n.mu.
func (n *Node) noteProviders() {
	old := *n.providers.Load()
	out := make(map[string]provider, len(n.bundles)+1)
	out[ownBundle] = n.own
	for name := range n.bundles {
		if p, ok := old[name]; ok {
			out[name] = p
			continue
		}
		out[name] = &bundleProvider{n: n, name: name}
	}
	n.providers.Store(&out)
}

// noteBundles makes n.bundles as it is now the bundles liveBundle finds. The caller holds
// n.mu and calls it after every change of n.bundles.
func (n *Node) noteBundles() {
	live := maps.Clone(n.bundles)
	n.live.Store(&live)
}

// liveBundle returns the bundle named name that takes calls, or nil, and stamps its last
// use with now, so that it cannot be put to sleep under the call (see putToSleep); and the
// least busy of its processes, nil when none runs. It reads the snapshot noteBundles keeps
// and takes only the bundle's lock, once for both: it is on every call's way.
func (n *Node) liveBundle(name string, now time.Time) (*bundle, *instance) {
	for {
		live := n.live.Load()
		if live == nil {
			return nil, nil
		}
		b := (*live)[name]
		if b == nil {
			return nil, nil
		}
		var best *instance
		b.mu.Lock()
		retired := b.retired
		if !retired {
			b.sleep.lastUse = now
			best = leastBusy(b)
		}
		b.mu.Unlock()
		if !retired {
			return b, best
		}
		// Put to sleep since the snapshot was read: the bundle in its place is in the
		// snapshot once putToSleep lets go of n.mu, a moment away.
		runtime.Gosched()
	}
}

// bundleProvider is a bundle as a provider: its calls relay to the least busy of its
// processes (see forwardAsync).
type bundleProvider struct {
	n    *Node
	name string
}

func (p *bundleProvider) call(c *call, e catalog.Entry) {
	c.notes.Bundle = p.name
	rename := ""
	if e.Tool != e.Name {
		rename = e.Tool // in the edit that readies the call for the bundle
	}
	p.n.forwardAsync(c, p.name, rename)
}

func (p *bundleProvider) taskMode(e catalog.Entry) string { return toolTaskSupport(e.JSON) }

// holdsTasks reads the bundles' snapshot and the bundle's own lock, as liveBundle does: it
// is asked on the way of every call that may become a task.
func (p *bundleProvider) holdsTasks() bool {
	live := p.n.live.Load()
	if live == nil {
		return false
	}
	b := (*live)[p.name]
	if b == nil || b.m.Link != nil {
		return false
	}
	b.mu.Lock()
	inst := firstLive(b)
	b.mu.Unlock()
	if inst == nil {
		return false
	}
	_, holds := inst.client.Init.Capabilities.Extensions[mcp.ExtensionTasks]
	return holds
}

func (p *bundleProvider) asksClients() bool {
	quiet := p.n.quiet.Load()
	return quiet == nil || !(*quiet)[p.name]
}

func (p *bundleProvider) locked() bool { return true }
