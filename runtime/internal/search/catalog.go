package search

import (
	"slices"

	"github.com/toolnode/toolnode/runtime/internal/catalog"
)

// FromCatalog indexes the tools of a merged catalog under their exposed names, but for the
// tools only views may call (catalog.Entry.AppOnly), which the model is not shown, and the
// tools named in leaveOut (the search tool itself: its caller is using it, and the examples
// its description gives would match many tasks); each tool with its bundle's synonyms from
// synonyms (by bundle name; nil or absent for none).
func FromCatalog(c *catalog.Catalog, synonyms map[string]*Synonyms, leaveOut ...string) *Index {
	entries := c.Entries()
	tools := make([]Tool, 0, len(entries))
	for _, e := range entries {
		if !e.AppOnly && !slices.Contains(leaveOut, e.Name) {
			tools = append(tools, Tool{Name: e.Name, Bundle: e.Bundle, JSON: e.JSON, Synonyms: synonyms[e.Bundle]})
		}
	}
	return Build(tools)
}
