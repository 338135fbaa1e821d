package bundle

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// ResourceHandler reads one resource. Contents without a URI get the one read. Return
// ResourceNotFound(r.URI) for a URI that names nothing; an *RPCError is answered as it is,
// any other error answers -32603 with its message.
type ResourceHandler func(ctx context.Context, r *ResourceRequest) ([]mcp.ResourceContents, error)

// ResourceRequest is one resources/read as its handler sees it.
type ResourceRequest struct {
	// URI is the URI read.
	URI string
	// Vars are the values of the template's variables in URI, percent-decoded; nil for a
	// resource added with AddResource.
	Vars map[string]string

	// Input asks the client for input on behalf of the request.
	*Input
}

type template struct {
	def      mcp.ResourceTemplate
	re       *regexp.Regexp
	vars     []string
	handler  ResourceHandler
	complete map[string]Completer // by variable name
}

// AddResource offers r, read by h. It fails when the URI is not absolute or already taken,
// or the name is empty. Resources are listed in the order added; once there is one, the
// server announces the resources capability, with subscriptions.
func (s *Server) AddResource(r mcp.Resource, h ResourceHandler) error {
	return s.addResource(r, h, true)
}

// addResource offers r, read by h, listed or not.
func (s *Server) addResource(r mcp.Resource, h ResourceHandler, listed bool) error {
	if u, err := url.Parse(r.URI); err != nil || u.Scheme == "" {
		return fmt.Errorf("bundle: resource URI %q is not an absolute URI", r.URI)
	}
	if r.Name == "" || h == nil {
		return fmt.Errorf("bundle: resource %q needs a name and a handler", r.URI)
	}
	def, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("bundle: resource %q: %w", r.URI, err)
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.resources[r.URI]; dup {
		return fmt.Errorf("bundle: resource %q is already added", r.URI)
	}
	s.resources[r.URI] = h
	if listed {
		s.listed[listResources] = append(s.listed[listResources], def)
	}
	return nil
}

// AddResourceTemplate offers the resources whose URIs t.URITemplate matches, read by h. The
// template may use {name} (a value without '/', '?' or '#'), and {+name} and {#name} (any
// value), the forms of RFC 6570 that can be matched back; other forms are refused. A URI
// added with AddResource is served by its own handler; otherwise the first template added
// that matches serves it.
func (s *Server) AddResourceTemplate(t mcp.ResourceTemplate, h ResourceHandler) error {
	re, vars, err := parseTemplate(t.URITemplate)
	if err != nil {
		return fmt.Errorf("bundle: resource template %q: %w", t.URITemplate, err)
	}
	if t.Name == "" || h == nil {
		return fmt.Errorf("bundle: resource template %q needs a name and a handler", t.URITemplate)
	}
	def, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("bundle: resource template %q: %w", t.URITemplate, err)
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	for _, other := range s.templates {
		if other.def.URITemplate == t.URITemplate {
			return fmt.Errorf("bundle: resource template %q is already added", t.URITemplate)
		}
	}
	s.templates = append(s.templates, &template{def: t, re: re, vars: vars, handler: h, complete: map[string]Completer{}})
	s.listed[listTemplates] = append(s.listed[listTemplates], def)
	return nil
}

var varName = regexp.MustCompile(`^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*$`)

// parseTemplate turns a URI template into a regular expression matching the URIs it
// expands to, with one group per variable.
func parseTemplate(tmpl string) (*regexp.Regexp, []string, error) {
	var re, sample strings.Builder // sample is the template with each variable set to "x"
	var vars []string
	re.WriteString("^")
	for rest := tmpl; rest != ""; {
		open := strings.IndexAny(rest, "{}")
		if open < 0 {
			open = len(rest)
		}
		re.WriteString(regexp.QuoteMeta(rest[:open]))
		sample.WriteString(rest[:open])
		rest = rest[open:]
		if rest == "" {
			continue
		}
		end := strings.IndexByte(rest, '}')
		if rest[0] == '}' || end < 0 {
			return nil, nil, fmt.Errorf("unbalanced braces")
		}
		expr, name, group := rest[:end+1], rest[1:end], `([^/?#]+)`
		rest = rest[end+1:]
		switch {
		case strings.HasPrefix(name, "+"):
			name, group = name[1:], `(.+)`
		case strings.HasPrefix(name, "#"):
			name, group = name[1:], `#(.+)`
		}
		if !varName.MatchString(name) {
			return nil, nil, fmt.Errorf("%s: only {name}, {+name} and {#name} are supported", expr)
		}
		vars = append(vars, name)
		re.WriteString(group)
		sample.WriteString("x")
	}
	re.WriteString("$")
	if u, err := url.Parse(sample.String()); err != nil || u.Scheme == "" {
		return nil, nil, fmt.Errorf("not an absolute URI template")
	}
	compiled, err := regexp.Compile(re.String())
	return compiled, vars, err
}

// match returns the values of t's variables in uri, or nil when t does not match it.
func (t *template) match(uri string) map[string]string {
	m := t.re.FindStringSubmatch(uri)
	if m == nil {
		return nil
	}
	vars := make(map[string]string, len(t.vars))
	for i, name := range t.vars {
		v, err := url.PathUnescape(m[i+1])
		if err != nil {
			v = m[i+1]
		}
		vars[name] = v
	}
	return vars
}

// lookup finds what serves uri: its resource, else the first template that matches.
func (s *Server) lookup(uri string) (ResourceHandler, map[string]string) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if h := s.resources[uri]; h != nil {
		return h, nil
	}
	for _, t := range s.templates {
		if vars := t.match(uri); vars != nil {
			return t.handler, vars
		}
	}
	return nil, nil
}

// readResource answers resources/read.
func (ss *session) readResource(ctx context.Context, id, params json.RawMessage, e era) (any, *RPCError) {
	uri, rerr := uriParam(params)
	if rerr != nil {
		return nil, rerr
	}
	h, vars := ss.s.lookup(uri)
	if h == nil {
		return nil, ResourceNotFound(uri)
	}
	in, rerr := ss.inputFor(id, e, params, mcp.MethodResourcesRead, uri, nil)
	if rerr != nil {
		return nil, rerr
	}
	contents, err := protect(ss.log, fmt.Sprintf("resource %q", uri), func() ([]mcp.ResourceContents, error) {
		return h(ctx, &ResourceRequest{URI: uri, Vars: vars, Input: in})
	})
	if err != nil {
		return in.finish(nil, toRPCError(err))
	}
	res := mcp.ReadResourceResult{Contents: make([]mcp.ResourceContents, len(contents))}
	for i, c := range contents {
		if c.URI == "" {
			c.URI = uri
		}
		res.Contents[i] = c
	}
	return in.finish(res, nil)
}

// subscribe answers resources/subscribe (on) and resources/unsubscribe: the session is
// told of updates to the URIs it subscribed to, once each however often it subscribed.
func (ss *session) subscribe(params json.RawMessage, on bool) (any, *RPCError) {
	uri, rerr := uriParam(params)
	if rerr != nil {
		return nil, rerr
	}
	if h, _ := ss.s.lookup(uri); h == nil {
		return nil, ResourceNotFound(uri)
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if on {
		ss.subs[uri] = true
	} else {
		delete(ss.subs, uri)
	}
	return struct{}{}, nil
}

func uriParam(params json.RawMessage) (string, *RPCError) {
	var p mcp.ReadResourceParams
	if err := decodeParams(params, &p); err != nil {
		return "", err
	}
	if p.URI == "" {
		return "", errorf(mcp.CodeInvalidParams, "invalid params: a uri is needed")
	}
	return p.URI, nil
}

// ResourceUpdated tells the clients that subscribed to uri that the resource changed
// (notifications/resources/updated), so that they read it again: those of 2025-11-25 and
// older by resources/subscribe, those of 2026-07-28 by a subscriptions/listen naming uri,
// once on each such subscription, tagged with its id.
func (s *Server) ResourceUpdated(uri string) {
	s.mu.RLock()
	var watching []*session
	for ss := range s.sessions {
		watching = append(watching, ss)
	}
	s.mu.RUnlock()
	for _, ss := range watching {
		ss.mu.Lock()
		on := ss.subs[uri]
		ss.mu.Unlock()
		if on {
			_ = ss.notify(mcp.NotifyResourceUpdated, mcp.ResourceUpdatedParams{URI: uri})
		}
		for _, id := range ss.listening(uri) {
			_ = ss.notify(mcp.NotifyResourceUpdated, struct {
				Meta map[string]json.RawMessage `json:"_meta"`
				URI  string                     `json:"uri"`
			}{subscriptionMeta(id), uri})
		}
	}
}
