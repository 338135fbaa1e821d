// Package search ranks the tools of a catalog against a plain-language query, for the node's
// toolnode.search tool.
//
// The ranking starts from BM25F: every tool is a document with seven fields (name, title,
// description, parameter names, parameter descriptions, category, and the words synonyms
// add), each with its own weight and length normalisation, and a term's weighted frequency
// is saturated once over all fields, so a word repeated across fields counts more than once
// but never without bound. Text is split by Tokens, which handles snake_case, camelCase,
// dotted.names, hyphens and plurals. On that score (query.go):
//
//   - coverage: it is scaled by the share of the query's words (weighed by idf) the tool
//     matches, because a tool that answers every part of a task beats one that repeats one
//     rare word of it;
//   - concepts beyond the query: each part of the tool's own name no query word covers
//     (by itself, or by a phrase of the bundle's synonyms: "temporal float" covers tfloat)
//     lowers it, because of two tools that fit, the one doing least besides is meant;
//   - word pairs: two query words following each other in the tool's text raise it;
//   - marks: a tool its bundle marks generated (GeneratedKey) ranks below a curated one
//     that fits as well, and a variant (VariantKey) below the tool it names.
//
// The scale of these was set on the tuning part of the quality set
// (testdata/quality/tuning.json) and is checked on its held-out part.
//
// An Index is built once per catalog and never changes, so a query needs no lock and a new
// catalog's index replaces the old one with a pointer swap (atomic.Pointer[Index]).
package search

import (
	"encoding/json"
	"math"
	"sort"
	"strings"
	"sync"
	"unicode"
)

// Tool is one tool to index: its exposed name, the bundle serving it and its definition as
// tools/list gives it (name, title, description, inputSchema, annotations).
type Tool struct {
	Name   string
	Bundle string
	JSON   json.RawMessage
	// Synonyms are the bundle's own (its manifest's "synonyms" file); nil for none. The
	// node's common synonyms apply to every tool.
	Synonyms *Synonyms
}

// GeneratedKey is the member of a tool's _meta by which a bundle says the tool is
// generated (true), not written by hand: when a generated tool and a curated one fit a
// query equally, the curated one comes first.
const GeneratedKey = "io.toolnode/generated"

// VariantKey is the member of a tool's _meta naming, by the bundle's own name for it,
// another tool of the same bundle that does what this one does in another form (its
// arguments the other way round, say): when both fit a query, the named one comes first.
const VariantKey = "io.toolnode/variant-of"

// CategoryKey is the member of a tool's _meta that names its category, e.g. "aggregates":
// a bundle sorts its tools with it, and toolnode.search filters by it.
const CategoryKey = "io.toolnode/category"

// Hit is one search result, in the shape toolnode.search returns.
type Hit struct {
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	Category    string          `json:"category,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema"`
	// Signature is how a toolnode.run program calls the tool; its searcher sets it.
	Signature string `json:"signature,omitempty"`
	// Matched and Unmatched are the query's words that this tool matched and those it did
	// not, so that a caller can refine its query; absent when the query lists tools.
	Matched   []string `json:"matched,omitempty"`
	Unmatched []string `json:"unmatched,omitempty"`
}

// Results is the structured content of toolnode.search. Truncated says that more tools
// matched than were returned. Categories, given only when a query's category matches none
// of the tools the caller may see, names the categories they have.
type Results struct {
	Results    []Hit    `json:"results"`
	Truncated  bool     `json:"truncated"`
	Categories []string `json:"categories,omitempty"`
}

// Query is one search.
type Query struct {
	// Text is the plain-language query. Empty lists tools by name.
	Text string
	// Limit is the most results to return: DefaultLimit when 0 or less, MaxLimit at most.
	Limit int
	// Bundles keeps only tools served by these bundles; empty keeps all.
	Bundles []string
	// Category keeps only tools whose _meta names this category (CategoryKey), compared
	// without regard to case; empty keeps all.
	Category string
	// Allow, when set, keeps only the tools for which it returns true (a client's access).
	Allow func(name string) bool
}

const (
	// DefaultLimit is the number of results when a query gives none.
	DefaultLimit = 10
	// MaxLimit bounds a result list, so a query cannot ask for the whole catalog at once.
	MaxLimit = 100
	// MaxQueryLen bounds a query's length in characters: a search costs time in
	// proportion to its query, and a task in plain words needs far fewer.
	MaxQueryLen = 1000
)

// Field weights and length normalisation. The name is short and chosen with care, so a word
// in it says most; parameter descriptions are long and say least.
type field int

const (
	fName field = iota
	fTitle
	fDescription
	fParamName
	fParamDescription
	fCategory
	fSynonym
	numFields
)

var (
	fieldWeight = [numFields]float64{3.0, 2.0, 1.0, 0.5, 0.25, 0.5, 0.5}
	fieldB      = [numFields]float64{0.3, 0.5, 0.75, 0.5, 0.75, 0.3, 0.75}
)

// k1 is where a term's weighted frequency saturates (the usual BM25 value).
const k1 = 1.2

// exactNameBonus puts a tool first when the query is its exact name.
const exactNameBonus = 100.0

type posting struct {
	doc   uint32
	score float32 // saturated BM25F term weight, times the term's idf
}

type doc struct {
	name, bundle string
	hit          Hit
	// parts are the words of the tool's own name (without its bundle's prefix), as
	// indexes into Index.parts: a part no query word covers is a concept the tool has
	// beyond what was asked.
	parts   []uint32
	curated bool
	variant bool // the bundle names another of its tools that this one is a variant of
}

type namePart struct {
	term    string
	phrases [][]string
}

// Index is an immutable search index over a set of tools. It is safe for concurrent use.
type Index struct {
	docs     []doc
	postings map[string][]posting
	bigrams  map[string][]posting // two terms following each other in a tool's text
	terms    []string             // every term, sorted, for prefix matches
	byName   map[string]uint32
	// parts are the distinct name parts of the tools, each a word with the phrases that
	// cover it (the same word of two bundles with other synonyms is two parts), found by
	// partIDs while building.
	parts   []namePart
	partIDs map[string]uint32
	n       float64   // the number of tools, for idf
	scratch sync.Pool // *accumulator sized for docs
}

// Build indexes tools. A tool whose JSON is not an object is still found by its name.
func Build(tools []Tool) *Index {
	ix := &Index{
		docs:     make([]doc, len(tools)),
		postings: map[string][]posting{},
		bigrams:  map[string][]posting{},
		byName:   make(map[string]uint32, len(tools)),
	}
	docs := make([]docTerms, len(tools))
	variantOf := make([]string, len(tools))
	own := make(map[[2]string]bool, len(tools))
	for i, t := range tools {
		def := parse(t)
		variantOf[i] = def.variantOf
		own[[2]string{t.Bundle, ownName(t.Name, t.Bundle)}] = true
		ix.docs[i] = doc{name: t.Name, bundle: t.Bundle, hit: def.hit, curated: !def.generated}
		ix.byName[strings.ToLower(t.Name)] = uint32(i)
		for _, p := range nameParts(ownName(t.Name, t.Bundle), t.Synonyms) {
			ix.docs[i].parts = append(ix.docs[i].parts, ix.intern(p))
		}
		docs[i] = analyse(t, def)
	}
	for i, v := range variantOf {
		// Only a tool that is there, and not itself, makes this one a variant.
		ix.docs[i].variant = v != "" && v != ownName(tools[i].Name, tools[i].Bundle) && own[[2]string{tools[i].Bundle, v}]
	}
	n := float64(len(tools))
	ix.scoreTerms(docs, n)
	ix.scorePairs(docs, n)
	ix.terms = make([]string, 0, len(ix.postings))
	for term, ps := range ix.postings {
		ix.terms = append(ix.terms, term)
		sort.Slice(ps, func(a, b int) bool { return ps[a].doc < ps[b].doc })
	}
	sort.Strings(ix.terms)
	ix.n = n
	ix.partIDs = nil // only for building
	ix.scratch.New = func() any {
		return &accumulator{score: make([]float32, len(ix.docs)), mask: make([]uint64, len(ix.docs)),
			covered: make([]int8, len(ix.parts))}
	}
	return ix
}

// termFreq counts a term in each field of a tool.
type termFreq [numFields]float64

// docTerms are the terms of one tool: their counts by field, the pairs of neighbouring
// terms, and each field's length in terms.
type docTerms struct {
	tf      map[string]termFreq
	pairs   map[string]bool
	lengths [numFields]float64
}

// analyse counts the terms of tool t, whose definition is def.
func analyse(t Tool, def definition) docTerms {
	d := docTerms{tf: map[string]termFreq{}, pairs: map[string]bool{}}
	add := func(f field, text string) {
		terms := Tokens(text)
		for j, term := range terms {
			c := d.tf[term]
			c[f]++
			d.tf[term] = c
			d.lengths[f]++
			if j > 0 && f != fParamDescription {
				d.pairs[terms[j-1]+" "+term] = true
			}
		}
	}
	add(fName, t.Name)
	add(fTitle, def.hit.Title)
	add(fDescription, def.hit.Description)
	add(fCategory, def.hit.Category)
	for _, p := range def.params {
		add(fParamName, p.name)
		add(fParamDescription, p.description)
	}
	// What the node's common synonyms add: for every term of the name, title and
	// description, the other members of its groups. (A bundle's synonyms name its
	// jargon: they tell which parts of a name a query asks for, nameParts.)
	var extra []string
	for term, c := range d.tf {
		if c[fName]+c[fTitle]+c[fDescription] > 0 {
			words, _ := common.expansion(term)
			extra = append(extra, words...)
		}
	}
	sort.Strings(extra) // the same index whatever the map's order
	for _, term := range extra {
		c := d.tf[term]
		c[fSynonym]++
		d.tf[term] = c
		d.lengths[fSynonym]++
	}
	return d
}

// scoreTerms posts every term of every tool with its BM25F score among the n tools.
func (ix *Index) scoreTerms(docs []docTerms, n float64) {
	var total, avg [numFields]float64
	for _, d := range docs {
		for f := range numFields {
			total[f] += d.lengths[f]
		}
	}
	for f := range numFields {
		avg[f] = math.Max(total[f]/math.Max(n, 1), 1)
	}
	df := map[string]int{}
	for _, d := range docs {
		for term := range d.tf {
			df[term]++
		}
	}
	for i, d := range docs {
		for term, c := range d.tf {
			var w float64
			for f := range numFields {
				if c[f] == 0 {
					continue
				}
				norm := 1 - fieldB[f] + fieldB[f]*d.lengths[f]/avg[f]
				w += fieldWeight[f] * c[f] / norm
			}
			s := idf(n, df[term]) * w / (k1 + w)
			ix.postings[term] = append(ix.postings[term], posting{doc: uint32(i), score: float32(s)})
		}
	}
}

// scorePairs posts every pair of neighbouring terms of every tool with its idf among the
// n tools.
func (ix *Index) scorePairs(docs []docTerms, n float64) {
	pairDF := map[string]int{}
	for _, d := range docs {
		for p := range d.pairs {
			pairDF[p]++
		}
	}
	for i, d := range docs {
		for p := range d.pairs {
			ix.bigrams[p] = append(ix.bigrams[p], posting{doc: uint32(i), score: float32(idf(n, pairDF[p]))})
		}
	}
	for _, ps := range ix.bigrams {
		sort.Slice(ps, func(a, b int) bool { return ps[a].doc < ps[b].doc })
	}
}

// intern returns the index of p in ix.parts, adding it when new.
func (ix *Index) intern(p namePart) uint32 {
	var key strings.Builder
	key.WriteString(p.term)
	for _, ph := range p.phrases {
		key.WriteString("|" + strings.Join(ph, " "))
	}
	if id, ok := ix.partIDs[key.String()]; ok {
		return id
	}
	if ix.partIDs == nil {
		ix.partIDs = map[string]uint32{}
	}
	id := uint32(len(ix.parts))
	ix.parts = append(ix.parts, p)
	ix.partIDs[key.String()] = id
	return id
}

// idf is BM25's inverse document frequency of a term held by df of n documents.
func idf(n float64, df int) float64 {
	return math.Log(1 + (n-float64(df)+0.5)/(float64(df)+0.5))
}

// ownName is a tool's name without the prefix its bundle gave it.
func ownName(name, bundle string) string {
	if rest, ok := strings.CutPrefix(name, bundle+"."); ok && bundle != "" {
		return rest
	}
	return name
}

// nameParts are the words of a tool's own name, stop words kept (in a name, "at" is an
// operation), each with the phrases that cover it.
func nameParts(own string, syn *Synonyms) []namePart {
	var parts []namePart
	seen := map[string]bool{}
	forEachWord(own, func(w string) {
		term := stem(strings.ToLower(w))
		if seen[term] || len(term) < 2 || unicode.IsDigit(rune(term[0])) {
			return // "2d" says little a query would
		}
		seen[term] = true
		p := namePart{term: term}
		for _, s := range []*Synonyms{common, syn} {
			_, phrases := s.expansion(term)
			p.phrases = append(p.phrases, phrases...)
		}
		parts = append(parts, p)
	})
	return parts
}

// Len is the number of tools indexed.
func (ix *Index) Len() int { return len(ix.docs) }

type param struct{ name, description string }

type definition struct {
	hit       Hit
	params    []param
	generated bool
	variantOf string
}

// parse reads what the index needs from a tool definition; the title falls back to
// annotations.title as tools/list defines.
func parse(t Tool) definition {
	var raw struct {
		Title       string          `json:"title"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"inputSchema"`
		Annotations struct {
			Title string `json:"title"`
		} `json:"annotations"`
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	_ = json.Unmarshal(t.JSON, &raw) // a broken definition is still found by its name
	var category string
	_ = json.Unmarshal(raw.Meta[CategoryKey], &category) // only a string names a category
	var generated bool
	_ = json.Unmarshal(raw.Meta[GeneratedKey], &generated) // only true marks it
	var variantOf string
	_ = json.Unmarshal(raw.Meta[VariantKey], &variantOf)
	d := definition{hit: Hit{Name: t.Name, Title: raw.Title, Description: raw.Description,
		Category: category, InputSchema: raw.InputSchema}, generated: generated, variantOf: variantOf}
	if d.hit.Title == "" {
		d.hit.Title = raw.Annotations.Title
	}
	if len(d.hit.InputSchema) == 0 {
		d.hit.InputSchema = json.RawMessage(`{"type":"object"}`)
	}
	var schema any
	if json.Unmarshal(raw.InputSchema, &schema) == nil {
		d.params = collectParams(schema, 0, d.params)
	}
	return d
}

// maxSchemaDepth bounds the walk into nested parameters: deep members rarely say what a
// tool does, and a hostile schema must not cost much.
const maxSchemaDepth = 4

// collectParams gathers the property names and descriptions (with titles and enum values,
// which name choices a user may ask for) of a schema and of its nested schemas.
func collectParams(s any, depth int, out []param) []param {
	obj, ok := s.(map[string]any)
	if !ok || depth > maxSchemaDepth {
		return out
	}
	if props, ok := obj["properties"].(map[string]any); ok {
		names := make([]string, 0, len(props))
		for name := range props {
			names = append(names, name)
		}
		sort.Strings(names) // the same index for the same schema, whatever the map order
		for _, name := range names {
			p := param{name: name}
			if ps, ok := props[name].(map[string]any); ok {
				p.description = schemaText(ps)
			}
			out = append(out, p)
			out = collectParams(props[name], depth+1, out)
		}
	}
	if items, ok := obj["items"]; ok {
		out = collectParams(items, depth+1, out)
	}
	for _, key := range []string{"anyOf", "oneOf", "allOf"} {
		if alts, ok := obj[key].([]any); ok {
			for _, alt := range alts {
				out = collectParams(alt, depth+1, out)
			}
		}
	}
	return out
}

func schemaText(s map[string]any) string {
	var parts []string
	for _, key := range []string{"title", "description"} {
		if v, ok := s[key].(string); ok {
			parts = append(parts, v)
		}
	}
	if enum, ok := s["enum"].([]any); ok {
		for _, v := range enum {
			if str, ok := v.(string); ok {
				parts = append(parts, str)
			}
		}
	}
	return strings.Join(parts, " ")
}
