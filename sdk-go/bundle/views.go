package bundle

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// View is an MCP Apps view (the extension io.modelcontextprotocol/ui): an HTML document a
// host renders in a sandbox for a tool's results, which may call the bundle's tools back
// through the host by their own names.
type View struct {
	// URI is the view's URI; it must begin ui://.
	URI string
	// Name names the view in resources/list. Default: URI.
	Name string
	// Title and Description describe it to people.
	Title, Description string
	// HTML is the whole HTML5 document. Hosts forbid what the view's Meta.CSP does not
	// declare: by default every network request and external script.
	HTML string
	// Meta is what the host's sandbox allows the view: origins it may reach, browser
	// features, a dedicated domain, a border.
	Meta mcp.UIResourceMeta
	// Unlisted leaves the view out of resources/list: hosts find it through the tools that
	// name it, and read it all the same.
	Unlisted bool
}

// AddView offers v, read with MIME type text/html;profile=mcp-app and v.Meta as the
// _meta.ui of both its listing and its contents. It fails when the URI does not begin
// ui:// or is taken.
func (s *Server) AddView(v View) error {
	if !mcp.IsViewURI(v.URI) {
		return fmt.Errorf("bundle: view URI %q must begin %s", v.URI, mcp.UIScheme)
	}
	if v.Name == "" {
		v.Name = v.URI
	}
	meta, err := json.Marshal(map[string]mcp.UIResourceMeta{"ui": v.Meta})
	if err != nil {
		return fmt.Errorf("bundle: view %q: %w", v.URI, err)
	}
	r := mcp.Resource{URI: v.URI, Name: v.Name, Title: v.Title, Description: v.Description, MimeType: mcp.MIMETypeApp, Meta: meta}
	read := func(context.Context, *ResourceRequest) ([]mcp.ResourceContents, error) {
		return []mcp.ResourceContents{{URI: v.URI, MimeType: mcp.MIMETypeApp, Text: v.HTML, Meta: meta}}, nil
	}
	return s.addResource(r, read, !v.Unlisted)
}

// AddViewTool offers t, run by h, as AddTool does, with its results shown in the view at
// viewURI: t's _meta.ui names the view, and visibility, when given, says who may see and
// call the tool (mcp.VisibilityModel, mcp.VisibilityApp); a tool of visibility
// []string{mcp.VisibilityApp} is one only views call, which hosts, and toolnode, leave out
// of what the model is shown. Other members of t.Meta are kept.
func (s *Server) AddViewTool(t mcp.Tool, viewURI string, visibility []string, h Handler) error {
	if !mcp.IsViewURI(viewURI) {
		return fmt.Errorf("bundle: tool %q: view URI %q must begin %s", t.Name, viewURI, mcp.UIScheme)
	}
	for _, v := range visibility {
		if v != mcp.VisibilityModel && v != mcp.VisibilityApp {
			return fmt.Errorf("bundle: tool %q: visibility %q is neither %q nor %q", t.Name, v, mcp.VisibilityModel, mcp.VisibilityApp)
		}
	}
	meta := map[string]json.RawMessage{}
	if len(t.Meta) > 0 {
		if err := json.Unmarshal(t.Meta, &meta); err != nil {
			return fmt.Errorf("bundle: tool %q: _meta must be an object: %w", t.Name, err)
		}
	}
	ui, err := json.Marshal(mcp.UIToolMeta{ResourceURI: viewURI, Visibility: visibility})
	if err != nil {
		return fmt.Errorf("bundle: tool %q: %w", t.Name, err)
	}
	meta["ui"] = ui
	if t.Meta, err = json.Marshal(meta); err != nil {
		return fmt.Errorf("bundle: tool %q: %w", t.Name, err)
	}
	return s.AddTool(t, h)
}
