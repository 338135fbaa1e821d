package catalog

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/toolnode/toolnode/sdk-go/rawjson"
)

// ResourceSource is the resources and resource templates of one bundle.
type ResourceSource struct {
	Bundle    string
	Resources []json.RawMessage
	Templates []json.RawMessage
	// Views maps the ui:// URIs of the bundle's views, listed or not, to the URIs they are
	// exposed at (see Views.Of).
	Views map[string]string
}

// Resources merges resources by URI. URIs name things outside the node (files, rows,
// test://...), so they are never rewritten; when two bundles list the same URI, the bundle
// whose name sorts first serves it. Views are the exception (see Views): served by every
// bundle whose tools name them, listed or not, and namespaced when two bundles serve the
// same URI.
type Resources struct {
	resources []listed
	templates []listed
	byURI     map[string]string
	patterns  []templateRoute
	bundles   []string
	own       map[string]string   // an exposed view URI -> the URI its bundle names it, where they differ
	clashes   map[string][]string // a view URI two bundles serve -> the URIs exposed for it
}

// listed is a resource or template as listed, with the bundle serving it and its URI (or
// URI template), by which a caller's filter decides.
type listed struct {
	raw    json.RawMessage
	bundle string
	uri    string
}

type templateRoute struct {
	re     *regexp.Regexp
	bundle string
	uri    string
}

// BuildResources merges sources, which must be sorted by bundle name, and reports URIs
// listed by more than one bundle.
func BuildResources(sources []ResourceSource) (*Resources, []Notice) {
	r := &Resources{byURI: map[string]string{}}
	var notices []Notice
	for _, s := range sources {
		if len(s.Resources) > 0 || len(s.Templates) > 0 || len(s.Views) > 0 {
			r.bundles = append(r.bundles, s.Bundle)
		}
		r.addViews(s)
		for _, raw := range s.Resources {
			var res struct {
				URI string `json:"uri"`
			}
			if json.Unmarshal(raw, &res) != nil || res.URI == "" {
				notices = append(notices, Notice{Bundle: s.Bundle, Reason: "a resource without a uri was left out"})
				continue
			}
			if exposed, view := s.Views[res.URI]; view {
				// Routed by addViews; listed under the URI exposed.
				if exposed != res.URI {
					quoted, _ := json.Marshal(exposed)
					raw, _ = rawjson.SetMember(raw, "uri", quoted)
				}
				r.resources = append(r.resources, listed{raw: raw, bundle: s.Bundle, uri: res.URI})
				continue
			}
			if owner, taken := r.byURI[res.URI]; taken {
				notices = append(notices, Notice{Bundle: s.Bundle, Tool: res.URI,
					Reason: fmt.Sprintf("resource %q is already served by bundle %q", res.URI, owner)})
				continue
			}
			r.byURI[res.URI] = s.Bundle
			r.resources = append(r.resources, listed{raw: raw, bundle: s.Bundle, uri: res.URI})
		}
		for _, raw := range s.Templates {
			var t struct {
				URITemplate string `json:"uriTemplate"`
			}
			if json.Unmarshal(raw, &t) != nil || t.URITemplate == "" {
				notices = append(notices, Notice{Bundle: s.Bundle, Reason: "a resource template without a uriTemplate was left out"})
				continue
			}
			r.templates = append(r.templates, listed{raw: raw, bundle: s.Bundle, uri: t.URITemplate})
			r.patterns = append(r.patterns, templateRoute{re: templateRegexp(t.URITemplate), bundle: s.Bundle, uri: t.URITemplate})
		}
	}
	return r, notices
}

// templateRegexp matches the URIs an RFC 6570 template expands to: each {expression} stands
// for any run of characters that is not a '/' ({+x} and {#x} may hold '/' too).
func templateRegexp(tmpl string) *regexp.Regexp {
	var sb strings.Builder
	sb.WriteString("^")
	for {
		i := strings.IndexByte(tmpl, '{')
		j := strings.IndexByte(tmpl, '}')
		if i < 0 || j < i {
			sb.WriteString(regexp.QuoteMeta(tmpl))
			break
		}
		sb.WriteString(regexp.QuoteMeta(tmpl[:i]))
		expr := tmpl[i+1 : j]
		switch {
		case strings.HasPrefix(expr, "+"), strings.HasPrefix(expr, "#"):
			sb.WriteString(".*")
		case strings.HasPrefix(expr, "?"), strings.HasPrefix(expr, "&"):
			sb.WriteString(`(?:[?&].*)?`)
		default:
			sb.WriteString(`[^/?#]*`)
		}
		tmpl = tmpl[j+1:]
	}
	sb.WriteString("$")
	return regexp.MustCompile(sb.String())
}

// Route finds the bundle serving uri: the one listing it, else the first whose template
// matches it, else the only bundle offering resources at all.
func (r *Resources) Route(uri string) (string, bool) {
	if b, ok := r.byURI[uri]; ok {
		return b, true
	}
	for _, p := range r.patterns {
		if p.re.MatchString(uri) {
			return p.bundle, true
		}
	}
	if len(r.bundles) == 1 {
		return r.bundles[0], true
	}
	return "", false
}

// View finds the bundle serving uri as Route does, and the URI the bundle names it: uri
// itself but for a view exposed under a namespaced URI. A view URI two bundles serve is
// not routed: Clash names the URIs to read instead.
func (r *Resources) View(uri string) (bundle, own string, ok bool) {
	if _, clash := r.clashes[uri]; clash {
		return "", "", false
	}
	bundle, ok = r.Route(uri)
	if o, renamed := r.own[uri]; renamed && ok {
		return bundle, o, true
	}
	return bundle, uri, ok
}

// Clash returns the URIs the bundles' copies of the view uri are exposed at, when two or
// more bundles serve it; nil otherwise.
func (r *Resources) Clash(uri string) []string { return r.clashes[uri] }

// addViews routes the views of s, listed or not, by the URIs they are exposed at.
func (r *Resources) addViews(s ResourceSource) {
	for own, exposed := range s.Views {
		if _, taken := r.byURI[exposed]; taken {
			continue // a namespaced URI that another bundle names as its own: the first keeps it
		}
		r.byURI[exposed] = s.Bundle
		if exposed == own {
			continue
		}
		if r.own == nil {
			r.own, r.clashes = map[string]string{}, map[string][]string{}
		}
		r.own[exposed] = own
		r.clashes[own] = append(r.clashes[own], exposed)
		sort.Strings(r.clashes[own])
	}
}

// RouteTemplate finds the bundle that lists the template uriTemplate, for completion.
func (r *Resources) RouteTemplate(uriTemplate string) (string, bool) {
	for _, p := range r.patterns {
		if p.uri == uriTemplate {
			return p.bundle, true
		}
	}
	return r.Route(uriTemplate)
}

// Equal reports whether both list the same resources and templates.
func (r *Resources) Equal(o *Resources) bool {
	if r == nil || o == nil {
		return r == o
	}
	return rawEqual(r.resources, o.resources) && rawEqual(r.templates, o.templates)
}

func rawEqual(a, b []listed) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if string(a[i].raw) != string(b[i].raw) {
			return false
		}
	}
	return true
}

// Resources pages through the merged resources that keep accepts, by the bundle serving
// each and its URI (every resource when keep is nil).
func (r *Resources) Resources(cursor string, size int, keep func(bundle, uri string) bool) ([]json.RawMessage, string, error) {
	return pageByOffset(r.resources, cursor, size, keep)
}

// Templates pages through the merged resource templates that keep accepts, by the bundle
// serving each and its URI template (every one when keep is nil).
func (r *Resources) Templates(cursor string, size int, keep func(bundle, uri string) bool) ([]json.RawMessage, string, error) {
	return pageByOffset(r.templates, cursor, size, keep)
}

const offsetPrefix = "offset:"

// pageByOffset pages through the items keep accepts; the cursor is the offset in items past
// the page, so that pages are the same whatever keep leaves out.
func pageByOffset(items []listed, cursor string, size int, keep func(bundle, uri string) bool) ([]json.RawMessage, string, error) {
	start := 0
	if cursor != "" {
		b, err := base64.RawURLEncoding.DecodeString(cursor)
		n, convErr := strconv.Atoi(strings.TrimPrefix(string(b), offsetPrefix))
		if err != nil || convErr != nil || !strings.HasPrefix(string(b), offsetPrefix) || n < 0 {
			return nil, "", fmt.Errorf("invalid cursor %q", cursor)
		}
		start = min(n, len(items))
	}
	page := []json.RawMessage{}
	i := start
	for ; i < len(items) && (size <= 0 || len(page) < size); i++ {
		if keep == nil || keep(items[i].bundle, items[i].uri) {
			page = append(page, items[i].raw)
		}
	}
	next := ""
	if i < len(items) {
		next = base64.RawURLEncoding.EncodeToString([]byte(offsetPrefix + strconv.Itoa(i)))
	}
	return page, next, nil
}
