package search

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// words is the vocabulary of the synthetic catalog: the kind of words tool names and
// descriptions are made of.
var words = strings.Fields(`account address alert archive area attach audio balance batch
	bounding box branch bucket buffer build cache calendar call cancel channel chart check
	city clip cluster column comment commit compare compress config contact container convert
	copy count create csv customer dashboard data database date delete deploy describe device
	diff directory disk distance document domain download draft duration edit email endpoint
	event export feature fetch file filter folder forecast format geometry graph group hash
	image import index instance invoice issue item job key label latency layer length line
	list location log map member merge message metric model monitor move network node note
	order owner page path payment permission pipeline point polygon position post price
	process project query queue rate record region release report repository request resample
	resource restart route row rule run sample schedule schema search secret send sequence
	server session share simplify size snapshot speed sql start status stop storage stream
	subscription summary table tag task team temperature template text ticket time timestamp
	token track transform trip update upload user value version volume weather webhook window`)

// synthetic returns n tools spread over 50 bundles, each with a name of two or three words,
// a title, a description of 12 to 30 words and one to four parameters.
func synthetic(n int) []Tool {
	r := rand.New(rand.NewPCG(1, 2))
	pick := func(k int) []string {
		out := make([]string, k)
		for i := range out {
			out[i] = words[r.IntN(len(words))]
		}
		return out
	}
	tools := make([]Tool, n)
	for i := range tools {
		bundle := fmt.Sprintf("b%02d", i%50)
		name := fmt.Sprintf("%s.%s_%d", bundle, strings.Join(pick(2+r.IntN(2)), "_"), i)
		props := map[string]any{}
		for _, p := range pick(1 + r.IntN(4)) {
			props[p+"_id"] = map[string]any{"type": "string", "description": strings.Join(pick(6), " ")}
		}
		def, _ := json.Marshal(map[string]any{
			"name": name, "title": strings.Join(pick(3), " "),
			"description": strings.Join(pick(12+r.IntN(19)), " ") + ".",
			"inputSchema": map[string]any{"type": "object", "properties": props},
		})
		tools[i] = Tool{Name: name, Bundle: bundle, JSON: def}
	}
	return tools
}

// benchQueries runs queries round robin and reports the latency percentiles of one query.
func benchQueries(b *testing.B, ix *Index, queries []string) {
	b.Helper()
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		ix.Search(Query{Text: queries[i%len(queries)]})
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkSearchMEOS queries the MEOS catalog of testdata with the plain-language tasks.
func BenchmarkSearchMEOS(b *testing.B) {
	tools := loadCatalog(b, "meos")
	var queries []string
	for _, tk := range loadTasks(b) {
		queries = append(queries, tk.Task)
	}
	b.Logf("%d tools, %d queries", len(tools), len(queries))
	benchQueries(b, Build(tools), queries)
}

// BenchmarkSearchMEOSLongest queries the MEOS catalog with queries as long as a client may
// send (MaxQueryLen), made of the tasks' words: what the bound leaves a search costing.
func BenchmarkSearchMEOSLongest(b *testing.B) {
	tools := loadCatalog(b, "meos")
	var all []string
	for _, tk := range loadTasks(b) {
		all = append(all, tk.Task)
	}
	text := strings.Join(all, " ")
	var queries []string
	for i := 0; i+MaxQueryLen <= len(text) && len(queries) < 20; i += MaxQueryLen / 4 {
		queries = append(queries, text[i:i+MaxQueryLen])
	}
	benchQueries(b, Build(tools), queries)
}

// BenchmarkSearchMEOSStandin queries one tool per libmeos function (2,376, named and with
// parameters as the generated MEOS catalog has them, without its prose) with the MEOS tasks.
func BenchmarkSearchMEOSStandin(b *testing.B) {
	tools := loadCatalog(b, "meos-standin")
	var queries []string
	for _, tk := range loadTasks(b) {
		if tk.Catalog == "meos" {
			queries = append(queries, tk.Task)
		}
	}
	benchQueries(b, Build(tools), queries)
}

// catalog10k is a catalog of 10,000 tools made of the real ones: the MEOS and example tool
// lists copied under bundles of other names until there are that many, each copy with its
// bundle's synonyms; what a node serving several large generated bundles indexes.
func catalog10k(b *testing.B) []Tool {
	b.Helper()
	base := append(loadCatalog(b, "meos"), loadCatalog(b, "examples")...)
	out := make([]Tool, 0, 10000)
	for copyN := 0; len(out) < 10000; copyN++ {
		for _, t := range base {
			if len(out) == 10000 {
				break
			}
			if copyN > 0 {
				t.Bundle = fmt.Sprintf("%s%d", t.Bundle, copyN)
				t.Name = fmt.Sprintf("c%d.%s", copyN, t.Name)
			}
			out = append(out, t)
		}
	}
	return out
}

// BenchmarkSearchCatalog10k queries catalog10k with the tasks of the quality set: the time
// per search make bench reports.
func BenchmarkSearchCatalog10k(b *testing.B) {
	ix := Build(catalog10k(b))
	var queries []string
	for _, tk := range loadTasks(b) {
		queries = append(queries, tk.Task)
	}
	benchQueries(b, ix, queries)
}

// BenchmarkSearch10k queries 10,000 synthetic tools with three-word queries.
func BenchmarkSearch10k(b *testing.B) {
	ix := Build(synthetic(10000))
	r := rand.New(rand.NewPCG(3, 4))
	queries := make([]string, 200)
	for i := range queries {
		queries[i] = fmt.Sprintf("%s the %s of a %s", words[r.IntN(len(words))], words[r.IntN(len(words))], words[r.IntN(len(words))])
	}
	benchQueries(b, ix, queries)
}

// BenchmarkBuild10k is what a catalog change costs.
func BenchmarkBuild10k(b *testing.B) {
	tools := synthetic(10000)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Build(tools)
	}
}
