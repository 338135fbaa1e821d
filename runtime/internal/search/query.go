package search

import (
	"math"
	"math/bits"
	"sort"
	"strings"
)

// prefixWeight scales the score of a term reached by prefix from a query word the index
// does not hold ("traj" finds "trajectory"), below a whole-word match.
const (
	prefixWeight   = 0.5
	minPrefix      = 3
	maxPrefixTerms = 32
)

// The ranking's parts beyond BM25F (the package doc says why each is there).
const (
	// coveragePower: a tool's score is scaled by the share of the query's meaning it
	// covers (its matched words' idf over all of theirs) to this power, so a tool that
	// covers every concept asked beats one that repeats a single rare word.
	coveragePower = 1.0
	// extraPartWeight: each word of a tool's own name that no query word covers divides
	// its score by 1 + extraPartWeight: of two tools that fit, the one with the fewest
	// concepts beyond the query (tfloat_max_value, not tfloat_max_value_at_timestamp).
	extraPartWeight = 0.3
	// bigramWeight scales the bonus for two query words that follow each other in a
	// tool's text as in the query ("temporal float", "so far").
	bigramWeight = 0.4
	// curatedBoost: a tool its bundle does not mark generated (GeneratedKey) is preferred
	// by this factor over a generated one that fits as well.
	curatedBoost = 1.15
	// variantPenalty: a tool its bundle calls a variant of another (VariantKey) is ranked
	// by this factor below what it would be, so that the other comes first when both fit.
	variantPenalty = 0.85
)

// maxMasked is how many query terms coverage and the matched words follow (a mask bit
// each); a longer query's further terms still score.
const maxMasked = 64

type scored struct {
	doc   uint32
	score float32
	mask  uint64
}

// queryTerm is one distinct word of a query: as written, as indexed, the indexed terms it
// is a prefix of when the index lacks it, and its weight in the coverage (its idf).
type queryTerm struct {
	word, term string
	prefixOf   []string
	idf        float64
}

// Search returns the tools that best match q, best first; ties go to the tool with the
// fewer name parts, then the name that sorts first. A query whose words match nothing
// returns no results.
func (ix *Index) Search(q Query) Results {
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	limit = min(limit, MaxLimit)
	keep := ix.filter(q)
	if q.Category != "" && !ix.any(keep) {
		return Results{Results: []Hit{}, Categories: ix.categories(ix.filter(Query{Bundles: q.Bundles, Allow: q.Allow}))}
	}
	terms := ix.queryTerms(q.Text)
	exact, hasExact := ix.byName[strings.ToLower(strings.TrimSpace(q.Text))]
	if len(terms) == 0 && !hasExact {
		return ix.list(keep, limit)
	}

	acc := ix.scratch.Get().(*accumulator)
	defer ix.scratch.Put(acc)
	asked := make(map[string]bool, len(terms))
	var totalIDF float64
	for i, qt := range terms {
		asked[qt.term] = true
		var bit uint64
		if i < maxMasked {
			bit = 1 << i
			totalIDF += qt.idf
		}
		if ps, ok := ix.postings[qt.term]; ok {
			acc.add(ps, 1, bit)
			continue
		}
		for _, t := range qt.prefixOf {
			asked[t] = true
			acc.add(ix.postings[t], prefixWeight, bit)
		}
	}
	for i := 1; i < len(terms); i++ {
		if ps, ok := ix.bigrams[terms[i-1].term+" "+terms[i].term]; ok {
			acc.add(ps, float32(bigramWeight), 0)
		}
	}
	if hasExact {
		acc.add([]posting{{doc: exact, score: exactNameBonus}}, 1, 0)
	}
	idfs := make([]float64, min(len(terms), maxMasked))
	for i := range idfs {
		idfs[i] = terms[i].idf
	}
	top := topK{limit: limit, ix: ix}
	for _, d := range acc.touched {
		s := acc.score[d]
		if s <= 0 || !keep(d) {
			continue
		}
		if adj, ok := ix.adjust(acc, d, s, idfs, totalIDF, asked, top.floor()); ok {
			top.push(scored{d, adj, acc.mask[d]})
		} else {
			top.seen++ // matched, though it cannot be among the first limit
		}
	}
	acc.reset()
	found := top.sorted()
	r := ix.results(found, limit, top.seen > limit)
	for i, s := range found[:len(r.Results)] {
		r.Results[i].Matched, r.Results[i].Unmatched = splitWords(terms, s.mask)
	}
	return r
}

// queryTerms returns the distinct terms of a query with the words they were written as
// and their idf (a word the index lacks takes its prefix matches' largest).
func (ix *Index) queryTerms(text string) []queryTerm {
	var out []queryTerm
	seen := map[string]bool{}
	forEachWord(text, func(w string) {
		lw := strings.ToLower(w)
		if stopWords[lw] {
			return
		}
		term := stem(lw)
		if seen[term] {
			return
		}
		seen[term] = true
		qt := queryTerm{word: lw, term: term}
		if ps, ok := ix.postings[term]; ok {
			qt.idf = idf(ix.n, len(ps))
		} else {
			qt.prefixOf = ix.withPrefix(term)
			for _, t := range qt.prefixOf {
				qt.idf = max(qt.idf, prefixWeight*idf(ix.n, len(ix.postings[t])))
			}
		}
		out = append(out, qt)
	})
	return out
}

// adjust turns a tool's summed BM25F score into its rank score: scaled by the share of the
// query it covers, divided by the concepts its name has beyond the query, raised for a
// curated tool, lowered for a variant. Whether a name part is covered is worked out once
// per query (acc.covered), as parts repeat across tools.
//
// A tool whose score cannot reach floor even with no extra name part is not worked out
// further (false): most tools a common word touches are so left after the coverage.
func (ix *Index) adjust(acc *accumulator, d uint32, s float32, idfs []float64, totalIDF float64, asked map[string]bool, floor float32) (float32, bool) {
	score := float64(s)
	if totalIDF > 0 {
		var got float64
		for m := acc.mask[d]; m != 0; m &= m - 1 {
			got += idfs[bits.TrailingZeros64(m)]
		}
		if coveragePower == 1 {
			score *= got / totalIDF
		} else {
			score *= math.Pow(got/totalIDF, coveragePower)
		}
	}
	if ix.docs[d].curated {
		score *= curatedBoost
	}
	if ix.docs[d].variant {
		score *= variantPenalty
	}
	if float32(score) < floor {
		return 0, false
	}
	extra := 0
	for _, p := range ix.docs[d].parts {
		c := acc.covered[p]
		if c == 0 {
			c = -1
			if ix.parts[p].coveredBy(asked) {
				c = 1
			}
			acc.covered[p] = c
			acc.parts = append(acc.parts, p)
		}
		if c < 0 {
			extra++
		}
	}
	score /= 1 + extraPartWeight*float64(extra)
	return float32(score), true
}

// coveredBy reports whether the query's terms cover a name part: they hold it, or every
// term of one of its phrases.
func (p namePart) coveredBy(asked map[string]bool) bool {
	if asked[p.term] || stopWords[p.term] && len(p.phrases) == 0 {
		return true
	}
	for _, ph := range p.phrases {
		all := true
		for _, t := range ph {
			if !asked[t] {
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	return false
}

// splitWords splits the query's words into those a tool matched (by mask) and the others.
func splitWords(terms []queryTerm, mask uint64) (matched, unmatched []string) {
	for i, qt := range terms {
		if i < maxMasked && mask&(1<<i) != 0 {
			matched = append(matched, qt.word)
		} else {
			unmatched = append(unmatched, qt.word)
		}
	}
	return matched, unmatched
}

// accumulator sums the scores of one query: dense, so a term matching thousands of tools
// costs no map, and pooled per index, so a query allocates next to nothing.
type accumulator struct {
	score   []float32
	mask    []uint64
	touched []uint32
	// covered holds, per name part of the index, 1 when the query covers it, -1 when not,
	// 0 when not yet worked out; parts lists those worked out.
	covered []int8
	parts   []uint32
}

func (a *accumulator) add(ps []posting, weight float32, bit uint64) {
	for _, p := range ps {
		if a.score[p.doc] == 0 && a.mask[p.doc] == 0 {
			a.touched = append(a.touched, p.doc)
		}
		a.score[p.doc] += weight * p.score
		a.mask[p.doc] |= bit
	}
}

func (a *accumulator) reset() {
	for _, d := range a.touched {
		a.score[d] = 0
		a.mask[d] = 0
	}
	a.touched = a.touched[:0]
	for _, p := range a.parts {
		a.covered[p] = 0
	}
	a.parts = a.parts[:0]
}

// topK keeps the best limit results seen (a min-heap on the score) and counts all of them.
type topK struct {
	limit int
	ix    *Index
	heap  []scored
	seen  int
}

// better orders results: higher score, then the simpler tool (fewer name parts), then the
// name that sorts first.
func (t *topK) better(a, b scored) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	da, db := &t.ix.docs[a.doc], &t.ix.docs[b.doc]
	if len(da.parts) != len(db.parts) {
		return len(da.parts) < len(db.parts)
	}
	return da.name < db.name
}

// floor is the score a result must beat to enter a full top list; 0 while it has room. A
// result equal to it may still enter by the tie order, so callers skip only what is below.
func (t *topK) floor() float32 {
	if len(t.heap) < t.limit {
		return 0
	}
	return t.heap[0].score
}

func (t *topK) push(s scored) {
	t.seen++
	h := t.heap
	if len(h) < t.limit {
		h = append(h, s)
		for i := len(h) - 1; i > 0; {
			parent := (i - 1) / 2
			if !t.better(h[parent], h[i]) {
				break
			}
			h[parent], h[i] = h[i], h[parent]
			i = parent
		}
		t.heap = h
		return
	}
	if !t.better(s, h[0]) {
		return
	}
	h[0] = s
	for i := 0; ; {
		worst, l, r := i, 2*i+1, 2*i+2
		if l < len(h) && t.better(h[worst], h[l]) {
			worst = l
		}
		if r < len(h) && t.better(h[worst], h[r]) {
			worst = r
		}
		if worst == i {
			break
		}
		h[i], h[worst] = h[worst], h[i]
		i = worst
	}
}

func (t *topK) sorted() []scored {
	sort.Slice(t.heap, func(i, j int) bool { return t.better(t.heap[i], t.heap[j]) })
	return t.heap
}

// filter returns whether a document passes q's bundle, category and access filters.
func (ix *Index) filter(q Query) func(uint32) bool {
	var bundles map[string]bool
	if len(q.Bundles) > 0 {
		bundles = make(map[string]bool, len(q.Bundles))
		for _, b := range q.Bundles {
			bundles[b] = true
		}
	}
	category := strings.TrimSpace(q.Category)
	return func(d uint32) bool {
		doc := &ix.docs[d]
		if bundles != nil && !bundles[doc.bundle] {
			return false
		}
		if category != "" && !strings.EqualFold(doc.hit.Category, category) {
			return false
		}
		return q.Allow == nil || q.Allow(doc.name)
	}
}

// any reports whether some document passes keep.
func (ix *Index) any(keep func(uint32) bool) bool {
	for d := range ix.docs {
		if keep(uint32(d)) {
			return true
		}
	}
	return false
}

// categories returns the categories of the documents that pass keep, sorted.
func (ix *Index) categories(keep func(uint32) bool) []string {
	seen := map[string]bool{}
	var out []string
	for d := range ix.docs {
		if c := ix.docs[d].hit.Category; c != "" && !seen[c] && keep(uint32(d)) {
			seen[c] = true
			out = append(out, c)
		}
	}
	sort.Strings(out)
	return out
}

// list returns the tools that pass keep in name order: what an empty query means.
func (ix *Index) list(keep func(uint32) bool, limit int) Results {
	var found []scored
	for d := range ix.docs {
		if keep(uint32(d)) {
			found = append(found, scored{doc: uint32(d)})
		}
	}
	sort.Slice(found, func(i, j int) bool { return ix.docs[found[i].doc].name < ix.docs[found[j].doc].name })
	return ix.results(found, limit, len(found) > limit)
}

func (ix *Index) results(found []scored, limit int, truncated bool) Results {
	r := Results{Results: make([]Hit, 0, min(limit, len(found))), Truncated: truncated}
	for _, s := range found[:min(limit, len(found))] {
		r.Results = append(r.Results, ix.docs[s.doc].hit)
	}
	return r
}

// withPrefix returns the indexed terms that start with term, when term is long enough to
// say something; at most maxPrefixTerms of them.
func (ix *Index) withPrefix(term string) []string {
	if len(term) < minPrefix {
		return nil
	}
	i := sort.SearchStrings(ix.terms, term)
	j := i
	for j < len(ix.terms) && j-i < maxPrefixTerms && strings.HasPrefix(ix.terms[j], term) {
		j++
	}
	return ix.terms[i:j]
}
