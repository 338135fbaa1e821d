package argcheck

import (
	"encoding/json"

	"github.com/toolnode/toolnode/runtime/internal/catalog"
)

// ForCatalog returns a Checker over the tools of a merged catalog, by exposed name. Make one
// per catalog: its compiled schemas live as long as it does.
func ForCatalog(c *catalog.Catalog) *Checker {
	return New(func(name string) (json.RawMessage, bool) {
		e, ok := c.Lookup(name)
		return e.JSON, ok
	})
}
