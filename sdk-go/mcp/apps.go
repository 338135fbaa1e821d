package mcp

import (
	"encoding/json"
	"strings"
)

// MCP Apps, the extension io.modelcontextprotocol/ui (stable revision 2026-01-26): a tool
// names in _meta.ui.resourceUri a ui:// resource holding an HTML view, which the host
// renders in a sandbox and which may call the server's tools, by the server's own names,
// through the host.

const (
	// ExtensionUI is the extension's identifier, under which a client declares it in
	// capabilities.extensions.
	ExtensionUI = "io.modelcontextprotocol/ui"
	// MIMETypeApp is the MIME type of a view's HTML.
	MIMETypeApp = "text/html;profile=mcp-app"
	// UIScheme begins the URI of every view.
	UIScheme = "ui://"
	// MetaUIResourceURIFlat is the deprecated flat form of _meta.ui.resourceUri, still
	// read by hosts: _meta["ui/resourceUri"].
	MetaUIResourceURIFlat = "ui/resourceUri"
	// VisibilityModel and VisibilityApp are the members of _meta.ui.visibility: a tool the
	// model may see and call, a tool a view may call. A tool without visibility is both.
	VisibilityModel = "model"
	VisibilityApp   = "app"
)

// UIToolMeta is a tool's _meta.ui.
type UIToolMeta struct {
	// ResourceURI is the ui:// resource the host renders the tool's results with.
	ResourceURI string `json:"resourceUri,omitempty"`
	// Visibility says who may see and call the tool; nil means both the model and views.
	Visibility []string `json:"visibility,omitempty"`
}

// UIResourceMeta is the _meta.ui of a view resource and of its contents: what the host's
// sandbox allows it.
type UIResourceMeta struct {
	// CSP lists the origins the view may reach; nil allows none.
	CSP *UICSP `json:"csp,omitempty"`
	// Permissions are the browser features the view asks for.
	Permissions *UIPermissions `json:"permissions,omitempty"`
	// Domain is a dedicated sandbox origin, in the host's own format.
	Domain string `json:"domain,omitempty"`
	// PrefersBorder asks for a visible border (true) or none (false); nil lets the host
	// decide.
	PrefersBorder *bool `json:"prefersBorder,omitempty"`
}

// UICSP lists the origins a view may use, by kind.
type UICSP struct {
	ConnectDomains  []string `json:"connectDomains,omitempty"`
	ResourceDomains []string `json:"resourceDomains,omitempty"`
	FrameDomains    []string `json:"frameDomains,omitempty"`
	BaseURIDomains  []string `json:"baseUriDomains,omitempty"`
}

// UIPermissions are the browser features a view asks for; each present member is asked.
type UIPermissions struct {
	Camera         *struct{} `json:"camera,omitempty"`
	Microphone     *struct{} `json:"microphone,omitempty"`
	Geolocation    *struct{} `json:"geolocation,omitempty"`
	ClipboardWrite *struct{} `json:"clipboardWrite,omitempty"`
}

// UIClientCapability is what a client that renders views declares under
// capabilities.extensions[ExtensionUI].
func UIClientCapability() json.RawMessage {
	return json.RawMessage(`{"mimeTypes":["` + MIMETypeApp + `"]}`)
}

// IsViewURI reports whether uri names a view (the ui:// scheme, any case).
func IsViewURI(uri string) bool {
	return len(uri) > len(UIScheme) && strings.EqualFold(uri[:len(UIScheme)], UIScheme)
}
