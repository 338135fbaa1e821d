package node

import (
	"strings"
	"sync"

	"github.com/toolnode/toolnode/runtime/internal/catalog"
	"github.com/toolnode/toolnode/runtime/internal/pin"
)

// pins is what the node knows of its lock file: the lock in force, what it found in the
// last catalog, and what of that has been logged.
type pins struct {
	lock    *pin.Lock   // nil: no lock, every definition served
	report  *pin.Report // of the last catalog; nil without a lock
	digests pin.Digests // of the last catalog's tools

	logMu   sync.Mutex
	held    map[string]string // name → digest of the held tools logged
	missing map[string]bool   // the missing tools logged
}

// SetLock puts lock in force (nil serves every definition, as without --lock): the tools it
// does not pin as they are served are held back from then on, and the others served.
func (n *Node) SetLock(lock *pin.Lock) {
	n.mu.Lock()
	n.pins.lock = lock
	n.mu.Unlock()
	n.rebuild()
}

// Pins returns what the lock in force finds of the tools served now; false without a lock.
func (n *Node) Pins() (pin.Report, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.pins.report == nil {
		return pin.Report{}, false
	}
	return *n.pins.report, true
}

// Served lists the bundles' tools in cat (not the node's own) as a lock pins them.
func (n *Node) Served(cat *catalog.Catalog) []pin.Tool {
	out := make([]pin.Tool, 0, cat.Len())
	for _, e := range cat.Entries() {
		if n.providerOf(e.Bundle).locked() {
			out = append(out, pin.Tool{Name: e.Name, Bundle: e.Bundle, JSON: e.JSON})
		}
	}
	return out
}

// pinned returns cat without the tools the lock in force holds back, and records what the
// lock found. Called with n.mu held.
func (n *Node) pinned(cat *catalog.Catalog) *catalog.Catalog {
	if n.pins.lock == nil {
		n.pins.report = nil
		return cat
	}
	r := n.pins.lock.CheckWith(n.Served(cat), &n.pins.digests)
	n.pins.report = &r
	if len(r.Held) == 0 {
		return cat
	}
	held := make(map[string]bool, len(r.Held))
	for _, h := range r.Held {
		held[h.Name] = true
	}
	return cat.Keep(func(e catalog.Entry) bool { return !held[e.Name] })
}

// heldWhy says why the tool name is held back, "" when it is not.
func (n *Node) heldWhy(name string) string {
	r, ok := n.Pins()
	if !ok {
		return ""
	}
	for _, h := range r.Held {
		if h.Name == name {
			return h.String()
		}
	}
	return ""
}

// logPins logs what the lock found that was not logged before: each held tool once per
// definition, with its diff, and each tool of the lock that no bundle serves. Without a
// lock it logs, instead, each served definition that changed from old to cat.
func (n *Node) logPins(old, cat *catalog.Catalog) {
	n.mu.Lock()
	r := n.pins.report
	n.mu.Unlock()
	n.pins.logMu.Lock()
	defer n.pins.logMu.Unlock()
	if r == nil {
		n.pins.held, n.pins.missing = nil, nil
		logChanges(n, old, cat)
		return
	}
	held := make(map[string]string, len(r.Held))
	for _, h := range r.Held {
		held[h.Name] = h.Digest
		if n.pins.held[h.Name] != h.Digest {
			n.log.Warn("held back by the lock file: "+h.String()+"; toolnode pin --accept "+h.Name+" serves it",
				"tool", h.Name, "bundle", h.Bundle, "diff", "\n"+strings.TrimRight(h.Diff, "\n"))
		}
	}
	missing := make(map[string]bool, len(r.Missing))
	for _, name := range r.Missing {
		missing[name] = true
		if !n.pins.missing[name] {
			n.log.Warn("the lock file pins a tool no bundle serves", "tool", name)
		}
	}
	n.pins.held, n.pins.missing = held, missing
}

// logChanges logs each tool served in both catalogs whose definition changed, with how.
func logChanges(n *Node, old, cat *catalog.Catalog) {
	if old == nil || old.Len() == 0 {
		return
	}
	for _, e := range cat.Entries() {
		was, ok := old.Lookup(e.Name)
		if !ok || !n.providerOf(e.Bundle).locked() || string(was.JSON) == string(e.JSON) {
			continue
		}
		a, errA := pin.Definition(was.JSON)
		b, errB := pin.Definition(e.JSON)
		if errA != nil || errB != nil || string(a) == string(b) {
			continue
		}
		n.log.Info("a served tool definition changed", "tool", e.Name, "bundle", e.Bundle,
			"diff", "\n"+strings.TrimRight(pin.Diff(a, b), "\n"))
	}
}
