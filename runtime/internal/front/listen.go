package front

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/toolnode/toolnode/runtime/internal/node"

	"github.com/toolnode/toolnode/runtime/internal/rpc"
	"github.com/toolnode/toolnode/sdk-go/mcp"
	"github.com/toolnode/toolnode/sdk-go/rawjson"
)

// listener is one subscriptions/listen stream of a 2026-07-28 client: it receives the node's
// broadcasts as a session does and passes on those the client asked for, tagged with the
// listen request's id.
type listener struct {
	srv  *Server
	id   rpc.ID
	send func(ctx context.Context, m *rpc.Message) error

	tools, prompts, resources bool
	mu                        sync.Mutex      // guards uris: the node's broadcasts read it while Listen fills it
	uris                      map[string]bool // the resources whose updates it gets
	taskIDs                   map[string]bool // the tasks whose notifications/tasks it gets
	closeOnce                 sync.Once
}

// listenFilter is the notifications member of subscriptions/listen.
type listenFilter struct {
	ToolsListChanged      bool     `json:"toolsListChanged,omitempty"`
	PromptsListChanged    bool     `json:"promptsListChanged,omitempty"`
	ResourcesListChanged  bool     `json:"resourcesListChanged,omitempty"`
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitempty"`
	TaskIDs               []string `json:"taskIds,omitempty"`
}

// Listener is one subscriptions/listen stream; Close ends it.
type Listener = listener

// Listen attaches a listener for the subscriptions/listen request id of v's client, whose
// params are req's, and returns it with its acknowledgment, which names what the node agreed
// to send: the lists it asked about that some bundle offers, and the resources among those
// it asked to watch that exist and the caller may read. It waits for the bundles' first
// start, so that it agrees to what they offer. send carries the notifications to the client.
func (s *Server) Listen(ctx context.Context, v *Stateless, id rpc.ID, req *node.Request, send func(context.Context, *rpc.Message) error) (*Listener, *rpc.Message, *rpc.Error) {
	var p struct {
		Notifications listenFilter `json:"notifications"`
	}
	if len(req.Params) > 0 {
		if err := json.Unmarshal(req.Params, &p); err != nil {
			return nil, nil, rpc.Errorf(mcp.CodeInvalidParams, "invalid params: notifications: %v", err)
		}
	}
	if len(p.Notifications.TaskIDs) > 0 && !optedIn(v, req) {
		return nil, nil, errNeedsTasks("notifications about tasks")
	}
	if err := s.waitReady(ctx); err != nil {
		return nil, nil, rpc.AsError(err)
	}
	allow := s.allow(v.id)
	o := s.node.Offers()
	f := p.Notifications
	l := &listener{srv: s, id: id, send: send, uris: map[string]bool{}, taskIDs: map[string]bool{},
		tools: f.ToolsListChanged, prompts: f.PromptsListChanged && o.Prompts, resources: f.ResourcesListChanged && o.Resources}
	s.node.Attach(l)
	agreed := listenFilter{ToolsListChanged: l.tools, PromptsListChanged: l.prompts, ResourcesListChanged: l.resources}
	for _, uri := range f.ResourceSubscriptions {
		sub := &node.Request{Method: mcp.MethodResourcesSub, URI: uri, Allow: allow}
		sub.Params, _ = json.Marshal(map[string]string{"uri": uri})
		if _, err := s.node.Subscribe(ctx, node.Detached(l, node.Caller{Session: l}, nil), sub); err == nil {
			l.mu.Lock()
			l.uris[uri] = true
			l.mu.Unlock()
			agreed.ResourceSubscriptions = append(agreed.ResourceSubscriptions, uri)
		}
	}
	if len(f.TaskIDs) > 0 {
		agreed.TaskIDs = s.tasks.listenTasks(l, v.id.key(), allow, f.TaskIDs)
	}
	b, _ := json.Marshal(map[string]any{"_meta": l.meta(), "notifications": agreed})
	return l, rpc.Notification(mcp.NotifySubscriptionsAcknowledged, b), nil
}

func (l *listener) meta() map[string]json.RawMessage {
	return map[string]json.RawMessage{mcp.MetaSubscriptionID: json.RawMessage(l.id.String())}
}

// EndResult is the answer that ends the stream gracefully.
func (l *listener) EndResult() json.RawMessage {
	b, _ := json.Marshal(map[string]any{"resultType": mcp.ResultTypeComplete, "_meta": l.meta()})
	return b
}

// Close ends the listener.
func (l *listener) Close() {
	l.closeOnce.Do(func() {
		l.srv.node.Detach(l)
		l.srv.tasks.unlistenTasks(l)
	})
}

// Notify implements node.Session: the node's broadcasts, filtered by what the client asked.
func (l *listener) Notify(ctx context.Context, method string, params any) error {
	switch method {
	case mcp.NotifyToolsListChanged:
		if !l.tools {
			return nil
		}
	case mcp.NotifyPromptsListChanged:
		if !l.prompts {
			return nil
		}
	case mcp.NotifyResourcesChanged:
		if !l.resources {
			return nil
		}
	case mcp.NotifyResourceUpdated:
		raw, _ := rpc.Marshal(params)
		var p struct {
			URI string `json:"uri"`
		}
		if json.Unmarshal(raw, &p) != nil || !l.watches(p.URI) {
			return nil
		}
	default:
		return nil // progress and log messages belong to the request they are about
	}
	raw, err := rpc.Marshal(params)
	if err != nil {
		return err
	}
	if len(raw) == 0 || string(raw) == "null" {
		raw = json.RawMessage(`{}`)
	}
	meta, _ := json.Marshal(l.meta())
	if old, ok := rawjson.Member(raw, "_meta"); ok {
		meta, _ = rawjson.PutMember(old, mcp.MetaSubscriptionID, json.RawMessage(l.id.String()))
	}
	raw, _ = rawjson.PutMember(raw, "_meta", meta)
	return l.send(ctx, rpc.Notification(method, raw))
}

// watches reports whether the listener gets the updates of the resource uri.
func (l *listener) watches(uri string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.uris[uri]
}

// Request implements node.Client: a listen stream takes no requests.
func (l *listener) Request(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return nil, rpc.Errorf(mcp.CodeInternalError, "a subscription stream takes no requests")
}
