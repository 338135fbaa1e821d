package front

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/access"
	"github.com/toolnode/toolnode/runtime/internal/audit"
	"github.com/toolnode/toolnode/runtime/internal/catalog"
	"github.com/toolnode/toolnode/runtime/internal/node"
	"github.com/toolnode/toolnode/runtime/internal/rpc"
	"github.com/toolnode/toolnode/runtime/internal/search"
	"github.com/toolnode/toolnode/sdk-go/mcp"
	"github.com/toolnode/toolnode/sdk-go/rawjson"
)

// Each session is one client of the access file (or of none): what it lists, finds with
// toolnode.search and calls, directly or with toolnode.execute, is filtered by that
// client's patterns, and every call is recorded in the audit log.

// client is the access file's entry of the session's client; nil without an access file. A
// client that a reload removed from the file may do nothing.
func (sess *Session) client() *access.Client {
	h := sess.srv.opts.Access
	if h == nil {
		return nil
	}
	if c, ok := h.Policy().Client(sess.clientName); ok {
		return c
	}
	return &access.Client{Name: sess.clientName}
}

// allow is the session's filter for the node, nil when it may call everything.
func (sess *Session) allow() node.Allow {
	c := sess.client()
	if c == nil {
		return nil
	}
	return c.Allowed
}

// listFilter is what tools/list shows the session: its allowed tools, all of them in the
// full view, the node's own and the pinned ones in the search view. nil shows everything.
func (sess *Session) listFilter() func(catalog.Entry) bool {
	c := sess.client()
	view := c.ViewOr(sess.srv.opts.View)
	if c == nil && view != access.ViewSearch {
		return nil
	}
	return func(e catalog.Entry) bool {
		if !c.Allowed(e.Name) {
			return false
		}
		if view != access.ViewSearch || isNodeTool(e.Name) {
			return true
		}
		for _, p := range sess.srv.opts.Pins {
			if p.Match(e.Name) {
				return true
			}
		}
		return false
	}
}

func isNodeTool(name string) bool {
	return name == node.StatusTool || name == search.SearchToolName || name == search.ExecuteToolName
}

// callTool routes a tools/call of the session, filtered by its client, and records it in
// the audit log.
func (sess *Session) callTool(ctx context.Context, ns node.Session, params json.RawMessage, done func(json.RawMessage, error)) {
	n := sess.srv.node
	log := sess.srv.opts.Audit
	if log == nil {
		n.CallToolFor(ctx, ns, params, sess.allow(), done)
		return
	}
	rec := audit.Record{Time: time.Now(), Client: sess.clientName}
	var name string
	if raw, ok := rawjson.Member(params, "name"); ok {
		_ = json.Unmarshal(raw, &name)
	}
	rec.Tool, rec.Arguments = name, memberOf(params, "arguments")
	if name == search.ExecuteToolName {
		rec.Via = name
		if raw, ok := rawjson.Member(rec.Arguments, "name"); ok {
			_ = json.Unmarshal(raw, &rec.Tool)
		}
		rec.Arguments = memberOf(rec.Arguments, "arguments")
	}
	cat := n.Catalog()
	e, known := cat.Lookup(rec.Tool)
	if known {
		rec.Bundle = e.Bundle
	}
	allow := sess.allow()
	n.CallToolFor(ctx, ns, params, allow, func(res json.RawMessage, err error) {
		rec.Duration = time.Since(rec.Time)
		rec.Outcome = auditOutcome(ctx, res, err, known && (allow == nil || allow(rec.Tool)))
		rec.Result = res
		log.Record(rec)
		done(res, err)
	})
}

func memberOf(obj json.RawMessage, key string) json.RawMessage {
	v, _ := rawjson.Member(obj, key)
	return v
}

// auditOutcome names how a call ended, for the audit log.
func auditOutcome(ctx context.Context, res json.RawMessage, err error, allowed bool) string {
	var rpcErr *rpc.Error
	switch {
	case ctx.Err() != nil:
		return audit.Cancelled
	case errors.As(err, &rpcErr) && rpcErr.Code == mcp.CodeInvalidParams && !allowed:
		return audit.Forbidden
	case errors.As(err, &rpcErr) && rpcErr.Code == mcp.CodeInvalidParams:
		return audit.UnknownTool
	case err != nil:
		return audit.Failed
	}
	if v, ok := rawjson.Member(res, "isError"); !ok || string(v) != "true" {
		return audit.OK
	}
	var r struct {
		StructuredContent struct {
			Error *search.ExecError `json:"error"`
		} `json:"structuredContent"`
	}
	if json.Unmarshal(res, &r) == nil && r.StructuredContent.Error != nil {
		switch r.StructuredContent.Error.Kind {
		case search.KindUnknownTool:
			return audit.UnknownTool
		case search.KindInvalidArguments:
			return audit.InvalidArguments
		case search.KindForbidden:
			return audit.Forbidden
		case search.KindTimeout:
			return audit.Timeout
		case search.KindFailed:
			return audit.Failed
		}
	}
	return audit.ToolError
}
