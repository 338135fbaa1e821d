package search

import (
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

type scored struct {
	doc   uint32
	score float32
}

// Search returns the tools that best match q, best first; ties go to the name that sorts
// first. A query whose words match nothing returns no results.
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
	terms := uniq(Tokens(q.Text))
	exact, hasExact := ix.byName[strings.ToLower(strings.TrimSpace(q.Text))]
	if len(terms) == 0 && !hasExact {
		return ix.list(keep, limit)
	}

	acc := ix.scratch.Get().(*accumulator)
	defer ix.scratch.Put(acc)
	for _, term := range terms {
		if ps, ok := ix.postings[term]; ok {
			acc.add(ps, 1)
			continue
		}
		for _, t := range ix.withPrefix(term) {
			acc.add(ix.postings[t], prefixWeight)
		}
	}
	if hasExact {
		acc.add([]posting{{doc: exact, score: exactNameBonus}}, 1)
	}
	top := topK{limit: limit, name: func(d uint32) string { return ix.docs[d].name }}
	for _, d := range acc.touched {
		if s := acc.score[d]; s > 0 && keep(d) {
			top.push(scored{d, s})
		}
	}
	acc.reset()
	return ix.results(top.sorted(), limit, top.seen > limit)
}

// accumulator sums the scores of one query: dense, so a term matching thousands of tools
// costs no map, and pooled per index, so a query allocates next to nothing.
type accumulator struct {
	score   []float32
	touched []uint32
}

func (a *accumulator) add(ps []posting, weight float32) {
	for _, p := range ps {
		if a.score[p.doc] == 0 {
			a.touched = append(a.touched, p.doc)
		}
		a.score[p.doc] += weight * p.score
	}
}

func (a *accumulator) reset() {
	for _, d := range a.touched {
		a.score[d] = 0
	}
	a.touched = a.touched[:0]
}

// topK keeps the best limit results seen (a min-heap on the score) and counts all of them.
type topK struct {
	limit int
	name  func(uint32) string
	heap  []scored
	seen  int
}

// better orders results: higher score, then the name that sorts first.
func (t *topK) better(a, b scored) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	return t.name(a.doc) < t.name(b.doc)
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

func uniq(terms []string) []string {
	seen := make(map[string]bool, len(terms))
	out := terms[:0]
	for _, t := range terms {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}
