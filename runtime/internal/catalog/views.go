package catalog

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/toolnode/toolnode/sdk-go/mcp"
	"github.com/toolnode/toolnode/sdk-go/rawjson"
)

// Views are the ui:// resources of MCP Apps (see mcp.ExtensionUI). A view is written for
// its server: it reads the server's URIs and calls its tools by the server's own names. So
// a view's URI is exposed as the bundle names it, and rewritten only when two bundles
// serve the same one: then each bundle's copy becomes ui://toolnode/<bundle>/<rest of the
// URI>, in the tools that name it and in the resources listed, and the URI as the bundles
// name it is refused with an error naming the rewritten ones. ui://toolnode/ is the
// node's: a bundle's view under it is left out (its tools listed without it), so that no
// bundle can serve the URI another's view is moved to. A bundle serves a view at every
// ui:// URI its tools name, listed or not (servers may leave views out of
// resources/list), and at every ui:// resource it lists.

// ViewSource is what one bundle lists that may name views.
type ViewSource struct {
	Bundle           string
	Tools, Resources []json.RawMessage
}

// Views says where each bundle's views are exposed.
type Views struct {
	exposed map[string]map[string]string // bundle -> its own URI -> the URI exposed, "" when left out
}

// nodeViews begins the URIs of the node's own: those of views two bundles serve.
const nodeViews = mcp.UIScheme + "toolnode/"

// isNodeView reports whether uri is under ui://toolnode/, scheme and host in any case.
func isNodeView(uri string) bool {
	return len(uri) >= len(nodeViews) && strings.EqualFold(uri[:len(nodeViews)], nodeViews)
}

// PlanViews finds the views of every source and the URI each is exposed at, and reports
// the URIs that two bundles serve and the views left out.
func PlanViews(sources []ViewSource) (*Views, []Notice) {
	v := &Views{exposed: map[string]map[string]string{}}
	var notices []Notice
	servers := map[string][]string{} // own URI -> the bundles serving it, in the order of sources
	for _, s := range sources {
		own := map[string]bool{}
		for _, raw := range s.Tools {
			if uri, _ := toolView(raw); uri != "" {
				own[uri] = true
			}
		}
		for _, raw := range s.Resources {
			var r struct {
				URI string `json:"uri"`
			}
			if json.Unmarshal(raw, &r) == nil && mcp.IsViewURI(r.URI) {
				own[r.URI] = true
			}
		}
		if len(own) == 0 {
			continue
		}
		m := make(map[string]string, len(own))
		for uri := range own {
			if isNodeView(uri) {
				m[uri] = ""
				notices = append(notices, Notice{Bundle: s.Bundle, Tool: uri, Kind: "view",
					Reason: "URIs under " + nodeViews + " are the node's, where it puts views two bundles serve"})
				continue
			}
			m[uri] = uri
			servers[uri] = append(servers[uri], s.Bundle)
		}
		v.exposed[s.Bundle] = m
	}
	sort.Slice(notices, func(i, j int) bool {
		return notices[i].Bundle < notices[j].Bundle || notices[i].Bundle == notices[j].Bundle && notices[i].Tool < notices[j].Tool
	})
	uris := make([]string, 0, len(servers))
	for uri := range servers {
		uris = append(uris, uri)
	}
	sort.Strings(uris)
	for _, uri := range uris {
		bundles := servers[uri]
		if len(bundles) < 2 {
			continue
		}
		sort.Strings(bundles)
		for _, b := range bundles {
			ns := namespacedView(b, uri)
			v.exposed[b][uri] = ns
			notices = append(notices, Notice{Bundle: b, Tool: uri, Exposed: ns, Kind: "view",
				Reason: fmt.Sprintf("view %q is served by bundles %s", uri, strings.Join(bundles, ", "))})
		}
	}
	return v, notices
}

// namespacedView is the URI the view uri of bundle is exposed at when another bundle serves
// the same URI: under the node's ui://toolnode/, which no bundle may serve, then the
// bundle's name (which holds no '/'), so that no two views are moved to one URI.
func namespacedView(bundle, uri string) string {
	return nodeViews + bundle + "/" + uri[len(mcp.UIScheme):]
}

// Of returns the views of bundle: each URI as the bundle names it, to the URI exposed, ""
// for a view left out. nil when it serves none. The map must not be modified.
func (v *Views) Of(bundle string) map[string]string {
	if v == nil {
		return nil
	}
	return v.exposed[bundle]
}

// toolView reads what a tool object says of its view: the ui:// URI in
// _meta.ui.resourceUri, or in the deprecated _meta["ui/resourceUri"] ("" when it names
// none), and whether its _meta.ui.visibility leaves the model out (a tool only views may
// call). Only the members it needs are decoded.
func toolView(tool []byte) (uri string, appOnly bool) {
	meta, ok := rawjson.Member(tool, "_meta")
	if !ok || len(meta) == 0 || meta[0] != '{' {
		return "", false
	}
	if ui, ok := rawjson.Member(meta, "ui"); ok && len(ui) > 0 && ui[0] == '{' {
		if raw, ok := rawjson.Member(ui, "resourceUri"); ok {
			uri, _ = rawjson.String(raw)
		}
		if raw, ok := rawjson.Member(ui, "visibility"); ok {
			var vis []string
			if json.Unmarshal(raw, &vis) == nil {
				appOnly = true
				for _, who := range vis {
					if who == mcp.VisibilityModel {
						appOnly = false
					}
				}
			}
		}
	}
	if uri == "" {
		if raw, ok := rawjson.Member(meta, mcp.MetaUIResourceURIFlat); ok {
			uri, _ = rawjson.String(raw)
		}
	}
	if !mcp.IsViewURI(uri) {
		uri = ""
	}
	return uri, appOnly
}

// setToolView returns the tool object with the view URI of its _meta set to uri, in
// _meta.ui.resourceUri and in the deprecated _meta["ui/resourceUri"] wherever either is
// present, or with both removed when uri is "". Every other member is kept byte for byte.
func setToolView(tool []byte, uri string) []byte {
	meta, ok := rawjson.Member(tool, "_meta")
	if !ok || len(meta) == 0 || meta[0] != '{' {
		return tool
	}
	quoted, _ := json.Marshal(uri)
	edit := func(obj []byte, key string) []byte {
		if _, ok := rawjson.Member(obj, key); !ok {
			return obj
		}
		if uri == "" {
			return rawjson.DeleteMember(obj, key)
		}
		out, _ := rawjson.SetMember(obj, key, quoted)
		return out
	}
	newMeta := edit(meta, mcp.MetaUIResourceURIFlat)
	if ui, ok := rawjson.Member(newMeta, "ui"); ok && len(ui) > 0 && ui[0] == '{' {
		newMeta, _ = rawjson.SetMember(newMeta, "ui", edit(ui, "resourceUri"))
	}
	if out, ok := rawjson.SetMember(tool, "_meta", newMeta); ok {
		return out
	}
	return tool
}

// indexOwnNames indexes the entries of the bundles serving views (those with a tool naming
// one) by the bundles' own names of their tools.
func (c *Catalog) indexOwnNames() {
	serving := map[string]bool{}
	for _, e := range c.entries {
		if e.View != "" {
			serving[e.Bundle] = true
		}
	}
	if len(serving) == 0 {
		return
	}
	c.byOwn = map[string][]int{}
	for i, e := range c.entries {
		if serving[e.Bundle] {
			c.byOwn[e.Tool] = append(c.byOwn[e.Tool], i)
		}
	}
}

// ByOwnName returns the tools that the bundles serving views call name, the name a view
// calls a tool of its server by, sorted by exposed name: one when a single such bundle has
// a tool of that name.
func (c *Catalog) ByOwnName(name string) []Entry {
	idx := c.byOwn[name]
	out := make([]Entry, len(idx))
	for i, j := range idx {
		out[i] = c.entries[j]
	}
	return out
}
