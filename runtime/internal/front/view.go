package front

import (
	"sync/atomic"

	"github.com/toolnode/toolnode/runtime/internal/access"
	"github.com/toolnode/toolnode/runtime/internal/catalog"
	"github.com/toolnode/toolnode/runtime/internal/node"
)

// The budget of --view auto: what one model request's tool list can hold. OpenAI takes at
// most 128 functions per request; 32,000 tokens of definitions is a sixth of a 200,000
// token context, past the tenth at which Claude Code turns to its own tool search.
const (
	DefaultViewMaxTools  = 128
	DefaultViewMaxTokens = 32000
)

// autoView is what --view auto shows of one catalog to a client the access file leaves
// everything: the whole catalog when it fits the budget, else the chosen tools.
type autoView struct {
	cat   *catalog.Catalog
	whole bool
	shown map[string]bool
}

// autoViews caches the auto view of the last catalog for clients without an access entry.
type autoViews struct{ last atomic.Pointer[autoView] }

// viewBudget is the server's budget, defaults filled in.
func (s *Server) viewBudget() (tools, tokens int) {
	tools, tokens = s.opts.ViewMaxTools, s.opts.ViewMaxTokens
	if tools <= 0 {
		tools = DefaultViewMaxTools
	}
	if tokens <= 0 {
		tokens = DefaultViewMaxTokens
	}
	return tools, tokens
}

// autoFilter is the auto view of cat for a client allowed what allowed says (nil: every
// tool), as a tools/list filter; nil lists every tool.
func (s *Server) autoFilter(cat *catalog.Catalog, c *access.Client) func(catalog.Entry) bool {
	var v *autoView
	if c == nil {
		if v = s.autoViews.last.Load(); v == nil || v.cat != cat {
			v = s.chooseView(cat, nil)
			s.autoViews.last.Store(v)
		}
	} else {
		v = s.chooseView(cat, c.Allowed)
	}
	switch {
	case v.whole && c == nil:
		return nil
	case v.whole:
		return func(e catalog.Entry) bool { return c.Allowed(e.Name) }
	}
	return func(e catalog.Entry) bool { return v.shown[e.Name] }
}

// chooseView decides the auto view of cat for a client allowed what allowed says (nil:
// every tool). A catalog within the budget is shown whole. Else the node's own tools and
// the pinned ones are shown, and the tools their bundles feature, in the catalog's order,
// as long as the list stays within the budget.
func (s *Server) chooseView(cat *catalog.Catalog, allowed func(string) bool) *autoView {
	maxTools, maxTokens := s.viewBudget()
	v := &autoView{cat: cat}
	count, size := 0, 0
	for _, e := range cat.Entries() {
		if !e.AppOnly && (allowed == nil || allowed(e.Name)) {
			count++
			size += len(e.JSON) + 1
		}
	}
	if count <= maxTools && catalog.EstimateTokens(size) <= maxTokens {
		v.whole = true
		return v
	}
	v.shown = map[string]bool{}
	count, size = 0, 0
	take := func(e catalog.Entry) {
		v.shown[e.Name] = true
		count++
		size += len(e.JSON) + 1
	}
	listable := func(e catalog.Entry) bool {
		return !e.AppOnly && (allowed == nil || allowed(e.Name)) && !v.shown[e.Name]
	}
	for _, e := range cat.Entries() {
		if listable(e) && (node.IsOwnTool(e.Name) || s.pinned(e.Name)) {
			take(e)
		}
	}
	for _, e := range cat.Entries() {
		if listable(e) && e.Featured && count < maxTools && catalog.EstimateTokens(size+len(e.JSON)+1) <= maxTokens {
			take(e)
		}
	}
	return v
}

// pinned reports whether --pin names the tool.
func (s *Server) pinned(name string) bool {
	for _, p := range s.opts.Pins {
		if p.Match(name) {
			return true
		}
	}
	return false
}

// viewOf is the view of a client: its access entry's, else the node's.
func (s *Server) viewOf(c *access.Client) access.View {
	return c.ViewOr(s.opts.View)
}
