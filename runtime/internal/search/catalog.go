package search

import "github.com/toolnode/toolnode/runtime/internal/catalog"

// FromCatalog indexes the tools of a merged catalog under their exposed names.
func FromCatalog(c *catalog.Catalog) *Index {
	entries := c.Entries()
	tools := make([]Tool, len(entries))
	for i, e := range entries {
		tools[i] = Tool{Name: e.Name, Bundle: e.Bundle, JSON: e.JSON}
	}
	return Build(tools)
}
