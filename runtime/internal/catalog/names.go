package catalog

import (
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"strings"
)

// StrictNameMax is the longest name strict clients accept (GitHub Copilot CLI, Windsurf,
// and many model APIs): ^[a-zA-Z0-9_-]{1,64}$.
const StrictNameMax = 64

// NameMap renders canonical names for strict clients and maps them back.
type NameMap struct {
	rendered  map[string]string // canonical -> strict
	canonical map[string]string // strict -> canonical
}

// Render returns the strict form of a canonical name.
func (m *NameMap) Render(name string) string {
	if r, ok := m.rendered[name]; ok {
		return r
	}
	return name
}

// Canonical returns the canonical name of a strict one, and whether it is known.
func (m *NameMap) Canonical(strict string) (string, bool) {
	c, ok := m.canonical[strict]
	return c, ok
}

// Strict returns the catalog's names rendered for strict clients: dots become
// underscores, and a name that would then be too long or would collide with another is
// shortened and given a stable hash of its canonical form. Computed once per catalog.
func (c *Catalog) Strict() *NameMap {
	c.strictOnce.Do(func() {
		names := make([]string, 0, len(c.entries))
		for _, e := range c.entries {
			names = append(names, e.Name)
		}
		c.strict = strictNames(names)
	})
	return c.strict
}

func strictNames(names []string) *NameMap {
	m := &NameMap{rendered: map[string]string{}, canonical: map[string]string{}}
	count := map[string]int{}
	for _, n := range names {
		count[strings.ReplaceAll(n, ".", "_")]++
	}
	sort.Strings(names)
	for _, n := range names {
		r := strings.ReplaceAll(n, ".", "_")
		if len(r) > StrictNameMax || count[r] > 1 {
			sum := sha256.Sum256([]byte(n))
			h := hex.EncodeToString(sum[:4])
			r = r[:min(len(r), StrictNameMax-len(h)-1)] + "_" + h
		}
		m.rendered[n] = r
		m.canonical[r] = n
	}
	return m
}
