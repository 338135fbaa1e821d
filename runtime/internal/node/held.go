package node

import (
	"strings"
	"sync"

	"github.com/toolnode/toolnode/runtime/internal/catalog"
)

// Held names. A view calls a tool of its bundle by the bundle's own name for it (see
// viewCall), which may look like another bundle's canonical name: a bundle serving a view
// can list a tool named "bank.transfer". Such a call must never reach the view's bundle
// while the name is, or ever was, another's: a client calling bank.transfer while bank is
// starting, failed or removed would otherwise hand its arguments to the wrong bundle and
// get an answer that looks legitimate.
//
// A name is held by a bundle when it begins with the bundle's name or a seat the bundle
// declares (<bundle>.*, <seat>.*), or when the catalog exposed it as that bundle's. The
// node remembers every holder it has had, for as long as it runs: a name once another
// bundle's is never routed to a view's bundle, whatever came and went since.
type heldNames struct {
	mu       sync.Mutex
	prefixes map[string]map[string]bool // "bank" -> the bundles that hold bank.*
	names    map[string]map[string]bool // an exposed name -> the bundles it was exposed for
	uris     map[string]map[string]bool // a resource's URI (a view's as exposed) -> the bundles that served it
}

// hold records the holders of now: the bundles configured (listed or not) with their seats,
// the node's own namespace, every name of the catalog cat and every URI res routes by
// itself. The caller holds n.mu.
func (h *heldNames) hold(bundles map[string]*bundle, cat *catalog.Catalog, res *catalog.Resources) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.prefixes == nil {
		h.prefixes, h.names, h.uris = map[string]map[string]bool{}, map[string]map[string]bool{}, map[string]map[string]bool{}
	}
	add := func(m map[string]map[string]bool, key, bundle string) {
		if m[key] == nil {
			m[key] = map[string]bool{}
		}
		m[key][bundle] = true
	}
	add(h.prefixes, ownNamespace, ownBundle)
	for name, b := range bundles {
		add(h.prefixes, name, name)
		for _, seat := range b.m.Seats {
			add(h.prefixes, seat, name)
		}
	}
	for _, e := range cat.Entries() {
		add(h.names, e.Name, e.Bundle)
	}
	res.Listed(func(uri, bundle string) { add(h.uris, uri, bundle) })
}

// uriHeldByOther reports whether the resource uri was served by a bundle other than bundle.
func (h *heldNames) uriHeldByOther(uri, bundle string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return otherThan(h.uris[uri], bundle)
}

// otherThan reports whether holders holds a bundle other than bundle.
func otherThan(holders map[string]bool, bundle string) bool {
	for b := range holders {
		if b != bundle {
			return true
		}
	}
	return false
}

// heldByOther reports whether name is, or was, held by a bundle other than bundle.
func (h *heldNames) heldByOther(name, bundle string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if prefix, _, dotted := strings.Cut(name, "."); dotted && otherThan(h.prefixes[prefix], bundle) {
		return true
	}
	return otherThan(h.names[name], bundle)
}
