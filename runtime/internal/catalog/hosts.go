package catalog

import (
	"bytes"
	"encoding/json"

	"github.com/toolnode/toolnode/sdk-go/app/provider"
	"github.com/toolnode/toolnode/sdk-go/rawjson"
)

// Schemas as hosts take them (see provider.HostInputSchema): what the front lists to a
// client of the initialize era. The catalog keeps every tool's schema as its bundle gave it,
// which calls are checked against and a 2026-07-28 client is listed.

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

// ForHosts returns tools, as PageListed gave them, with their input schemas lowered for
// hosts and what a schema no longer states added to its tool's description. Computed once
// per catalog; tools whose schema needs nothing are returned as they are.
func (c *Catalog) ForHosts(tools []json.RawMessage) []json.RawMessage {
	c.hostOnce.Do(c.lowerForHosts)
	if len(c.host) == 0 {
		return tools
	}
	out := make([]json.RawMessage, len(tools))
	for i, t := range tools {
		out[i] = t
		raw, _ := rawjson.Member(t, "name")
		name, _ := rawjson.String(raw)
		h, ok := c.host[name]
		if !ok {
			continue
		}
		edits := []rawjson.Edit{{Key: "inputSchema", Value: h.schema}}
		if h.description != nil {
			edits = append(edits, rawjson.Edit{Key: "description", Value: h.description})
		}
		if lowered, ok := rawjson.PutMembers(t, edits...); ok {
			out[i] = lowered
		}
	}
	return out
}

// lowerForHosts lowers the schemas of the catalog's tools that need it.
func (c *Catalog) lowerForHosts() {
	c.host = map[string]hostTool{}
	room := maxHostAll
	for _, e := range c.entries {
		raw, ok := rawjson.Member(e.JSON, "inputSchema")
		if !ok || !provider.NeedsHostLowering(raw) {
			continue
		}
		var schema any
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		if d.Decode(&schema) != nil {
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
