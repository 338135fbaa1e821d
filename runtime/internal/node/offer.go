package node

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"

	"github.com/toolnode/toolnode/runtime/internal/catalog"
	"github.com/toolnode/toolnode/runtime/internal/rpc"
	"github.com/toolnode/toolnode/runtime/internal/upstream"
	"github.com/toolnode/toolnode/sdk-go/mcp"
	"github.com/toolnode/toolnode/sdk-go/rawjson"
)

// lists is what one bundle offers besides its capabilities.
type lists struct {
	tools, prompts, resources, templates []json.RawMessage
	skills                               []json.RawMessage // of MCP's skills extension
}

// fetchLists lists everything the bundle's capabilities say it has.
func fetchLists(ctx context.Context, c *upstream.Client) (lists, error) {
	var l lists
	var err error
	caps := c.Init.Capabilities
	if l.tools, err = c.ListTools(ctx); err != nil {
		return l, err
	}
	if caps.Prompts != nil {
		if l.prompts, err = c.ListAll(ctx, mcp.MethodPromptsList, "prompts"); err != nil {
			return l, err
		}
	}
	if caps.Resources != nil {
		if l.resources, err = c.ListAll(ctx, mcp.MethodResourcesList, "resources"); err != nil {
			return l, err
		}
		if l.templates, err = c.ListAll(ctx, mcp.MethodResourceTemplates, "resourceTemplates"); err != nil {
			return l, err
		}
	}
	if _, ok := caps.Extensions[mcp.ExtensionSkills]; ok {
		if l.skills, err = c.ListAll(ctx, mcp.MethodSkillsList, "skills"); err != nil {
			return l, err
		}
		if l.skills == nil {
			l.skills = []json.RawMessage{} // it serves skills, none now
		}
	}
	return l, nil
}

// Offers is what the ready bundles offer together, for the capabilities a front
// advertises: only what some bundle offers.
type Offers struct {
	Prompts, Resources, Subscribe, Completions bool
}

// Offers reports what the ready bundles offer together.
func (n *Node) Offers() Offers {
	n.mu.Lock()
	defer n.mu.Unlock()
	var o Offers
	for _, b := range n.bundles {
		var bo Offers
		if inst := firstLive(b); inst != nil {
			bo = offersOf(inst.client.Init.Capabilities)
		} else if b.state == StateAsleep || b.state == StateWaking {
			bo = b.sleep.offers // what it offered when it last ran
		}
		o.Prompts = o.Prompts || bo.Prompts
		o.Resources = o.Resources || bo.Resources
		o.Subscribe = o.Subscribe || bo.Subscribe
		o.Completions = o.Completions || bo.Completions
	}
	return o
}

// Prompts returns the merged prompt list.
func (n *Node) Prompts() *catalog.Catalog { return n.prompts.Load() }

// Resources returns the merged resources and templates.
func (n *Node) Resources() *catalog.Resources { return n.resources.Load() }

// subscriptions tracks which sessions watch which resource URIs, so that a bundle is asked
// once per URI however many sessions watch it, and its updates reach only those sessions.
type subscriptions struct {
	mu    sync.Mutex
	byURI map[string]map[Session]bool
	// The subscriptions/listen each watched resource of a stateless bundle is heard on.
	listens map[string]watch
}

// watch is one resource subscription held at a stateless bundle.
type watch struct {
	inst *instance
	id   rpc.ID
}

// Subscribe records that the session of x (Caller.Session) watches the resource req names
// and asks its bundle on the first watcher.
func (n *Node) Subscribe(ctx context.Context, x Exchange, req *Request) (json.RawMessage, error) {
	return n.subscription(ctx, x, req, true)
}

// Unsubscribe ends the watch of a resource by the session of x, and tells its bundle after
// the last watcher.
func (n *Node) Unsubscribe(ctx context.Context, x Exchange, req *Request) (json.RawMessage, error) {
	return n.subscription(ctx, x, req, false)
}

func (n *Node) subscription(ctx context.Context, x Exchange, req *Request, on bool) (json.RawMessage, error) {
	sess := x.Caller().Session
	if sess == nil {
		return nil, errNoSession
	}
	uri := req.URI
	bundle, err := n.resourceBundle(req)
	if err != nil {
		return nil, err
	}
	n.subs.mu.Lock()
	watchers := n.subs.byURI[uri]
	first, last := len(watchers) == 0 && on, len(watchers) == 1 && watchers[sess] && !on
	if on {
		if watchers == nil {
			watchers = map[Session]bool{}
			n.subs.byURI[uri] = watchers
		}
		watchers[sess] = true
	} else {
		delete(watchers, sess)
		if len(watchers) == 0 {
			delete(n.subs.byURI, uri)
		}
	}
	n.subs.mu.Unlock()
	if !first && !last {
		return json.RawMessage(`{}`), nil
	}
	if held, err := n.watchStateless(bundle, uri, on); held {
		return json.RawMessage(`{}`), err
	}
	return n.forward(ctx, x, bundle, "", req)
}

// watchStateless starts or stops hearing a resource of a stateless bundle, which has a
// subscriptions/listen per resource instead of resources/subscribe. It reports whether the
// bundle is one.
func (n *Node) watchStateless(bundle, uri string, on bool) (bool, error) {
	n.mu.Lock()
	b := n.bundles[bundle]
	var inst *instance
	if b != nil {
		inst = firstLive(b)
	}
	n.mu.Unlock()
	n.subs.mu.Lock()
	defer n.subs.mu.Unlock()
	if !on {
		w, ok := n.subs.listens[uri]
		if ok {
			delete(n.subs.listens, uri)
			w.inst.client.Abandon(w.id, "unsubscribed")
		}
		return ok, nil
	}
	if inst == nil || inst.client.Era() != upstream.EraStateless {
		return false, nil
	}
	id, err := inst.client.Watch(uri)
	if err != nil {
		return true, err
	}
	if n.subs.listens == nil {
		n.subs.listens = map[string]watch{}
	}
	n.subs.listens[uri] = watch{inst: inst, id: id}
	return true, nil
}

// dropSubscriptions forgets every watch of a session that ended.
func (n *Node) dropSubscriptions(sess Session) {
	n.subs.mu.Lock()
	defer n.subs.mu.Unlock()
	for uri, watchers := range n.subs.byURI {
		delete(watchers, sess)
		if len(watchers) == 0 {
			delete(n.subs.byURI, uri)
			if w, ok := n.subs.listens[uri]; ok {
				delete(n.subs.listens, uri)
				w.inst.client.Abandon(w.id, "nobody watches it")
			}
		}
	}
}

// resourceUpdated passes a bundle's notifications/resources/updated to the sessions watching
// the resource.
func (n *Node) resourceUpdated(params json.RawMessage) {
	var p struct {
		URI string `json:"uri"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	n.subs.mu.Lock()
	var sessions []Session
	for s := range n.subs.byURI[p.URI] {
		sessions = append(sessions, s)
	}
	n.subs.mu.Unlock()
	params = withoutSubscriptionID(params)
	for _, s := range sessions {
		_ = s.Notify(context.Background(), mcp.NotifyResourceUpdated, params)
	}
}

// withoutSubscriptionID drops from an update the id of the node's own subscriptions/listen
// at a 2026-07-28 bundle: it means nothing to the node's clients, whose 2026-07-28 streams
// carry their own.
func withoutSubscriptionID(params json.RawMessage) json.RawMessage {
	meta, ok := rawjson.Member(params, "_meta")
	if !ok {
		return params
	}
	meta = rawjson.DeleteMember(meta, mcp.MetaSubscriptionID)
	if len(bytes.TrimSpace(meta)) == 2 { // {}
		return rawjson.DeleteMember(params, "_meta")
	}
	out, _ := rawjson.SetMember(params, "_meta", meta)
	return out
}

// firstLive returns a running process of b, or nil; the caller holds Node.mu.
func firstLive(b *bundle) *instance {
	for _, s := range b.slots {
		if s != nil {
			return s
		}
	}
	return nil
}
