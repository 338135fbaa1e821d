package catalog

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// viewTool is a tool object whose _meta names a view and carries members the node must
// keep (csp-like extras, the deprecated flat key).
func viewTool(name, uri, visibility string) json.RawMessage {
	vis := ""
	if visibility != "" {
		vis = `,"visibility":` + visibility
	}
	return json.RawMessage(fmt.Sprintf(`{"name":%q,"inputSchema":{"type":"object"},"_meta":{"ui":{"resourceUri":%q%s,"x":1},"ui/resourceUri":%q,"other":"<kept>"}}`,
		name, uri, vis, uri))
}

func viewResource(uri string) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"uri":%q,"name":"v","mimeType":"text/html;profile=mcp-app","_meta":{"ui":{"csp":{"connectDomains":[]},"prefersBorder":true}}}`, uri))
}

// build merges tools and resources of bundles as the node does: views planned first.
func build(t *testing.T, tools map[string][]json.RawMessage, resources map[string][]json.RawMessage) (*Catalog, *Resources, []string) {
	t.Helper()
	var names []string
	for b := range tools {
		names = append(names, b)
	}
	for b := range resources {
		if _, ok := tools[b]; !ok {
			names = append(names, b)
		}
	}
	sort.Strings(names)
	var vs []ViewSource
	for _, b := range names {
		vs = append(vs, ViewSource{Bundle: b, Tools: tools[b], Resources: resources[b]})
	}
	views, notices := PlanViews(vs)
	var ts []Source
	var rs []ResourceSource
	for _, b := range names {
		ts = append(ts, Source{Bundle: b, Tools: tools[b], Views: views.Of(b)})
		rs = append(rs, ResourceSource{Bundle: b, Resources: resources[b], Views: views.Of(b)})
	}
	cat, _ := Build(ts)
	res, _ := BuildResources(rs)
	var msgs []string
	for _, n := range notices {
		msgs = append(msgs, n.String())
	}
	return cat, res, msgs
}

func member(t *testing.T, raw json.RawMessage, path ...string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return "<absent>"
		}
		if v, ok = m[p]; !ok {
			return "<absent>"
		}
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func TestViewsKeepTheirURIsUnlessTwoBundlesShareOne(t *testing.T) {
	tests := []struct {
		name      string
		tools     map[string][]json.RawMessage
		resources map[string][]json.RawMessage
		// the resourceUri each listed tool shows, by exposed name
		wantToolViews map[string]string
		// every URI read, to the bundle and own URI it reaches ("" when refused)
		wantReads   map[string]string
		wantClash   map[string][]string
		wantNotices []string
	}{
		{
			name:          "one bundle: URIs as the bundle names them, listed or not",
			tools:         map[string][]json.RawMessage{"clock": {viewTool("get-time", "ui://get-time/app.html", "")}},
			resources:     map[string][]json.RawMessage{"clock": {viewResource("ui://clock/listed.html")}},
			wantToolViews: map[string]string{"clock.get-time": `"ui://get-time/app.html"`},
			wantReads: map[string]string{
				"ui://get-time/app.html": "clock ui://get-time/app.html",
				"ui://clock/listed.html": "clock ui://clock/listed.html",
			},
		},
		{
			name: "two bundles, one URI: each namespaced, the shared URI refused naming both",
			tools: map[string][]json.RawMessage{
				"a": {viewTool("show", "ui://app/view.html", "")},
				"b": {viewTool("show", "ui://app/view.html", "")},
				"c": {viewTool("other", "ui://c/view.html", "")},
			},
			resources: map[string][]json.RawMessage{"b": {viewResource("ui://app/view.html")}},
			wantToolViews: map[string]string{
				"a.show":  `"ui://toolnode/a/app/view.html"`,
				"b.show":  `"ui://toolnode/b/app/view.html"`,
				"c.other": `"ui://c/view.html"`,
			},
			wantReads: map[string]string{
				"ui://toolnode/a/app/view.html": "a ui://app/view.html",
				"ui://toolnode/b/app/view.html": "b ui://app/view.html",
				"ui://app/view.html":            "",
				"ui://c/view.html":              "c ui://c/view.html",
			},
			wantClash: map[string][]string{"ui://app/view.html": {"ui://toolnode/a/app/view.html", "ui://toolnode/b/app/view.html"}},
			wantNotices: []string{
				`view "ui://app/view.html" of bundle "a" exposed as "ui://toolnode/a/app/view.html": view "ui://app/view.html" is served by bundles a, b`,
				`view "ui://app/view.html" of bundle "b" exposed as "ui://toolnode/b/app/view.html": view "ui://app/view.html" is served by bundles a, b`,
			},
		},
		{
			// Bundle aa names bank's view, so that bank's is moved, and serves where it
			// would have been moved to under the old rule (ui://bank/bank/...) and under
			// the node's (ui://toolnode/bank/...): bank's view is read as bank's only.
			name: "a bundle cannot serve the URI another's view is moved to",
			tools: map[string][]json.RawMessage{
				"aa":   {viewTool("take", "ui://bank/v.html", ""), viewTool("old", "ui://bank/bank/v.html", ""), viewTool("new", "ui://toolnode/bank/bank/v.html", "")},
				"bank": {viewTool("show", "ui://bank/v.html", "")},
			},
			resources: map[string][]json.RawMessage{"aa": {viewResource("UI://TOOLNODE/bank/bank/v.html")}},
			wantToolViews: map[string]string{
				"aa.take":   `"ui://toolnode/aa/bank/v.html"`,
				"aa.old":    `"ui://bank/bank/v.html"`,
				"aa.new":    "<absent>",
				"bank.show": `"ui://toolnode/bank/bank/v.html"`,
			},
			wantReads: map[string]string{
				"ui://toolnode/bank/bank/v.html": "bank ui://bank/v.html",
				"UI://TOOLNODE/bank/bank/v.html": "",
				"ui://toolnode/aa/bank/v.html":   "aa ui://bank/v.html",
				"ui://bank/bank/v.html":          "aa ui://bank/bank/v.html",
				"ui://bank/v.html":               "",
			},
			wantNotices: []string{
				`view "UI://TOOLNODE/bank/bank/v.html" of bundle "aa" left out: URIs under ui://toolnode/ are the node's, where it puts views two bundles serve`,
				`view "ui://toolnode/bank/bank/v.html" of bundle "aa" left out: URIs under ui://toolnode/ are the node's, where it puts views two bundles serve`,
				`view "ui://bank/v.html" of bundle "aa" exposed as "ui://toolnode/aa/bank/v.html": view "ui://bank/v.html" is served by bundles aa, bank`,
				`view "ui://bank/v.html" of bundle "bank" exposed as "ui://toolnode/bank/bank/v.html": view "ui://bank/v.html" is served by bundles aa, bank`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cat, res, notices := build(t, tt.tools, tt.resources)
			got := map[string]string{}
			for _, e := range cat.Entries() {
				got[e.Name] = member(t, e.JSON, "_meta", "ui", "resourceUri")
				if flat := member(t, e.JSON, "_meta", "ui/resourceUri"); flat != got[e.Name] {
					t.Errorf("%s: deprecated ui/resourceUri %s, resourceUri %s", e.Name, flat, got[e.Name])
				}
				if other := member(t, e.JSON, "_meta", "other"); other != `"\u003ckept\u003e"` {
					t.Errorf("%s: _meta.other became %s", e.Name, other)
				}
			}
			// Whatever was renamed, a host reading a tool's view reads its bundle's.
			for _, e := range cat.Entries() {
				if uri := strings.Trim(got[e.Name], `"`); e.View != "" {
					if b, own, ok := res.View(uri); !ok || b != e.Bundle || own != e.View {
						t.Errorf("%s names view %s, which reads %q %q (%v), not its bundle's %q", e.Name, uri, b, own, ok, e.View)
					}
				}
			}
			if diff := cmp.Diff(tt.wantToolViews, got); diff != "" {
				t.Errorf("tool views (-want +got):\n%s", diff)
			}
			for uri, want := range tt.wantReads {
				b, own, ok := res.View(uri)
				gotRead := ""
				if ok {
					gotRead = b + " " + own
				}
				if gotRead != want {
					t.Errorf("read %s: got %q, want %q", uri, gotRead, want)
				}
			}
			for uri, want := range tt.wantClash {
				if diff := cmp.Diff(want, res.Clash(uri)); diff != "" {
					t.Errorf("clash of %s (-want +got):\n%s", uri, diff)
				}
			}
			if diff := cmp.Diff(tt.wantNotices, notices); diff != "" {
				t.Errorf("notices (-want +got):\n%s", diff)
			}
			// A listed view is listed under the URI exposed, its _meta untouched.
			page, _, err := res.Resources("", 0, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range page {
				uri := strings.Trim(member(t, r, "uri"), `"`)
				if b, _, ok := res.View(uri); !ok {
					t.Errorf("listed %s, which does not read (bundle %q)", uri, b)
				}
				if csp := member(t, r, "_meta", "ui", "prefersBorder"); csp != "true" {
					t.Errorf("listed %s lost its _meta.ui: %s", uri, r)
				}
			}
		})
	}
}

func TestAppOnlyToolsAreCalledButNotListed(t *testing.T) {
	cat, _, _ := build(t, map[string][]json.RawMessage{
		"a": {viewTool("show", "ui://a/v", `["model","app"]`), viewTool("refresh", "ui://a/v", `["app"]`), viewTool("none", "ui://a/v", `[]`)},
		"b": {viewTool("plain", "ui://b/v", "")},
	}, nil)
	page, _, err := cat.Page("", 0)
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, raw := range page {
		listed = append(listed, member(t, raw, "name"))
	}
	if diff := cmp.Diff([]string{`"a.show"`, `"b.plain"`}, listed); diff != "" {
		t.Errorf("listed (-want +got):\n%s", diff)
	}
	for _, name := range []string{"a.refresh", "a.none"} {
		if e, ok := cat.Lookup(name); !ok || !e.AppOnly {
			t.Errorf("%s: found %v, app only %v", name, ok, e.AppOnly)
		}
	}
}

func TestViewsHiddenFromCallersWhoMayNotReadThem(t *testing.T) {
	cat, _, _ := build(t, map[string][]json.RawMessage{
		"a": {viewTool("show", "ui://a/v", "")},
		"b": {viewTool("show", "ui://b/v", ""), json.RawMessage(`{"name":"plain","inputSchema":{"type":"object"}}`)},
	}, nil)
	page, _, err := cat.PageListed("", 0, nil, func(bundle, uri string) bool { return bundle == "a" }, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, raw := range page {
		got[member(t, raw, "name")] = member(t, raw, "_meta", "ui", "resourceUri") + " " + member(t, raw, "_meta", "ui/resourceUri") +
			" " + member(t, raw, "_meta", "ui", "x")
	}
	want := map[string]string{
		`"a.show"`:  `"ui://a/v" "ui://a/v" 1`,
		`"b.show"`:  `<absent> <absent> 1`,
		`"b.plain"`: `<absent> <absent> <absent>`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("listed views (-want +got):\n%s", diff)
	}
}

func TestByOwnNameFindsToolsOfBundlesServingViews(t *testing.T) {
	cat, _, _ := build(t, map[string][]json.RawMessage{
		"a":     {viewTool("show", "ui://a/v", ""), viewTool("refresh", "ui://a/v", `["app"]`)},
		"b":     {viewTool("show", "ui://b/v", "")},
		"plain": tools("show", "refresh", "only"),
	}, nil)
	names := func(es []Entry) []string {
		var out []string
		for _, e := range es {
			out = append(out, e.Name)
		}
		return out
	}
	for name, want := range map[string][]string{
		"show":    {"a.show", "b.show"},
		"refresh": {"a.refresh"},
		"only":    nil,
	} {
		if diff := cmp.Diff(want, names(cat.ByOwnName(name))); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
}

// A URI two bundles list, or two bundles' templates match, is served by neither, whatever
// their names' order; the node's ui://toolnode/ is never served through a template.
func TestAResourceTwoBundlesClaimIsServedByNeither(t *testing.T) {
	res := func(uri string) json.RawMessage { return json.RawMessage(fmt.Sprintf(`{"uri":%q,"name":"r"}`, uri)) }
	tmpl := func(t string) json.RawMessage {
		return json.RawMessage(fmt.Sprintf(`{"uriTemplate":%q,"name":"t"}`, t))
	}
	r, notices := BuildResources([]ResourceSource{
		{Bundle: "aa", Resources: []json.RawMessage{res("file:///bank/config"), res("file:///aa/own")},
			Templates: []json.RawMessage{tmpl("file:///{+path}"), tmpl("ui://{+x}"), tmpl("db://{table}")}},
		{Bundle: "bank", Resources: []json.RawMessage{res("file:///bank/config")}, Templates: []json.RawMessage{tmpl("file:///bank/{name}"), tmpl("db://{table}")},
			Views: map[string]string{"ui://bank/v.html": "ui://bank/v.html"}},
		{Bundle: "cc", Views: map[string]string{"ui://cc/v.html": "ui://cc/v.html"}},
	})
	for uri, want := range map[string]string{
		"file:///bank/config":       "", // listed by both
		"file:///bank/other":        "", // matched by both templates
		"file:///aa/own":            "aa",
		"file:///elsewhere":         "aa",
		"ui://bank/v.html":          "bank",
		"ui://toolnode/bank/v.html": "", // the node's: never through a template
	} {
		if got, _ := r.Route(uri); got != want {
			t.Errorf("route %s: %q, want %q", uri, got, want)
		}
	}
	for uri, want := range map[string][]string{
		"file:///bank/config":       {"aa", "bank"},
		"file:///bank/other":        {"aa", "bank"},
		"db://{table}":              {"aa", "bank"},
		"file:///aa/own":            nil,
		"ui://toolnode/bank/v.html": nil,
	} {
		if diff := cmp.Diff(want, r.Shared(uri)); diff != "" {
			t.Errorf("shared %s (-want +got):\n%s", uri, diff)
		}
	}
	if got, _ := r.RouteTemplate("db://{table}"); got != "" {
		t.Errorf("a template two bundles list completes through %q", got)
	}
	listed, _, _ := r.Resources("", 0, nil)
	for _, raw := range listed {
		if strings.Contains(string(raw), "file:///bank/config") {
			t.Errorf("listed %s, which neither bundle serves", raw)
		}
	}
	if len(notices) != 2 || !strings.Contains(notices[0].String(), "listed by bundles aa, bank") {
		t.Errorf("notices: %v", notices)
	}
}

// Each form renders the tool a caller may not read the view of as it renders the tool
// with its view: a lowered schema and the underscore name in both, the schema kept and the
// catalog's name where the form does not ask for them.
func TestFormsRenderToolsWithAndWithoutTheirView(t *testing.T) {
	anyOf := json.RawMessage(`{"name":"pick","inputSchema":{"type":"object","anyOf":[{"required":["a"]}]},"_meta":{"ui":{"resourceUri":"ui://a/v"}}}`)
	cat, _, _ := build(t, map[string][]json.RawMessage{"a": {anyOf, viewTool("show", "ui://a/v", "")}}, nil)
	for _, tc := range []struct {
		form       Form
		pick, show string
		lowered    bool
	}{
		{0, `"a.pick"`, `"a.show"`, false},
		{FormHosts, `"a.pick"`, `"a.show"`, true},
		{FormStrict, `"a_pick"`, `"a_show"`, false},
		{FormHosts | FormStrict, `"a_pick"`, `"a_show"`, true},
	} {
		for _, readable := range []bool{true, false} {
			page, _, err := cat.PageListed("", 0, nil, func(string, string) bool { return readable }, tc.form)
			if err != nil {
				t.Fatal(err)
			}
			if len(page) != 2 {
				t.Fatalf("form %d: %d tools", tc.form, len(page))
			}
			var got []string
			for _, raw := range page {
				got = append(got, member(t, raw, "name"))
			}
			if diff := cmp.Diff([]string{tc.pick, tc.show}, got); diff != "" {
				t.Errorf("form %d, view readable %v: names (-want +got):\n%s", tc.form, readable, diff)
			}
			if lowered := member(t, page[0], "inputSchema", "anyOf") == "<absent>"; lowered != tc.lowered {
				t.Errorf("form %d, view readable %v: schema lowered %v: %s", tc.form, readable, lowered, page[0])
			}
			wantView := `"ui://a/v"`
			if !readable {
				wantView = "<absent>"
			}
			for _, raw := range page {
				if got := member(t, raw, "_meta", "ui", "resourceUri"); got != wantView {
					t.Errorf("form %d, view readable %v: view %s: %s", tc.form, readable, got, raw)
				}
			}
		}
	}
}
