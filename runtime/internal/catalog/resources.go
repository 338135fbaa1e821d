package catalog

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
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
// test://...), so they are never rewritten; a URI two bundles list is served by neither,
// and reading it is an error naming both: the node cannot tell which is meant, and the
// order of bundles' names must not decide whose answer a client gets. Views are the
// exception (see Views): served by every bundle whose tools name them, listed or not,
// and namespaced when two bundles serve the same URI.
type Resources struct {
	resources []listed
	templates []listed
	byURI     map[string]string
	patterns  []templateRoute
	bundles   []string
	own       map[string]string   // an exposed view URI -> the URI its bundle names it, where they differ
	clashes   map[string][]string // a view URI two bundles serve -> the URIs exposed for it
	shared    map[string][]string // a URI two bundles list -> those bundles, sorted
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
	listers := map[string][]string{} // a plain resource's URI -> the bundles listing it
	for _, s := range sources {
		for _, raw := range s.Resources {
			var res struct {
				URI string `json:"uri"`
			}
			if json.Unmarshal(raw, &res) == nil && res.URI != "" {
				if _, view := s.Views[res.URI]; !view && !slices.Contains(listers[res.URI], s.Bundle) {
					listers[res.URI] = append(listers[res.URI], s.Bundle)
				}
			}
		}
	}
	for uri, bundles := range listers {
		if len(bundles) > 1 {
			if r.shared == nil {
				r.shared = map[string][]string{}
			}
			r.shared[uri] = bundles
		}
	}
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
				if exposed == "" {
					continue // left out (see PlanViews)
				}
				// Routed by addViews; listed under the URI exposed.
				if exposed != res.URI {
					quoted, _ := json.Marshal(exposed)
					raw, _ = rawjson.SetMember(raw, "uri", quoted)
				}
				r.resources = append(r.resources, listed{raw: raw, bundle: s.Bundle, uri: res.URI})
				continue
			}
			if bundles := r.shared[res.URI]; bundles != nil {
				notices = append(notices, Notice{Bundle: s.Bundle, Tool: res.URI, Kind: "resource",
					Reason: fmt.Sprintf("resource %q is listed by bundles %s; it is served by neither", res.URI, strings.Join(bundles, ", "))})
				continue
			}
			if _, taken := r.byURI[res.URI]; taken {
				continue // listed twice by the bundle
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

// Route finds the bundle serving uri: the one listing it, else the one whose templates
// match it, else the only bundle offering resources at all. A URI that two bundles list,
// or two bundles' templates match, is served by neither (see Shared), nor one under the
// node's ui://toolnode/ but by its exact URI.
func (r *Resources) Route(uri string) (string, bool) {
	if b, ok := r.byURI[uri]; ok {
		return b, true
	}
	if r.shared[uri] != nil || isNodeView(uri) {
		return "", false
	}
	if matched := r.matching(uri); len(matched) > 0 {
		return onlyOne(matched)
	}
	if len(r.bundles) == 1 {
		return r.bundles[0], true
	}
	return "", false
}

// onlyOne returns the bundle of bundles when it holds one; none for two or more.
func onlyOne(bundles []string) (string, bool) {
	if len(bundles) != 1 {
		return "", false
	}
	return bundles[0], true
}

// matching returns the bundles whose templates match uri, in the order of their names.
func (r *Resources) matching(uri string) []string {
	var bundles []string
	for _, p := range r.patterns {
		if p.re.MatchString(uri) && !slices.Contains(bundles, p.bundle) {
			bundles = append(bundles, p.bundle)
		}
	}
	return bundles
}

// Shared returns the bundles that all list uri (a URI, or a template for completion), or
// whose templates all match it, when two or more do: the node serves it by none of them.
// nil otherwise.
func (r *Resources) Shared(uri string) []string {
	if b := r.shared[uri]; b != nil {
		return b
	}
	if owners := r.listingTemplate(uri); len(owners) > 0 {
		if len(owners) > 1 {
			return owners
		}
		return nil
	}
	if _, listed := r.byURI[uri]; listed || isNodeView(uri) {
		return nil
	}
	if matched := r.matching(uri); len(matched) > 1 {
		return matched
	}
	return nil
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
		if exposed == "" {
			continue // left out (see PlanViews)
		}
		// No other bundle has exposed: a namespaced URI is under ui://toolnode/, where no
		// bundle's own view is kept.
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

// RouteTemplate finds the bundle that lists the template uriTemplate, for completion; a
// template two bundles list is served by neither (see Shared).
func (r *Resources) RouteTemplate(uriTemplate string) (string, bool) {
	if owners := r.listingTemplate(uriTemplate); len(owners) > 0 {
		return onlyOne(owners)
	}
	return r.Route(uriTemplate)
}

// listingTemplate returns the bundles that list the template uriTemplate.
func (r *Resources) listingTemplate(uriTemplate string) []string {
	var bundles []string
	for _, p := range r.patterns {
		if p.uri == uriTemplate && !slices.Contains(bundles, p.bundle) {
			bundles = append(bundles, p.bundle)
		}
	}
	return bundles
}

// Listed calls each with every URI routed by itself (a resource listed, or a view at the
// URI exposed) and the bundle serving it.
func (r *Resources) Listed(each func(uri, bundle string)) {
	for uri, b := range r.byURI {
		each(uri, b)
	}
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
