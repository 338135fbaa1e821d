package catalog

import (
	"fmt"
	"strings"
	"testing"
)

// benchSources is a catalog of 20 bundles of 100 tools, as in the node's own benchmark, with
// every tenth name too long for strict clients so that some names are hashed.
func benchSources() []Source {
	var srcs []Source
	for i := range 20 {
		var names []string
		for j := range 100 {
			name := fmt.Sprintf("tool%02d", j)
			if j%10 == 0 {
				name += "_" + strings.Repeat("x", 60)
			}
			names = append(names, name)
		}
		srcs = append(srcs, Source{Bundle: fmt.Sprintf("bundle%02d", i), Seats: []string{"node-lamp"}, Tools: tools(names...)})
	}
	return srcs
}

// BenchmarkBuild merges the catalog, which the node does each time a bundle starts, stops
// or changes its tools: while 20 bundles start, up to 20 times.
func BenchmarkBuild(b *testing.B) {
	srcs := benchSources()
	for b.Loop() {
		if cat, _ := Build(srcs); cat.Len() != 2000 {
			b.Fatalf("%d tools", cat.Len())
		}
	}
}

// BenchmarkStrictNames renders every name of the catalog for strict clients, once per
// catalog on the first strict client's tools/list.
func BenchmarkStrictNames(b *testing.B) {
	cat, _ := Build(benchSources())
	var names []string
	for _, e := range cat.Entries() {
		names = append(names, e.Name)
	}
	for b.Loop() {
		m := strictNames(append([]string(nil), names...))
		if m.names.Len() != len(names) {
			b.Fatalf("%d strict names for %d tools", m.names.Len(), len(names))
		}
	}
}

// BenchmarkStrictRoundTrip renders a name for a strict client and maps it back, as a
// tools/call of such a client does.
func BenchmarkStrictRoundTrip(b *testing.B) {
	cat, _ := Build(benchSources())
	m := cat.Strict()
	name := "bundle07.tool10_" + strings.Repeat("x", 60)
	if _, ok := cat.Lookup(name); !ok {
		b.Fatalf("%s is not in the catalog", name)
	}
	for b.Loop() {
		if back, ok := m.Canonical(m.Render(name)); !ok || back != name {
			b.Fatalf("%s came back as %q", name, back)
		}
	}
}

// BenchmarkPage pages through the whole catalog, in one page and 100 tools at a time, as
// the catalog holds it and as a strict client of the initialize era is listed it (names
// rendered, schemas lowered: once per catalog, not per list).
func BenchmarkPage(b *testing.B) {
	cat, _ := Build(benchSources())
	for _, form := range []Form{0, FormHosts | FormStrict} {
		for _, size := range []int{0, 100} {
			b.Run(fmt.Sprintf("form=%d/size=%d", form, size), func(b *testing.B) {
				for b.Loop() {
					n, cursor := 0, ""
					for {
						page, next, err := cat.PageListed(cursor, size, nil, nil, form)
						if err != nil {
							b.Fatal(err)
						}
						n += len(page)
						if cursor = next; cursor == "" {
							break
						}
					}
					if n != 2000 {
						b.Fatalf("paged %d tools", n)
					}
				}
			})
		}
	}
}
