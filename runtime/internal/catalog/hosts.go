package catalog

import (
	"encoding/json"

	"github.com/toolnode/toolnode/sdk-go/app/provider"
	"github.com/toolnode/toolnode/sdk-go/rawjson"
)

// Schemas as hosts take them (see provider.HostInputSchema): what the front lists to a
// client of the initialize era (FormHosts). The catalog keeps every tool's schema as its
// bundle gave it, which calls are checked against and a 2026-07-28 client is listed.

// Bounds of lowering, in bytes of compact JSON: a schema whose references inlined would
// pass maxHostTool keeps them, as does every schema once the catalog's lowered ones pass
// maxHostAll together, so that no schema, however built, makes the node hold more.
const (
	maxHostTool = provider.MaxToolBytes
	maxHostAll  = provider.MaxAllBytes
)

// hostTool is a tool's inputSchema and description as hosts are listed them.
type hostTool struct {
	schema, description json.RawMessage
}

// lower returns tool (a listed tool object) with its input schema lowered for hosts and
// what the schema no longer states added to its description.
func (h hostTool) lower(tool json.RawMessage) json.RawMessage {
	edits := []rawjson.Edit{{Key: "inputSchema", Value: h.schema}}
	if h.description != nil {
		edits = append(edits, rawjson.Edit{Key: "description", Value: h.description})
	}
	if lowered, ok := rawjson.PutMembers(tool, edits...); ok {
		return lowered
	}
	return tool
}

// lowerForHosts lowers the schemas of the catalog's tools that need it, once per catalog.
func (c *Catalog) lowerForHosts() {
	c.host = map[string]hostTool{}
	room := maxHostAll
	for _, e := range c.entries {
		raw, ok := rawjson.Member(e.JSON, "inputSchema")
		if !ok || !provider.NeedsHostLowering(raw) {
			continue
		}
		schema, err := provider.DecodeJSON(raw)
		if err != nil {
			continue
		}
		lowered, note := provider.HostInputSchema(schema, min(maxHostTool, max(room, 0)))
		b, err := json.Marshal(lowered)
		if err != nil {
			continue
		}
		room -= len(b)
		h := hostTool{schema: b}
		if note != "" {
			var desc string
			if d, ok := rawjson.Member(e.JSON, "description"); ok {
				desc, _ = rawjson.String(d)
			}
			if desc != "" {
				desc += "\n\n"
			}
			h.description = rawjson.AppendString(nil, desc+note)
		}
		c.host[e.Name] = h
	}
}
