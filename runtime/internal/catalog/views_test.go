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
				"a.show":  `"ui://a/app/view.html"`,
				"b.show":  `"ui://b/app/view.html"`,
				"c.other": `"ui://c/view.html"`,
			},
			wantReads: map[string]string{
				"ui://a/app/view.html": "a ui://app/view.html",
				"ui://b/app/view.html": "b ui://app/view.html",
				"ui://app/view.html":   "",
				"ui://c/view.html":     "c ui://c/view.html",
			},
			wantClash: map[string][]string{"ui://app/view.html": {"ui://a/app/view.html", "ui://b/app/view.html"}},
			wantNotices: []string{
				`view "ui://app/view.html" of bundle "a" exposed as "ui://a/app/view.html": view "ui://app/view.html" is served by bundles a, b`,
				`view "ui://app/view.html" of bundle "b" exposed as "ui://b/app/view.html": view "ui://app/view.html" is served by bundles a, b`,
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
	page, _, err := cat.PageListed("", 0, nil, func(bundle, uri string) bool { return bundle == "a" })
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
