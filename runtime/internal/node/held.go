package node

import (
	"slices"
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
// bundle's is never routed to a view's bundle, whatever came and went since. Resources
// alike: a URI a bundle served (a view's as exposed) is never served by another, so that a
// host re-reading a view after its bundle left or failed does not render another bundle's
// page.
//
// What is remembered is bounded (maxHeld prefixes, as many names and as many URIs): a
// bundle that lists ever new names or URIs, or a cluster announcing ever new bundles, must
// not grow the node without end. Past the bound new ones are not remembered, and the
// guarantee holds for those remembered.
type heldNames struct {
	mu       sync.Mutex
	prefixes map[string][]string // "bank" -> the bundles that hold bank.*
	names    map[string][]string // an exposed name outside its bundle's prefixes -> the bundles it was exposed for
	uris     map[string][]string // a resource's URI (a view's as exposed) -> the bundles that served it
}

// maxHeld bounds the prefixes, the names and the URIs the node remembers, each.
const maxHeld = 1 << 16

// holdIn records bundle as a holder of key in m, unless m is at its bound.
func holdIn(m map[string][]string, key, bundle string, bound int) {
	holders, known := m[key]
	if !known && bound > 0 && len(m) >= bound || slices.Contains(holders, bundle) {
		return
	}
	m[key] = append(holders, bundle)
}

// holdBundles records the holders of now by their prefixes: the bundles configured (listed
// or not) with their seats, and the node's own namespace. Apply calls it as bundles come:
// what the catalogs held was recorded by hold when rebuild made them. The caller holds n.mu.
func (h *heldNames) holdBundles(bundles map[string]*bundle) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.holdBundlesLocked(bundles)
}

func (h *heldNames) holdBundlesLocked(bundles map[string]*bundle) {
	if h.prefixes == nil {
		h.prefixes, h.names, h.uris = map[string][]string{}, map[string][]string{}, map[string][]string{}
	}
	holdIn(h.prefixes, ownNamespace, ownBundle, 0)
	for name, b := range bundles {
		holdIn(h.prefixes, name, name, maxHeld)
		for _, seat := range b.m.Seats {
			holdIn(h.prefixes, seat, name, maxHeld)
		}
	}
}

// hold records the holders of now: the bundles, as holdBundles does, every name of the
// catalog cat and every URI res routes by itself. The caller holds n.mu.
func (h *heldNames) hold(bundles map[string]*bundle, cat *catalog.Catalog, res *catalog.Resources) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.holdBundlesLocked(bundles)
	for _, e := range cat.Entries() {
		if prefix, _, dotted := strings.Cut(e.Name, "."); !dotted || !slices.Contains(h.prefixes[prefix], e.Bundle) {
			holdIn(h.names, e.Name, e.Bundle, maxHeld) // a name its prefix does not hold already
		}
	}
	res.Listed(func(uri, bundle string) { holdIn(h.uris, uri, bundle, maxHeld) })
}

// uriHeldByOther reports whether the resource uri was served by a bundle other than bundle.
func (h *heldNames) uriHeldByOther(uri, bundle string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return otherThan(h.uris[uri], bundle)
}

// otherThan reports whether holders holds a bundle other than bundle.
func otherThan(holders []string, bundle string) bool {
	for _, b := range holders {
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
