package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/toolnode/toolnode/runtime/manifest"
	"github.com/toolnode/toolnode/runtime/upstream"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// CallTool routes a tools/call from sess to the bundle serving the named tool and returns
// the bundle's result as it sent it. The tool's name is mapped back to the bundle's own and
// a progress token to one unique across sessions; the bundle's progress comes back to sess
// under the client's token. Unknown tools and bad params are *jsonrpc2.Error; a bundle that
// fails or times out gives a result with isError set, naming the bundle, so that the model
// on the other side can act on it.
func (n *Node) CallTool(ctx context.Context, sess Session, params json.RawMessage) (json.RawMessage, error) {
	var p map[string]json.RawMessage
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, invalidParams("tools/call params must be an object with a \"name\"")
	}
	var name string
	if err := json.Unmarshal(p["name"], &name); err != nil || name == "" {
		return nil, invalidParams("tools/call needs a string \"name\"")
	}
	e, ok := n.Catalog().Lookup(name)
	if !ok {
		return nil, invalidParams(fmt.Sprintf("unknown tool %q", name))
	}
	n.mu.Lock()
	b := n.bundles[e.Bundle]
	client, m := b.client, b.m
	n.mu.Unlock()

	if e.Tool != name {
		p["name"], _ = json.Marshal(e.Tool)
	}
	if token, ok := progressToken(p); ok {
		ours := "tn-" + strconv.FormatUint(n.tokens.Add(1), 10)
		n.progress.Store(ours, progressRoute{sess: sess, token: token})
		defer n.progress.Delete(ours)
		setProgressToken(p, ours)
	}
	out, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("encode tools/call: %w", err)
	}

	timeout := m.Timeouts.Call.Std(manifest.DefaultCallTimeout)
	callCtx, cancel := context.WithTimeoutCause(ctx, timeout,
		fmt.Errorf("tool %q of bundle %q did not answer within %s; the bundle was told to cancel", name, e.Bundle, timeout))
	defer cancel()
	res, err := client.Call(callCtx, mcp.MethodToolsCall, json.RawMessage(out))
	var rpcErr *jsonrpc2.Error
	switch {
	case err == nil:
		return res, nil
	case ctx.Err() != nil:
		return nil, context.Cause(ctx)
	case errors.As(err, &rpcErr):
		return nil, rpcErr
	}
	return toolError(err.Error())
}

func toolError(msg string) (json.RawMessage, error) {
	return json.Marshal(mcp.ErrorResult(msg))
}

func invalidParams(msg string) *jsonrpc2.Error {
	return &jsonrpc2.Error{Code: mcp.CodeInvalidParams, Message: msg}
}

func progressToken(p map[string]json.RawMessage) (json.RawMessage, bool) {
	var meta struct {
		ProgressToken json.RawMessage `json:"progressToken"`
	}
	if raw, ok := p["_meta"]; !ok || json.Unmarshal(raw, &meta) != nil || len(meta.ProgressToken) == 0 || string(meta.ProgressToken) == "null" {
		return nil, false
	}
	return meta.ProgressToken, true
}

func setProgressToken(p map[string]json.RawMessage, token string) {
	var meta map[string]json.RawMessage
	_ = json.Unmarshal(p["_meta"], &meta)
	meta["progressToken"], _ = json.Marshal(token)
	p["_meta"], _ = json.Marshal(meta)
}

// SetLogLevel asks every bundle that offers logging to send messages at level and above.
func (n *Node) SetLogLevel(ctx context.Context, level string) {
	n.mu.Lock()
	var clients []*upstream.Client
	for _, b := range n.bundles {
		if b.state == StateReady && b.client.Init.Capabilities.Logging != nil {
			clients = append(clients, b.client)
		}
	}
	n.mu.Unlock()
	for _, c := range clients {
		go func() {
			if _, err := c.Call(ctx, mcp.MethodLoggingSetLevel, mcp.SetLevelParams{Level: level}); err != nil {
				n.log.Named(c.Name()).Debug("logging/setLevel", "error", err)
			}
		}()
	}
}

// bundleHandler receives what one bundle sends on its own.
type bundleHandler struct {
	n *Node
	b *bundle
}

func (h bundleHandler) Notify(c *upstream.Client, method string, params json.RawMessage) {
	switch method {
	case mcp.NotifyProgress:
		h.n.forwardProgress(params)
	case mcp.NotifyMessage:
		var msg mcp.LoggingMessageParams
		if err := json.Unmarshal(params, &msg); err != nil {
			h.b.log.Warn("bad notifications/message", "error", err)
			return
		}
		msg.Logger = qualify(c.Name(), msg.Logger)
		h.n.broadcast(mcp.NotifyMessage, msg)
	case mcp.NotifyToolsListChanged:
		h.n.wg.Add(1)
		go func() {
			defer h.n.wg.Done()
			h.n.refresh(h.b)
		}()
	default:
		h.b.log.Debug("notification from bundle not forwarded", "method", method)
	}
}

func (h bundleHandler) Request(_ context.Context, _ *upstream.Client, method string, _ json.RawMessage) (any, error) {
	return nil, &jsonrpc2.Error{Code: mcp.CodeMethodNotFound, Message: fmt.Sprintf("toolnode does not forward %s yet", method)}
}

// qualify names the bundle as the logger of its messages, keeping the bundle's own logger.
func qualify(bundle, logger string) string {
	if logger == "" {
		return bundle
	}
	return bundle + "/" + logger
}

func (n *Node) forwardProgress(params json.RawMessage) {
	var p map[string]json.RawMessage
	if json.Unmarshal(params, &p) != nil {
		return
	}
	var token string
	if json.Unmarshal(p["progressToken"], &token) != nil {
		return
	}
	v, ok := n.progress.Load(token)
	if !ok {
		n.log.Debug("progress for a call that is over", "token", token)
		return
	}
	route := v.(progressRoute)
	p["progressToken"] = route.token
	_ = route.sess.Notify(context.Background(), mcp.NotifyProgress, p)
}

// refresh re-reads a bundle's tools after it said they changed.
func (n *Node) refresh(b *bundle) {
	n.mu.Lock()
	c, ready := b.client, b.state == StateReady
	n.mu.Unlock()
	if !ready {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), b.m.Timeouts.Start.Std(manifest.DefaultStartTimeout))
	defer cancel()
	tools, err := c.ListTools(ctx)
	if err != nil {
		b.log.Warn("re-list tools after list_changed", "error", err)
		return
	}
	n.mu.Lock()
	b.tools = tools
	n.mu.Unlock()
	n.rebuild()
}
