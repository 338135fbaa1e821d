package node

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolnode/toolnode/runtime/internal/catalog"
	"github.com/toolnode/toolnode/runtime/internal/rpc"
	"github.com/toolnode/toolnode/sdk-go/mcp"
	"github.com/toolnode/toolnode/sdk-go/rawjson"
)

// MCP Apps through the node (see catalog.Views): a view calls its server's tools by the
// server's own names, which the catalog exposes as <bundle>.<tool>, and reads its URIs,
// which the catalog exposes as they are unless two bundles serve the same one.

// viewCall finds the tool a view calls by its bundle's own name: the one tool of that name
// among the bundles serving views that allow lets the caller use, unless the name is, or
// was, another bundle's (see heldNames). None is not an error (false); two or more are,
// naming them, since the node cannot tell which view called.
func (n *Node) viewCall(name string, allow Allow) (catalog.Entry, bool, *rpc.Error) {
	var found []catalog.Entry
	for _, e := range n.Catalog().ByOwnName(name) {
		if allow.allows(e.Name) && !n.held.heldByOther(name, e.Bundle) {
			found = append(found, e)
		}
	}
	switch len(found) {
	case 0:
		return catalog.Entry{}, false, nil
	case 1:
		return found[0], true, nil
	}
	names := make([]string, len(found))
	for i, e := range found {
		names[i] = e.Name
	}
	return catalog.Entry{}, false, invalidParams(fmt.Sprintf("tool %q is ambiguous: %d bundles serving views have a tool of that name (%s); "+
		"call it by one of those names, or let this client use one of those bundles only (docs/clients.md, MCP Apps)",
		name, len(found), strings.Join(names, ", ")))
}

// MayCall reports whether a caller that allow filters may call the tool name: a name in
// the catalog, or the own name a view calls a tool of its bundle by.
func (n *Node) MayCall(name string, allow Allow) bool {
	if _, ok := n.Catalog().Lookup(name); ok {
		return allow.allows(name)
	}
	_, ok, _ := n.viewCall(name, allow)
	return ok
}

// MayRead reports whether req's caller may read the resource req names, by the same rule
// resources/read follows.
func (n *Node) MayRead(req *Request) bool {
	_, _, err := n.viewBundle(req)
	return err == nil
}

// viewBundle finds the bundle serving the resource req names, when the caller may read
// it, and the URI the bundle names it by; else the error of an unknown resource, which for
// a view two bundles serve names the URIs to read instead.
func (n *Node) viewBundle(req *Request) (bundle, own string, err error) {
	res := n.Resources()
	bundle, own, ok := res.View(req.URI)
	switch {
	case ok && req.Allow.Resource(bundle, own) && !n.held.uriHeldByOther(req.URI, bundle):
		return bundle, own, nil
	case ok:
		return "", "", resourceNotFound(req.URI)
	}
	var readable []string
	for _, exposed := range res.Clash(req.URI) {
		if b, o, ok := res.View(exposed); ok && req.Allow.Resource(b, o) {
			readable = append(readable, exposed)
		}
	}
	if len(readable) == 0 {
		bundle, err := n.routeResource(req.URI, req.Allow, false)
		return bundle, req.URI, err
	}
	data, _ := json.Marshal(map[string]any{"uri": req.URI, "candidates": readable})
	return "", "", rpc.Errorf(mcp.CodeResourceNotFound, "resource %q is served by %d bundles; read one of %s (docs/clients.md, MCP Apps)",
		req.URI, len(readable), strings.Join(readable, ", ")).WithData(data)
}

// routeResource finds the bundle serving the resource uri (or, for completion, the
// template) to a caller that allow filters. Of two or more bundles that list uri, or whose
// templates match it (catalog.Resources.Shared), the node serves it by the one the caller
// may read, and by none when it may read more than one: the error then names them. A URI
// another bundle served is served by none (see heldNames).
func (n *Node) routeResource(uri string, allow Allow, template bool) (string, error) {
	res := n.Resources()
	route := res.Route
	if template {
		route = res.RouteTemplate
	}
	if b, ok := route(uri); ok {
		if !allow.Resource(b, uri) || n.held.uriHeldByOther(uri, b) {
			return "", resourceNotFound(uri)
		}
		return b, nil
	}
	var readable []string
	for _, b := range res.Shared(uri) {
		if allow.Resource(b, uri) {
			readable = append(readable, b)
		}
	}
	switch len(readable) {
	case 0:
		return "", resourceNotFound(uri)
	case 1:
		if n.held.uriHeldByOther(uri, readable[0]) {
			return "", resourceNotFound(uri)
		}
		return readable[0], nil
	}
	return "", rpc.Errorf(mcp.CodeResourceNotFound, "resource %q is served by bundles %s: the node cannot tell which is meant, so serves it by neither; "+
		"let this client read one of them only (--access), or have the bundles name it apart", uri, strings.Join(readable, ", "))
}

// readRenamed reads the view exposed as req.URI from bundle by its own URI, and gives the
// contents back under the URI read.
func (n *Node) readRenamed(ctx context.Context, x Exchange, bundle, own string, req *Request, notes noted) Outcome {
	quotedOwn, _ := json.Marshal(own)
	params, ok := rawjson.PutMember(req.Params, "uri", quotedOwn)
	if !ok {
		return outcomeOf(notes, req.Method, nil, invalidParams("resources/read params must be an object"), "")
	}
	inner := *req
	inner.Params, inner.URI = params, own
	o := n.forwardOutcome(ctx, x, bundle, "", &inner, notes)
	if o.Err == nil {
		o.Result = renameContents(o.Result, own, req.URI) // as the client names it
	}
	return o
}

// renameContents returns a resources/read result with the uri of each of its contents that
// is from (as the bundle named it) set to to; the rest byte for byte.
func renameContents(res json.RawMessage, from, to string) json.RawMessage {
	contents, ok := rawjson.Member(res, "contents")
	if !ok {
		return res
	}
	var items []json.RawMessage
	if json.Unmarshal(contents, &items) != nil {
		return res
	}
	quoted, _ := json.Marshal(to)
	changed := false
	for i, it := range items {
		if u, ok := rawjson.Member(it, "uri"); ok && rawjson.StringIs(u, from) {
			if out, ok := rawjson.SetMember(it, "uri", quoted); ok {
				items[i], changed = out, true
			}
		}
	}
	if !changed {
		return res
	}
	// Joined by hand: json.Marshal would escape the HTML of a view's text.
	list := []byte{'['}
	for i, it := range items {
		if i > 0 {
			list = append(list, ',')
		}
		list = append(list, it...)
	}
	out, _ := rawjson.SetMember(res, "contents", append(list, ']'))
	return out
}
