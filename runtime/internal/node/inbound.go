package node

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/toolnode/toolnode/runtime/internal/rpc"
	"github.com/toolnode/toolnode/runtime/internal/upstream"
	"github.com/toolnode/toolnode/sdk-go/mcp"
	"github.com/toolnode/toolnode/sdk-go/rawjson"
)

// What a bundle sends on its own, besides the answers to the node's requests: log messages
// and progress about a client's call (passed to that client alone), requests for the
// client (sampling, elicitation, roots: to the client whose call caused them), resource
// updates (to the sessions that watch the resource) and list changes (the node lists
// again). Nothing a bundle sends reaches a client that no call of its relates it to.

// RelatedRequestKey is the _meta member by which a bundle relates a notification or a
// request of its own to the call it is serving: the JSON-RPC id of that call as the bundle
// received it. toolnode's SDKs set it; for other bundles the node falls back to the calls it
// knows are in flight.
const RelatedRequestKey = "io.toolnode/request"

// related finds the client call a bundle's message is about: the one it names in
// _meta["io.toolnode/request"], else the latest of its calls in flight when they all come
// from one session. nil when there is none or it cannot be told.
func (n *Node) related(inst *instance, params json.RawMessage) *flight {
	meta, _ := rawjson.Member(params, "_meta")
	inst.mu.Lock()
	defer inst.mu.Unlock()
	if raw, ok := rawjson.Member(meta, RelatedRequestKey); ok {
		var id rpc.ID
		if json.Unmarshal(raw, &id) == nil {
			if n, ok := id.Uint(); ok && inst.flights[n] != nil {
				return inst.flights[n]
			}
		}
	}
	var found *flight
	for _, f := range inst.flights {
		if found != nil && !sameClient(f.x, found.x) {
			return nil
		}
		found = f
	}
	return found
}

// bundleHandler receives what one bundle sends on its own.
type bundleHandler struct {
	n    *Node
	b    *bundle
	inst *instance
}

func (h bundleHandler) Notify(c *upstream.Client, method string, params json.RawMessage) {
	switch method {
	case mcp.NotifyProgress:
		h.n.forwardProgress(h.inst, params)
	case mcp.NotifyMessage:
		var msg mcp.LoggingMessageParams
		if err := json.Unmarshal(params, &msg); err != nil {
			h.b.log.Warn("bad notifications/message", "error", err)
			return
		}
		msg.Logger = qualify(c.Name(), msg.Logger)
		if f := h.n.related(h.inst, params); f != nil {
			f.x.Log(msg)
			return
		}
		// Sent to everyone, a record of one client's call could reach another client.
		h.b.log.Info("bundle log message that no single client's call can be told to own; kept in the node's log",
			"level", msg.Level, "logger", msg.Logger, "data", clipRaw(msg.Data))
	case mcp.NotifyResourceUpdated:
		h.n.resourceUpdated(params)
	case mcp.NotifyTasks:
		h.n.taskNote(h.inst, params)
	case mcp.NotifyToolsListChanged, mcp.NotifyPromptsListChanged, mcp.NotifyResourcesChanged:
		if !h.inst.initialized.Load() {
			return // the start lists everything once the handshake is done
		}
		h.n.wg.Add(1)
		go func() {
			defer h.n.wg.Done()
			h.n.refresh(h.b, h.inst)
		}()
	default:
		h.b.log.Debug("notification from bundle not forwarded", "method", method)
	}
}

// Request passes a bundle's request to the client whose call it relates to.
func (h bundleHandler) Request(ctx context.Context, _ *upstream.Client, method string, params json.RawMessage) (json.RawMessage, error) {
	f := h.n.related(h.inst, params)
	if f == nil {
		return nil, rpc.Errorf(mcp.CodeInternalError,
			"%s can only be sent while serving one client's call, named in _meta[%q] when several are in flight (toolnode relays it to that client)",
			method, RelatedRequestKey)
	}
	// The bundle's request ends when the client's call does, or when the bundle cancels it.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(f.relay.context(), cancel)
	defer stop()
	return f.x.Ask(ctx, method, withoutRelated(params))
}

// withoutRelated removes the node's routing key from params' _meta (and _meta, when that
// leaves it empty): it is between a bundle and the node.
func withoutRelated(params json.RawMessage) json.RawMessage {
	meta, ok := rawjson.Member(params, "_meta")
	if !ok {
		return params
	}
	meta = rawjson.DeleteMember(meta, RelatedRequestKey)
	if string(bytes.TrimSpace(meta)) == "{}" {
		return rawjson.DeleteMember(params, "_meta")
	}
	out, _ := rawjson.SetMember(params, "_meta", meta)
	return out
}

// qualify names the bundle as the logger of its messages, keeping the bundle's own logger.
func qualify(bundle, logger string) string {
	if logger == "" {
		return bundle
	}
	return bundle + "/" + logger
}

// forwardProgress passes a bundle's progress to the client whose call it is about. Tokens
// are the node's own, naming the call's id with the process (see send), and taken only
// from the process the call went to: a bundle cannot send progress into another's call. What reaches the client is the progress
// alone, under its own token: the _meta of a bundle's notification (where it relates it to
// the node's request) is between the bundle and the node.
func (n *Node) forwardProgress(inst *instance, params json.RawMessage) {
	var p mcp.ProgressParams
	if json.Unmarshal(params, &p) != nil {
		return
	}
	token, ok := rawjson.String(p.ProgressToken)
	if !ok {
		return
	}
	var f *flight
	if id, ok := upstream.TokenID(token, n.tokenTag); ok {
		inst.mu.Lock()
		f = inst.flights[id]
		inst.mu.Unlock()
	}
	if f == nil {
		n.log.Debug("progress for no call of this process", "token", token)
		return
	}
	f.relay.touch()
	if f.relay.clientToken == nil {
		return // the client did not ask for progress
	}
	p.ProgressToken = f.relay.clientToken
	f.x.Progress(p)
}

func clipRaw(b json.RawMessage) string {
	const max = 200
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(b)
}

// refresh re-reads what a bundle offers after one of its processes said a list changed.
func (n *Node) refresh(b *bundle, inst *instance) {
	ctx, cancel := context.WithTimeout(context.Background(), b.m.Timeouts.Start)
	defer cancel()
	l, err := fetchLists(ctx, inst.client)
	if err != nil {
		b.log.Warn("re-list after list_changed", "error", err)
		return
	}
	n.mu.Lock()
	b.lists = l
	n.mu.Unlock()
	n.rebuild()
	n.surfaceSeen(b, inst, l)
}
