package search

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/toolnode/toolnode/runtime/internal/catalog"
)

func TestTokens(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"ever_within_distance", []string{"ever", "within", "distanc"}},
		{"node-lamp.status", []string{"nod", "lamp", "status"}},
		{"getHTTPServerStatus", []string{"http", "server", "status"}},
		{"tpoint2d", []string{"tpoint", "2", "d"}},
		{"Points, lines and polygons", []string{"point", "lin", "polygon"}},
		{"stopped stopping stops", []string{"stop", "stop", "stop"}},
		{"entries entry", []string{"entri", "entri"}},
		{"boxes box", []string{"box", "box"}},
		{"simplify simplified simplifies", []string{"simplifi", "simplifi", "simplifi"}},
		{"locate located", []string{"locat", "locat"}},
		{"status class axis classes", []string{"status", "clas", "axis", "clas"}},
		{"how do I get the speed", []string{"speed"}},
		{"speeds seeds", []string{"speed", "seed"}},
		{"  --  ", nil},
		{"Größe straße", []string{"größe", "straße"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, Tokens(tt.in)); diff != "" {
			t.Errorf("Tokens(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

func tool(name, bundle, title, desc string, params map[string]string) Tool {
	props := map[string]any{}
	for p, d := range params {
		props[p] = map[string]any{"type": "string", "description": d}
	}
	def := map[string]any{"name": name, "description": desc,
		"inputSchema": map[string]any{"type": "object", "properties": props}}
	if title != "" {
		def["title"] = title
	}
	b, _ := json.Marshal(def)
	return Tool{Name: name, Bundle: bundle, JSON: b}
}

func names(r Results) []string {
	var out []string
	for _, h := range r.Results {
		out = append(out, h.Name)
	}
	return out
}

func smallCatalog() *Index {
	return Build([]Tool{
		tool("geo.buffer", "geo", "Buffer", "Grow a geometry by a distance.", map[string]string{"distance": "how far"}),
		tool("geo.area", "geo", "Area", "Area of a polygon.", nil),
		tool("files.read_file", "files", "", "Read a file from disk.", map[string]string{"path": "file path"}),
		tool("files.list_directory", "files", "", "List the entries of a folder.", map[string]string{"path": "folder path"}),
		tool("mail.send", "mail", "Send mail", "Send an email.", map[string]string{"recipient_address": "who receives the message"}),
		{Name: "broken.tool", Bundle: "broken", JSON: json.RawMessage(`not json`)},
	})
}

func TestSearch(t *testing.T) {
	ix := smallCatalog()
	allowGeo := func(name string) bool { return name != "geo.area" }
	tests := []struct {
		name      string
		q         Query
		want      []string
		truncated bool
	}{
		{"word in the description", Query{Text: "polygon"}, []string{"geo.area"}, false},
		{"plural and snake_case name", Query{Text: "directories"}, []string{"files.list_directory"}, false},
		{"parameter name split", Query{Text: "address of the recipient"}, []string{"mail.send"}, false},
		{"parameter description", Query{Text: "how far"}, []string{"geo.buffer"}, false},
		{"exact name comes first", Query{Text: "files.read_file"}, []string{"files.read_file", "files.list_directory"}, false},
		{"prefix of a word", Query{Text: "direc"}, []string{"files.list_directory"}, false},
		{"broken definition found by name", Query{Text: "broken"}, []string{"broken.tool"}, false},
		{"bundle filter", Query{Text: "path distance", Bundles: []string{"geo"}}, []string{"geo.buffer"}, false},
		{"access filter", Query{Text: "geo", Allow: allowGeo}, []string{"geo.buffer"}, false},
		{"limit truncates", Query{Text: "file path folder", Limit: 1}, []string{"files.list_directory"}, true},
		{"nothing matches", Query{Text: "zebra"}, nil, false},
		{"empty query lists by name", Query{Limit: 2}, []string{"broken.tool", "files.list_directory"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ix.Search(tt.q)
			if diff := cmp.Diff(tt.want, names(got)); diff != "" {
				t.Errorf("results (-want +got):\n%s", diff)
			}
			if got.Truncated != tt.truncated {
				t.Errorf("truncated = %v, want %v", got.Truncated, tt.truncated)
			}
		})
	}
}

// categorized gives a tool the category its bundle names in _meta.
func categorized(t Tool, category any) Tool {
	var def map[string]any
	_ = json.Unmarshal(t.JSON, &def)
	def["_meta"] = map[string]any{CategoryKey: category, "io.example/other": 1}
	t.JSON, _ = json.Marshal(def)
	return t
}

func TestSearchByCategory(t *testing.T) {
	ix := Build([]Tool{
		categorized(tool("meos.tfloat_tsum_agg", "meos", "", "Temporal sum of all the values.", nil), "aggregates"),
		categorized(tool("meos.temporal_tcount_agg", "meos", "", "How many values are defined at each instant.", nil), "aggregates"),
		categorized(tool("meos.tfloat_sum", "meos", "", "Sum of two temporal floats.", nil), "arithmetic and maths"),
		categorized(tool("geo.area", "geo", "", "Area of a polygon; sum of its parts.", nil), "Measures"),
		categorized(tool("geo.odd", "geo", "", "A category that is not text.", nil), 7),
		tool("geo.plain", "geo", "", "No category; a sum.", nil),
	})
	noAgg := func(name string) bool { return name != "meos.tfloat_tsum_agg" && name != "meos.temporal_tcount_agg" }
	tests := []struct {
		name       string
		q          Query
		want       []string
		categories []string
	}{
		{"a query within a category", Query{Text: "sum", Category: "aggregates"}, []string{"meos.tfloat_tsum_agg"}, nil},
		{"the same query without it", Query{Text: "sum"}, []string{"geo.area", "geo.plain", "meos.tfloat_sum", "meos.tfloat_tsum_agg"}, nil},
		{"an empty query lists the category", Query{Category: "aggregates"}, []string{"meos.temporal_tcount_agg", "meos.tfloat_tsum_agg"}, nil},
		{"case does not matter", Query{Category: " measures "}, []string{"geo.area"}, nil},
		{"with a bundle filter", Query{Category: "measures", Bundles: []string{"meos"}}, nil, []string{"aggregates", "arithmetic and maths"}},
		{"an unknown category names the ones there are", Query{Text: "sum", Category: "aggregate"}, nil, []string{"Measures", "aggregates", "arithmetic and maths"}},
		{"the caller's access bounds what is named", Query{Category: "aggregates", Allow: noAgg}, nil, []string{"Measures", "arithmetic and maths"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ix.Search(tt.q)
			// The ranking is TestRankingOrder's; here, which tools pass.
			if diff := cmp.Diff(tt.want, names(got), cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
				t.Errorf("results (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.categories, got.Categories); diff != "" {
				t.Errorf("categories (-want +got):\n%s", diff)
			}
			for _, h := range got.Results {
				if tt.q.Category != "" && h.Category == "" {
					t.Errorf("%s: the result does not carry its category", h.Name)
				}
			}
		})
	}
}

// TestResultShape checks the JSON toolnode.search returns: results carry name, title,
// description and the schema as the bundle gave it, with the query's words the tool matched
// and those it did not, and an empty result is [] not null.
func TestResultShape(t *testing.T) {
	ix := smallCatalog()
	b, err := json.Marshal(ix.Search(Query{Text: "send an urgent email"}))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"results":[{"name":"mail.send","title":"Send mail","description":"Send an email.","inputSchema":{"properties":{"recipient_address":{"description":"who receives the message","type":"string"}},"type":"object"},"matched":["send","email"],"unmatched":["urgent"]}],"truncated":false}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	b, _ = json.Marshal(ix.Search(Query{Text: "zebra"}))
	if string(b) != `{"results":[],"truncated":false}` {
		t.Errorf("empty result: %s", b)
	}
}

func TestLimitBounds(t *testing.T) {
	tools := make([]Tool, 300)
	for i := range tools {
		tools[i] = tool(fmt.Sprintf("t.tool%03d", i), "t", "", "A widget tool.", nil)
	}
	ix := Build(tools)
	if got := len(ix.Search(Query{Text: "widget"}).Results); got != DefaultLimit {
		t.Errorf("default limit: %d results, want %d", got, DefaultLimit)
	}
	r := ix.Search(Query{Text: "widget", Limit: 1000})
	if len(r.Results) != MaxLimit || !r.Truncated {
		t.Errorf("limit 1000: %d results, truncated %v; want %d, true", len(r.Results), r.Truncated, MaxLimit)
	}
}

// TestRankingOrder checks the properties BM25F is chosen for: a word in the name beats the
// same word in a description, and a rare word beats a common one.
func TestRankingOrder(t *testing.T) {
	ix := Build([]Tool{
		tool("a.describe", "a", "", "Tells the speed of a thing and other facts.", nil),
		tool("a.speed", "a", "", "Tells how fast a thing moves.", nil),
		tool("a.common1", "a", "", "thing thing", nil),
		tool("a.common2", "a", "", "thing", nil),
		tool("a.rare", "a", "", "unicorn", nil),
	})
	if got := names(ix.Search(Query{Text: "speed"})); len(got) < 2 || got[0] != "a.speed" {
		t.Errorf("speed: %v, want a.speed first", got)
	}
	if got := names(ix.Search(Query{Text: "thing unicorn"})); len(got) == 0 || got[0] != "a.rare" {
		t.Errorf("thing unicorn: %v, want a.rare first", got)
	}
}

// TestRankingPrefersWhatFitsBest checks the parts of the ranking beyond BM25F, each on two
// tools that BM25F alone would rank the other way round or leave tied.
func TestRankingPrefersWhatFitsBest(t *testing.T) {
	syn, err := ParseSynonyms("tfloat, temporal float\n# a comment\n\nminus, remove, without\n")
	if err != nil {
		t.Fatal(err)
	}
	meta := func(tl Tool, m string) Tool {
		var def map[string]any
		_ = json.Unmarshal(tl.JSON, &def)
		var v any
		_ = json.Unmarshal([]byte(m), &v)
		def["_meta"] = v
		tl.JSON, _ = json.Marshal(def)
		return tl
	}
	withSyn := func(tl Tool) Tool { tl.Synonyms = syn; return tl }
	tests := []struct {
		why, query, want string
		tools            []Tool
	}{
		{"covering every concept asked beats repeating one", "maximum temperature",
			"m.reading", []Tool{
				tool("m.reading", "m", "", "Maximum temperature reading.", nil),
				tool("m.temperature", "m", "Temperature", "Temperature, temperature, temperature.", nil),
				tool("m.max_speed", "m", "", "Maximum speed.", nil),
				tool("m.max_size", "m", "", "Maximum size.", nil),
				tool("m.max_depth", "m", "", "Maximum depth.", nil),
				tool("m.max_age", "m", "", "Maximum age.", nil),
				tool("m.max_weight", "m", "", "Maximum weight.", nil),
			}},
		{"a name part the query does not ask for counts against a tool; the bundle's synonyms say which it asks for", "remove a period from a temporal float",
			"m.tfloat_minus_period", []Tool{
				withSyn(tool("m.tfloat_minus_period", "m", "", "A temporal float without a period: remove it.", nil)),
				withSyn(tool("m.tfloat_value_period", "m", "", "A temporal float, a period, remove.", nil)),
			}},
		{"a curated tool beats a generated one that fits as well", "speed of a trip", "m.speed_b", []Tool{
			meta(tool("m.speed_a", "m", "", "Speed of a trip.", nil), `{"io.toolnode/generated": true}`),
			tool("m.speed_b", "m", "", "Speed of a trip.", nil),
		}},
		{"a variant ranks below the tool it names", "greater than", "m.gt_b_a", []Tool{
			meta(tool("m.gt_a_b", "m", "", "Greater than.", nil), `{"io.toolnode/variant-of": "gt_b_a"}`),
			tool("m.gt_b_a", "m", "", "Greater than.", nil),
		}},
		{"a variant of a tool that is not there ranks as any other", "greater than", "m.gt_b_a", []Tool{
			meta(tool("m.gt_b_a", "m", "", "Greater than.", nil), `{"io.toolnode/variant-of": "gt_x_y"}`),
			tool("m.gt_c_a", "m", "", "Greater than.", nil),
		}},
		{"the node's common synonyms find a tool by its users' words", "hello Alice", "e.greet", []Tool{
			tool("e.greet", "e", "", "Greet someone by name.", nil),
			tool("e.name", "e", "", "Name someone.", nil),
		}},
	}
	for _, tt := range tests {
		got := names(Build(tt.tools).Search(Query{Text: tt.query}))
		if len(got) == 0 || got[0] != tt.want {
			t.Errorf("%s: %q gave %v, want %s first", tt.why, tt.query, got, tt.want)
		}
	}
}

func TestParseSynonyms(t *testing.T) {
	for _, bad := range []string{"alone\n", "a, b\nc\n", strings.Repeat("w, ", MaxSynonymMembers+1) + "w\n"} {
		if _, err := ParseSynonyms(bad); err == nil {
			t.Errorf("ParseSynonyms(%q): no error", bad)
		}
	}
	s, err := ParseSynonyms("tstzspan, period, time span\n")
	if err != nil {
		t.Fatal(err)
	}
	words, phrases := s.expansion("tstzspan")
	if diff := cmp.Diff([]string{"period", "tim", "span"}, words); diff != "" {
		t.Errorf("words (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([][]string{{"period"}, {"tim", "span"}}, phrases); diff != "" {
		t.Errorf("phrases (-want +got):\n%s", diff)
	}
	if _, err := LoadSynonyms(filepath.Join(t.TempDir(), "none.txt")); err == nil {
		t.Error("LoadSynonyms of a missing file: no error")
	}
}

func FuzzTokens(f *testing.F) {
	for _, s := range []string{"ever_within_distance", "HTTPServer", "a.b-c d", "ÄÖü", "\xff\xfe", "sses ies"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, tok := range Tokens(s) {
			if tok == "" {
				t.Fatalf("Tokens(%q) has an empty token", s)
			}
		}
	})
}

// TestConcurrentSearch shares one index between goroutines, as the fronts will (run with
// -race): every query must see the answer it gets alone.
func TestConcurrentSearch(t *testing.T) {
	ix := Build(synthetic(2000))
	queries := []string{"delete the file", "weather forecast", "speed of the trip", "user token"}
	want := map[string][]string{}
	for _, q := range queries {
		want[q] = names(ix.Search(Query{Text: q}))
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				q := queries[(g+i)%len(queries)]
				if got := names(ix.Search(Query{Text: q})); !slices.Equal(got, want[q]) {
					errs <- fmt.Sprintf("%q: %v, alone %v", q, got, want[q])
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func TestFromCatalog(t *testing.T) {
	tools := loadCatalog(t, "examples")
	var sources []catalog.Source
	byBundle := map[string]int{}
	for _, tl := range tools {
		if tl.Bundle == "toolnode" {
			continue
		}
		i, ok := byBundle[tl.Bundle]
		if !ok {
			i = len(sources)
			byBundle[tl.Bundle] = i
			sources = append(sources, catalog.Source{Bundle: tl.Bundle, NoPrefix: true})
		}
		sources[i].Tools = append(sources[i].Tools, tl.JSON)
	}
	cat, _ := catalog.Build(sources)
	ix := FromCatalog(cat, nil)
	if ix.Len() != cat.Len() {
		t.Fatalf("index holds %d tools, catalog %d", ix.Len(), cat.Len())
	}
	got := names(ix.Search(Query{Text: "greet someone", Bundles: []string{"go"}}))
	if len(got) == 0 || got[0] != "go.greet" {
		t.Errorf("greet in bundle go: %v, want go.greet first", got)
	}
}
