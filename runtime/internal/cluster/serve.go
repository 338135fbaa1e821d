package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nuid"

	"github.com/toolnode/toolnode/runtime/internal/node"
	"github.com/toolnode/toolnode/runtime/internal/rpc"
	"github.com/toolnode/toolnode/sdk-go/mcp"
	"github.com/toolnode/toolnode/sdk-go/rawjson"
)

// acceptAfter is how long a call runs before its node tells the caller it took it.
const acceptAfter = 5 * time.Millisecond

// served is a call another node routed to a bundle of this node.
type served struct {
	key     string
	from    string // the node the call came from
	replyTo string
	id      json.RawMessage // the call's id on that node
	bundle  string
	cancel  context.CancelCauseFunc

	asm *assembler // the caller's messages in parts

	mu     sync.Mutex
	next   int
	asking map[string]chan *rpc.Message // this node's requests to the caller, by id
}

// serveBundle takes a call to one of this node's bundles, from the bundle's queue group;
// g remembers the calls had on the bundle's subject.
func (c *Cluster) serveBundle(bundle string, g *guard, msg *nats.Msg) {
	if msg.Reply == "" {
		return
	}
	from := msg.Header.Get(hFrom)
	if _, err := c.keys.check(msg, g); err != nil || from == "" {
		if err == nil {
			err = fmt.Errorf("it names no node")
		}
		c.refusals.add("call", from, err)
		return
	}
	m, perr := rpc.Parse(msg.Data, rpc.Limits{})
	if perr != nil && !m.ID.IsZero() {
		c.reply(msg.Reply, "", m.ID, nil, perr)
	}
	if perr != nil || !m.IsRequest() {
		return
	}
	switch m.Method {
	case mcp.MethodToolsCall, mcp.MethodPromptsGet, mcp.MethodResourcesRead, mcp.MethodComplete:
	default:
		res, err := c.surface(bundle, m.Method)
		c.reply(msg.Reply, "", m.ID, res, err)
		return
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	s := &served{key: nuid.Next(), from: from, replyTo: msg.Reply, id: json.RawMessage(m.ID.String()),
		bundle: bundle, cancel: cancel, asking: map[string]chan *rpc.Message{},
		asm: &assembler{max: c.b.Message, open: c.b.Parts, gap: c.b.PartGap}}
	c.mu.Lock()
	c.served[s.key] = s
	c.mu.Unlock()
	// Every message about the call names this node; a call that takes a while gets one at
	// once, so that the caller knows where it is (to cancel it, and to fail it at once
	// should this node die). Quick calls need only their answer.
	accept := time.AfterFunc(acceptAfter, func() {
		hdr := nats.Header{}
		hdr.Set(hNode, c.id)
		hdr.Set(hKey, s.key)
		hdr.Set(hKind, "accept")
		_ = c.out.publish(&nats.Msg{Subject: msg.Reply, Header: hdr})
	})
	method, id := m.Method, m.ID
	c.n.ServeBundle(ctx, &remoteSession{c: c, s: s, done: func(res json.RawMessage, err error) {
		accept.Stop()
		c.mu.Lock()
		delete(c.served, s.key)
		c.mu.Unlock()
		if ctx.Err() != nil {
			return // the caller gave up: it wants no answer
		}
		cancel(nil)
		var rpcErr *rpc.Error
		if err != nil && !errors.As(err, &rpcErr) {
			err = fmt.Errorf("%w (bundle %q on node %q)", err, bundle, c.id)
			if method == mcp.MethodToolsCall {
				res, err = json.Marshal(mcp.ErrorResult(err.Error()))
			}
		}
		if len(res) > int(c.nc.MaxPayload()) {
			// done runs on the goroutine reading the bundle: it must not wait while the
			// parts of a large answer go out.
			go c.reply(s.replyTo, s.key, id, res, err)
			return
		}
		c.reply(s.replyTo, s.key, id, res, err)
	}}, bundle, method, m.Params)
}

// reply sends the answer to a call.
func (c *Cluster) reply(to, key string, id rpc.ID, res json.RawMessage, err error) {
	var out []byte
	if err != nil {
		out = rpc.Failure(id, err).Encode()
	} else {
		out = rpc.Result(id, res).Encode()
	}
	hdr := nats.Header{}
	hdr.Set(hNode, c.id)
	if key != "" {
		hdr.Set(hKey, key)
	}
	if err := publish(c.out, to, "", hdr, out); err != nil {
		c.log.Warn("answer of a call from the cluster not sent", "error", err)
	}
}

// surface answers what another node asks of a bundle outside calls: server/discover and
// the lists, from what this node holds.
func (c *Cluster) surface(bundle, method string) (json.RawMessage, error) {
	var b *node.SharedBundle
	for _, s := range c.n.SharedBundles() {
		if s.Name == bundle {
			b = &s
			break
		}
	}
	if b == nil {
		return nil, rpc.Errorf(mcp.CodeInternalError, "bundle %q is not served by node %q now", bundle, c.id)
	}
	list := func(key string, items []json.RawMessage) (json.RawMessage, error) {
		if items == nil {
			items = []json.RawMessage{}
		}
		return json.Marshal(map[string]any{key: items})
	}
	switch method {
	case mcp.MethodDiscover:
		caps := b.Capabilities
		// List changes come with the node's heartbeats, and resource subscriptions do not
		// cross nodes: the other node must not wait for either.
		caps.Tools = &mcp.ListChangedCapability{}
		if caps.Prompts != nil {
			caps.Prompts = &mcp.ListChangedCapability{}
		}
		if caps.Resources != nil {
			caps.Resources = &mcp.ResourcesCapability{}
		}
		meta, _ := json.Marshal(map[string]any{mcp.MetaServerInfo: b.ServerInfo})
		return json.Marshal(mcp.DiscoverResult{ResultType: "complete", SupportedVersions: []string{mcp.Version20260728},
			Capabilities: caps, Instructions: b.Instructions, Meta: meta})
	case mcp.MethodPing:
		return json.RawMessage(`{}`), nil
	case mcp.MethodToolsList:
		return list("tools", b.Tools)
	case mcp.MethodPromptsList:
		return list("prompts", b.Prompts)
	case mcp.MethodResourcesList:
		return list("resources", b.Resources)
	case mcp.MethodResourceTemplates:
		return list("resourceTemplates", b.Templates)
	}
	return nil, rpc.Errorf(mcp.CodeMethodNotFound, "%s is not served across the cluster", method)
}

// inbox takes what other nodes say about the calls this node serves: their cancellation,
// and the answers to the bundles' requests; and pings. A message is checked (signed, about
// a call served here, from the node that made it) before any of it is held.
func (c *Cluster) inbox(msg *nats.Msg) {
	from := msg.Header.Get(hFrom)
	if _, err := c.keys.check(msg, &c.inboxGuard); err != nil {
		c.refusals.add("message to this node", from, err)
		return
	}
	switch msg.Header.Get(hKind) {
	case kindGone:
		c.forwardGone(from, msg.Header.Get(hKey))
		return
	case kindTask:
		c.serveTask(msg)
		return
	}
	if msg.Header.Get(hKind) == "ping" {
		if msg.Reply != "" {
			hdr := nats.Header{}
			hdr.Set(hNode, c.id)
			_ = c.out.publish(&nats.Msg{Subject: msg.Reply, Header: hdr})
		}
		return
	}
	c.mu.Lock()
	s := c.served[msg.Header.Get(hKey)]
	c.mu.Unlock()
	if s == nil {
		c.log.Debug("message about a call no longer served here", "key", msg.Header.Get(hKey), "from", from)
		return
	}
	if from != s.from {
		c.refusals.add("message to this node", from, fmt.Errorf("the call it names came from node %q", s.from))
		return
	}
	data, whole, err := s.asm.add(msg)
	if err != nil {
		c.refusals.add("message to this node", from, err)
		return
	}
	if !whole {
		return
	}
	m, perr := rpc.Parse(data, rpc.Limits{})
	if perr != nil {
		return
	}
	switch {
	case m.Method == mcp.NotifyCancelled:
		var p mcp.CancelledParams
		_ = json.Unmarshal(m.Params, &p)
		s.cancel(fmt.Errorf("cancelled by the caller on node %q: %s", s.from, p.Reason))
	case m.IsResponse():
		s.mu.Lock()
		ch := s.asking[m.ID.String()]
		delete(s.asking, m.ID.String())
		s.mu.Unlock()
		if ch != nil {
			ch <- &m
		}
	}
}

// remoteSession is the node on the other end of a served call, as this node's routing sees
// a client (the call's node.Exchange): what the bundle says during the call goes there,
// tagged with the call's id on that node. The caller is anonymous here: its own node
// applied what it may do.
type remoteSession struct {
	c    *Cluster
	s    *served
	done func(res json.RawMessage, err error)
}

// Caller implements node.Exchange: nothing is known here of the caller.
func (r *remoteSession) Caller() node.Caller { return node.Caller{} }

// Progress implements node.Exchange: the progress goes to the caller's node, where it
// finds its call by its token.
func (r *remoteSession) Progress(p mcp.ProgressParams) { _ = r.notify(mcp.NotifyProgress, p, false) }

// Log implements node.Exchange: the message goes to the caller's node, tagged with the
// call, under the bundle's own logger (the caller names the bundle itself).
func (r *remoteSession) Log(m mcp.LoggingMessageParams) {
	if rest, cut := strings.CutPrefix(m.Logger, r.s.bundle); cut {
		m.Logger = strings.TrimPrefix(rest, "/")
	}
	_ = r.notify(mcp.NotifyMessage, m, true)
}

// CallDone implements node.Exchange: the answer goes to the caller's node.
func (r *remoteSession) CallDone(o node.Outcome) { r.done(o.Answer()) }

// Watch implements node.Exchange: the call ends when its context does.
func (r *remoteSession) Watch(node.Abandoner) bool { return false }

func (r *remoteSession) tag(params json.RawMessage) json.RawMessage {
	if len(params) == 0 || string(params) == "null" {
		params = json.RawMessage(`{}`)
	}
	meta, ok := rawjson.Member(params, "_meta")
	if !ok {
		meta = []byte(`{}`)
	}
	meta, _ = rawjson.PutMember(meta, node.RelatedRequestKey, r.s.id)
	out, _ := rawjson.PutMember(params, "_meta", meta)
	return out
}

// notify sends a notification about the call to the caller, tagged with the call's id on
// the caller's node when tagged.
func (r *remoteSession) notify(method string, params any, tagged bool) error {
	raw, err := rpc.Marshal(params)
	if err != nil {
		return fmt.Errorf("encode %s: %w", method, err)
	}
	if tagged {
		raw = r.tag(raw)
	}
	hdr := nats.Header{}
	hdr.Set(hNode, r.c.id)
	hdr.Set(hKey, r.s.key)
	return publish(r.c.out, r.s.replyTo, "", hdr, rpc.Notification(method, raw).Encode())
}

// Ask implements node.Exchange: it asks the caller (sampling, elicitation, roots) and waits
// for its answer.
func (r *remoteSession) Ask(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	s := r.s
	s.mu.Lock()
	s.next++
	id := rpc.Int(uint64(s.next))
	ch := make(chan *rpc.Message, 1)
	s.asking[id.String()] = ch
	s.mu.Unlock()
	hdr := nats.Header{}
	hdr.Set(hNode, r.c.id)
	hdr.Set(hKey, s.key)
	if err := publish(r.c.out, s.replyTo, r.c.inboxSubject(r.c.id), hdr, rpc.Request(id, method, r.tag(params)).Encode()); err != nil {
		return nil, fmt.Errorf("%s to node %q: %w", method, s.from, err)
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			return nil, m.Error
		}
		return m.Result, nil
	case <-ctx.Done():
		s.mu.Lock()
		delete(s.asking, id.String())
		s.mu.Unlock()
		_ = publish(r.c.out, s.replyTo, "", hdr, rpc.Notification(mcp.NotifyCancelled, mcp.CancelledNotice(id.String(), context.Cause(ctx).Error())).Encode())
		return nil, context.Cause(ctx)
	}
}
