package front

import (
	"encoding/json"

	"github.com/toolnode/toolnode/runtime/internal/catalog"
	"github.com/toolnode/toolnode/runtime/internal/node"
	"github.com/toolnode/toolnode/runtime/internal/rpc"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// The methods a client calls, and what serves each: the same for both eras but for the
// lifecycle (initialize, ping, logging/setLevel, resources/subscribe: sessions only;
// server/discover: stateless requests only), and for how a bundle's questions reach the
// client (requests to a session, input_required answers to a stateless request).

// serve serves a request of a session.
func (sess *Session) serve(c *Call) {
	n := sess.srv.node
	switch c.req.Method {
	case mcp.MethodToolsCall:
		if c.serveTask() {
			return
		}
		n.CallIn(&c.rec, c.ctx, c, c.req, c.tool)
	case mcp.MethodPromptsGet:
		c.finish(withInput(c, func(req *node.Request) node.Outcome { return n.GetPrompt(c.ctx, c, req) }))
	case mcp.MethodResourcesRead:
		c.finish(withInput(c, func(req *node.Request) node.Outcome { return n.ReadResource(c.ctx, c, req) }))
	case mcp.MethodSkillsGet:
		c.finish(n.GetSkill(c.req))
	default:
		c.end(sess.dispatch(c))
	}
}

// dispatch serves c, a session's request that is not a tools/call.
func (sess *Session) dispatch(c *Call) (any, error) {
	n, ctx, req := sess.srv.node, c.ctx, c.req
	switch req.Method {
	case mcp.MethodPing:
		return struct{}{}, nil
	case mcp.MethodInitialize:
		return sess.initialize(req.Params)
	case mcp.MethodLoggingSetLevel:
		return sess.setLevel(ctx, req.Params)
	case mcp.MethodResourcesSub:
		return n.Subscribe(ctx, c, req)
	case mcp.MethodResourcesUnsub:
		return n.Unsubscribe(ctx, c, req)
	}
	return sess.srv.dispatch(c)
}

// withInput makes the call c for a session client, serving the input a 2026 bundle asks
// for.
func withInput(c *Call, call func(*node.Request) node.Outcome) node.Outcome {
	o := call(c.req)
	if !o.InputRequired() {
		return o
	}
	return node.FulfilInput(c.ctx, c, c.req, o, call)
}

// serve serves a stateless request. Calls that may need the client's input run as an
// mrtrCall, which answers input_required for what a bundle asks.
func (v *Stateless) serve(c *Call) {
	req, n := c.req, v.srv.node
	if _, ok := mrtrMethod(req.Method); !ok {
		go func() {
			if req.Method == mcp.MethodSkillsGet {
				c.finish(v.answer(req.Method, n.GetSkill(req)))
				return
			}
			res, err := v.dispatch(c)
			raw, rerr := rpc.Marshal(res)
			if err == nil && rerr != nil {
				err = rerr
			}
			c.finish(v.answer(req.Method, node.Answer(req.Method, raw, err)))
		}()
		return
	}
	if req.State != nil && v.resume(c) {
		return
	}
	if req.Method == mcp.MethodToolsCall && c.serveTask() {
		return
	}
	if req.Method == mcp.MethodToolsCall && !n.AsksClients(c.tool) && !n.Guarded(req) {
		// (A guarded call may wait for its approval, asking the client to wait.)
		// Its bundle asks with input_required answers of its own, which go to the client as
		// they are: nothing waits for the client's input here.
		n.CallIn(&c.rec, c.ctx, c, req, c.tool)
		return
	}
	v.callAsking(c)
}

// dispatch serves c, a stateless request whose bundle cannot ask for input. The methods
// the revision removed never come here: Admit refused them.
func (v *Stateless) dispatch(c *Call) (any, error) {
	if c.req.Method == mcp.MethodDiscover {
		return v.srv.discover()
	}
	return v.srv.dispatch(c)
}

// dispatch serves c, of a method both eras share: lists and completions.
func (s *Server) dispatch(c *Call) (any, error) {
	ctx, p, req := c.ctx, c.peer, c.req
	n, id := s.node, p.base().id
	switch req.Method {
	case mcp.MethodToolsList:
		return listPage(req, func(cursor string) ([]json.RawMessage, string, error) {
			cat := n.Catalog()
			size := s.opts.PageSize
			if p.listsWhole() {
				size = 0
			}
			var views func(bundle, uri string) bool // a caller who may not read a view is not shown it
			if req.Allow != nil {
				views = req.Allow.Resource
			}
			var form catalog.Form
			if p.protocol() < mcp.Version20260728 {
				// Hosts of the revisions before 2026-07-28 get schemas they take; a
				// 2026-07-28 client gets each as its bundle wrote it, which that
				// revision's conformance requires (json-schema-2020-12, SEP-2106: allOf,
				// if/then/else and $anchor kept). Revisions are dates: they sort.
				form |= catalog.FormHosts
			}
			if p.strictNames() {
				form |= catalog.FormStrict
			}
			tools, next, err := cat.PageListed(cursor, size, s.listFilter(id, cat, p.selectsTools()), views, form)
			return tools, next, err
		}, "tools")
	case mcp.MethodPromptsList:
		return listPage(req, func(cursor string) ([]json.RawMessage, string, error) {
			var keep func(catalog.Entry) bool
			if allow := req.Allow; allow != nil {
				keep = func(e catalog.Entry) bool { return allow(e.Name) }
			}
			return n.Prompts().PageWhere(cursor, s.opts.PageSize, keep)
		}, "prompts")
	case mcp.MethodResourcesList:
		return listPage(req, func(cursor string) ([]json.RawMessage, string, error) {
			return n.Resources().Resources(cursor, s.opts.PageSize, req.Allow.Resource)
		}, "resources")
	case mcp.MethodResourceTemplates:
		return listPage(req, func(cursor string) ([]json.RawMessage, string, error) {
			return n.Resources().Templates(cursor, s.opts.PageSize, req.Allow.Resource)
		}, "resourceTemplates")
	case mcp.MethodComplete:
		return n.Complete(ctx, c, req)
	case mcp.MethodTasksGet, mcp.MethodTasksUpdate, mcp.MethodTasksCancel:
		return s.serveTasks(ctx, p, req)
	case mcp.MethodSkillsList:
		return s.serveSkills(req)
	}
	return nil, rpc.Errorf(mcp.CodeMethodNotFound, "method %q not found", req.Method)
}

// listPage answers a */list request with one page of items under field.
func listPage(req *node.Request, page func(cursor string) ([]json.RawMessage, string, error), field string) (any, error) {
	items, next, err := page(req.Cursor)
	if err != nil {
		return nil, invalidParams("%v", err)
	}
	// Written out by hand: the items are JSON already (checked when they arrived), and a
	// catalog of thousands of tools is megabytes that the encoder would check again.
	size := len(field) + len(next) + 32
	for _, it := range items {
		size += len(it) + 1
	}
	b := make([]byte, 0, size)
	b = append(append(append(b, `{"`...), field...), `":[`...)
	for i, it := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, it...)
	}
	b = append(b, ']')
	if next != "" {
		quoted, _ := json.Marshal(next)
		b = append(append(b, `,"nextCursor":`...), quoted...)
	}
	return json.RawMessage(append(b, '}')), nil
}
