package catalog

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func tools(names ...string) []json.RawMessage {
	var out []json.RawMessage
	for _, n := range names {
		out = append(out, json.RawMessage(fmt.Sprintf(`{"name":%q,"inputSchema":{"type":"object","$defs":{"x":{}}},"title":"t"}`, n)))
	}
	return out
}

func TestBuild(t *testing.T) {
	long := strings.Repeat("x", 127)
	tests := []struct {
		name        string
		sources     []Source
		want        map[string]string // exposed name -> bundle
		wantNotices []string
	}{
		{
			name:    "seat verbs keep their names, others are prefixed",
			sources: []Source{{Bundle: "go", Seats: []string{"node-lamp"}, Tools: tools("greet", "node-lamp.on", "other.verb")}},
			want:    map[string]string{"go.greet": "go", "node-lamp.on": "go", "go.other.verb": "go"},
		},
		{
			name: "first bundle by name wins a seat verb; the others fall back to prefixed names",
			sources: []Source{
				{Bundle: "python", Seats: []string{"node-lamp"}, Tools: tools("node-lamp.on")},
				{Bundle: "c", Seats: []string{"node-lamp"}, Tools: tools("node-lamp.on")},
				{Bundle: "go", Seats: []string{"node-lamp"}, Tools: tools("node-lamp.on")},
			},
			want: map[string]string{"node-lamp.on": "c", "go.node-lamp.on": "go", "python.node-lamp.on": "python"},
			wantNotices: []string{
				`tool "node-lamp.on" of bundle "go" exposed as "go.node-lamp.on": name "node-lamp.on" is served by bundle "c", which sorts first`,
				`tool "node-lamp.on" of bundle "python" exposed as "python.node-lamp.on": name "node-lamp.on" is served by bundle "c", which sorts first`,
			},
		},
		{
			name: "a bundle's prefixed names are its own, even against a seat of that name",
			sources: []Source{
				{Bundle: "node-lamp", Tools: tools("on")},
				{Bundle: "z", Seats: []string{"node-lamp"}, Tools: tools("node-lamp.on")},
			},
			want:        map[string]string{"node-lamp.on": "node-lamp", "z.node-lamp.on": "z"},
			wantNotices: []string{`tool "node-lamp.on" of bundle "z" exposed as "z.node-lamp.on": name "node-lamp.on" belongs to bundle "node-lamp"`},
		},
		{
			name: "a bundle without prefix cannot take another bundle's name",
			sources: []Source{
				{Bundle: "go", Tools: tools("greet")},
				{Bundle: "thief", NoPrefix: true, Tools: tools("go.greet", "go.other", "greet")},
			},
			want: map[string]string{"go.greet": "go", "thief.go.greet": "thief", "thief.go.other": "thief", "greet": "thief"},
			wantNotices: []string{
				`tool "go.greet" of bundle "thief" exposed as "thief.go.greet": name "go.greet" belongs to bundle "go"`,
				`tool "go.other" of bundle "thief" exposed as "thief.go.other": name "go.other" belongs to bundle "go"`,
			},
		},
		{
			name: "the node's namespace is its own",
			sources: []Source{
				{Bundle: "(toolnode)", Namespace: "toolnode", NoPrefix: true, Tools: tools("toolnode.status")},
				{Bundle: "a", NoPrefix: true, Tools: tools("toolnode.search")},
			},
			want:        map[string]string{"toolnode.status": "(toolnode)", "a.toolnode.search": "a"},
			wantNotices: []string{`tool "toolnode.search" of bundle "a" exposed as "a.toolnode.search": name "toolnode.search" belongs to bundle "(toolnode)"`},
		},
		{
			name: "a bundle called toolnode shares the node's namespace, and the node's claims win",
			sources: []Source{
				{Bundle: "(toolnode)", Namespace: "toolnode", NoPrefix: true, Tools: tools("toolnode.status")},
				{Bundle: "toolnode", Tools: tools("status", "go.greet")},
			},
			want:        map[string]string{"toolnode.status": "(toolnode)", "toolnode.go.greet": "toolnode"},
			wantNotices: []string{`tool "status" of bundle "toolnode" left out: name "toolnode.status" is already served by bundle "(toolnode)"`},
		},
		{
			name: "a source whose name is no bundle name puts nothing under another's",
			sources: []Source{
				{Bundle: "pub", Tools: tools("echo")},
				{Bundle: "pub.x", Tools: tools("steal")},
				{Bundle: "pub.y", NoPrefix: true, Tools: tools("pub.z")},
				{Bundle: "", Tools: tools("e")},
				{Bundle: "x*", Tools: tools("w")},
				{Bundle: "y>", Tools: tools("w")},
				{Bundle: "a b", Tools: tools("w")},
			},
			want: map[string]string{"pub.echo": "pub"},
			wantNotices: []string{
				`bundle "" left out: not a bundle name (1 to 64 of A-Z a-z 0-9 _ -, no dots)`,
				`bundle "a b" left out: not a bundle name (1 to 64 of A-Z a-z 0-9 _ -, no dots)`,
				`bundle "pub.x" left out: not a bundle name (1 to 64 of A-Z a-z 0-9 _ -, no dots)`,
				`bundle "pub.y" left out: not a bundle name (1 to 64 of A-Z a-z 0-9 _ -, no dots)`,
				`bundle "x*" left out: not a bundle name (1 to 64 of A-Z a-z 0-9 _ -, no dots)`,
				`bundle "y>" left out: not a bundle name (1 to 64 of A-Z a-z 0-9 _ -, no dots)`,
			},
		},
		{
			name: "a bundle listing no tools still owns its namespace",
			sources: []Source{
				{Bundle: "pub"},
				{Bundle: "thief", NoPrefix: true, Tools: tools("pub.secret")},
				{Bundle: "seated", Seats: []string{"pub"}, Tools: tools("pub.on")},
			},
			want: map[string]string{"thief.pub.secret": "thief", "seated.pub.on": "seated"},
			wantNotices: []string{
				`tool "pub.on" of bundle "seated" exposed as "seated.pub.on": name "pub.on" belongs to bundle "pub"`,
				`tool "pub.secret" of bundle "thief" exposed as "thief.pub.secret": name "pub.secret" belongs to bundle "pub"`,
			},
		},
		{
			name:    "a name listed twice by one bundle is kept once, the first",
			sources: []Source{{Bundle: "b", Tools: append(tools("x", "y"), json.RawMessage(`{"name":"x","title":"second"}`))}},
			want:    map[string]string{"b.x": "b", "b.y": "b"},
			wantNotices: []string{
				`tool "x" of bundle "b" left out: listed twice by the bundle; the first is kept`,
			},
		},
		{
			name: "a bundle without prefix keeps its names unless they collide",
			sources: []Source{
				{Bundle: "conf", NoPrefix: true, Tools: tools("test_simple_text", "greet")},
				{Bundle: "b", NoPrefix: true, Tools: tools("greet")},
			},
			want: map[string]string{"test_simple_text": "conf", "greet": "b", "conf.greet": "conf"},
			wantNotices: []string{
				`tool "greet" of bundle "conf" exposed as "conf.greet": name "greet" is served by bundle "b", which sorts first`,
			},
		},
		{
			name:    "names breaking the rule and names grown too long are refused",
			sources: []Source{{Bundle: "b", Tools: tools("ok", "bad name", "", long)}},
			want:    map[string]string{"b.ok": "b"},
			wantNotices: []string{
				`tool "bad name" of bundle "b" left out: name breaks the spec's rule (1 to 128 of A-Z a-z 0-9 _ - .)`,
				`tool "" of bundle "b" left out: name breaks the spec's rule (1 to 128 of A-Z a-z 0-9 _ - .)`,
				fmt.Sprintf(`tool %q of bundle "b" left out: exposed name "b.%s" is longer than 128 characters`, long, long),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The outcome must not depend on the order of the sources.
			for _, order := range [][]Source{tt.sources, reversed(tt.sources)} {
				cat, notices := Build(order)
				got := map[string]string{}
				for _, e := range cat.Entries() {
					got[e.Name] = e.Bundle
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("entries (-want +got):\n%s", diff)
				}
				var texts []string
				for _, n := range notices {
					texts = append(texts, n.String())
				}
				if diff := cmp.Diff(tt.wantNotices, texts); diff != "" {
					t.Errorf("notices (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func reversed(s []Source) []Source {
	out := make([]Source, len(s))
	for i, v := range s {
		out[len(s)-1-i] = v
	}
	return out
}

func TestRenameKeepsEverythingElse(t *testing.T) {
	raw := json.RawMessage(`{"name":"greet","inputSchema":{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","additionalProperties":false},"icons":[{"src":"x"}],"annotations":{"readOnlyHint":true}}`)
	cat, _ := Build([]Source{{Bundle: "b", Tools: []json.RawMessage{raw}}})
	e, ok := cat.Lookup("b.greet")
	if !ok {
		t.Fatal("b.greet missing")
	}
	var got, want map[string]any
	json.Unmarshal(e.JSON, &got)
	json.Unmarshal(raw, &want)
	want["name"] = "b.greet"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tool (-want +got):\n%s", diff)
	}
	if e.Tool != "greet" {
		t.Errorf("routes to %q, want greet", e.Tool)
	}
}

func TestPage(t *testing.T) {
	var names []string
	for i := range 25 {
		names = append(names, fmt.Sprintf("t%02d", i))
	}
	cat, _ := Build([]Source{{Bundle: "b", Tools: tools(names...)}})
	var all []string
	cursor, pages := "", 0
	for {
		page, next, err := cat.Page(cursor, 10)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, raw := range page {
			var tl struct{ Name string }
			json.Unmarshal(raw, &tl)
			all = append(all, tl.Name)
		}
		if next == "" {
			break
		}
		cursor = next
	}
	if pages != 3 || len(all) != 25 || all[0] != "b.t00" || all[24] != "b.t24" {
		t.Errorf("got %d pages with %v", pages, all)
	}
	if _, _, err := cat.Page("garbage!", 10); err == nil {
		t.Error("a malformed cursor was accepted")
	}
	if full, next, _ := cat.Page("", 0); len(full) != 25 || next != "" {
		t.Errorf("unpaginated: %d tools, next %q", len(full), next)
	}
}

func BenchmarkLookup(b *testing.B) {
	var srcs []Source
	for i := range 20 {
		var names []string
		for j := range 100 {
			names = append(names, fmt.Sprintf("tool%d", j))
		}
		srcs = append(srcs, Source{Bundle: fmt.Sprintf("bundle%d", i), Tools: tools(names...)})
	}
	cat, _ := Build(srcs)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, ok := cat.Lookup("bundle7.tool42"); !ok {
			b.Fatal("missing")
		}
	}
}

func TestStrictNames(t *testing.T) {
	long := "bundle." + strings.Repeat("very_long_tool_name_", 4)
	cat, _ := Build([]Source{
		{Bundle: "go", Seats: []string{"node-lamp"}, Tools: tools("node-lamp.on", "greet", "a_b", "a.b")},
		{Bundle: "bundle", Tools: tools(strings.TrimPrefix(long, "bundle."))},
	})
	m := cat.Strict()
	strict := regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	seen := map[string]string{}
	for _, e := range cat.Entries() {
		r := m.Render(e.Name)
		if !strict.MatchString(r) {
			t.Errorf("%q renders as %q, which strict clients refuse", e.Name, r)
		}
		if other, dup := seen[r]; dup {
			t.Errorf("%q and %q both render as %q", e.Name, other, r)
		}
		seen[r] = e.Name
		if back, ok := m.Canonical(r); !ok || back != e.Name {
			t.Errorf("%q maps back to %q, want %q", r, back, e.Name)
		}
	}
	if got := m.Render("node-lamp.on"); got != "node-lamp_on" {
		t.Errorf("node-lamp.on renders as %q", got)
	}
	// Stable across builds: the same catalog renders the same way.
	again, _ := Build([]Source{{Bundle: "bundle", Tools: tools(strings.TrimPrefix(long, "bundle."))}})
	if a, b := m.Render(long), again.Strict().Render(long); a != b {
		t.Errorf("unstable rendering: %q then %q", a, b)
	}
}

func TestTheFirstOfTwiceListedToolsIsKept(t *testing.T) {
	cat, _ := Build([]Source{{Bundle: "b", Tools: []json.RawMessage{
		json.RawMessage(`{"name":"x","title":"first"}`), json.RawMessage(`{"name":"x","title":"second"}`)}}})
	e, ok := cat.Lookup("b.x")
	if !ok || !strings.Contains(string(e.JSON), `"first"`) || cat.Len() != 1 {
		t.Errorf("got %s (%v), %d tools; want the first x only", e.JSON, ok, cat.Len())
	}
}

// Adding or removing a bundle whose names do not clash with others' moves no other tool's
// rendered name; one whose names do clash moves only the names it clashes with.
func TestStrictNamesStayWhenBundlesComeAndGo(t *testing.T) {
	long := strings.Repeat("a_rather_long_tool_name_", 4)
	base := []Source{
		{Bundle: "go", Seats: []string{"node-lamp"}, Tools: tools("node-lamp.on", "greet", "a_b", "a.b")},
		{Bundle: "meos", Tools: tools("tpoint_length", "speed", long)},
	}
	rendered := func(srcs []Source) map[string]string {
		cat, _ := Build(srcs)
		out := map[string]string{}
		for _, e := range cat.Entries() {
			out[e.Name] = cat.Strict().Render(e.Name)
		}
		return out
	}
	before := rendered(base)
	moved := func(after map[string]string) []string {
		var out []string
		for name, r := range before {
			if got, ok := after[name]; ok && got != r {
				out = append(out, name+": "+r+" -> "+got)
			}
		}
		sort.Strings(out)
		return out
	}
	added := rendered(append(slices.Clone(base), Source{Bundle: "extra", Tools: tools("greet", "tpoint_length", long)}))
	if m := moved(added); len(m) > 0 {
		t.Errorf("adding a bundle whose names do not clash moved %v", m)
	}
	if added["extra.greet"] != "extra_greet" {
		t.Errorf("extra.greet renders as %q", added["extra.greet"])
	}
	removed := rendered(base[:1])
	if m := moved(removed); len(m) > 0 {
		t.Errorf("removing a bundle moved %v", m)
	}
	// meos_tpoint.length and meos.tpoint_length share the form meos_tpoint_length: both are
	// hashed, and no other name moves.
	clash := rendered(append(slices.Clone(base), Source{Bundle: "meos_tpoint", Tools: tools("length", "speed")}))
	m := moved(clash)
	if len(m) != 1 || !strings.HasPrefix(m[0], "meos.tpoint_length:") {
		t.Errorf("a clashing bundle moved %v; want meos.tpoint_length alone", m)
	}
	if r := before["meos."+long]; r == "" || len(r) > StrictNameMax {
		t.Errorf("meos.%s renders as %q", long, before["meos."+long])
	}
}

// Find gives the entry Lookup gives, the catalog's own (a call keeps a pointer to it, not a
// copy), and nil for a name the catalog does not hold.
func TestFindIsLookupWithoutACopy(t *testing.T) {
	cat, _ := Build([]Source{{Bundle: "b", Tools: []json.RawMessage{json.RawMessage(`{"name":"greet","inputSchema":{"type":"object"}}`)}}})
	want, _ := cat.Lookup("b.greet")
	got := cat.Find("b.greet")
	if got == nil || got.Name != want.Name || got.Bundle != want.Bundle || got.Tool != want.Tool || string(got.JSON) != string(want.JSON) {
		t.Fatalf("Find(b.greet) = %+v, want %+v", got, want)
	}
	if again := cat.Find("b.greet"); again != got {
		t.Error("Find made a copy of the entry")
	}
	if e := cat.Find("b.nope"); e != nil {
		t.Errorf("Find(b.nope) = %+v, want nil", e)
	}
}
