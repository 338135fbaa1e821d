package node

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/toolnode/toolnode/runtime/internal/catalog"
	"github.com/toolnode/toolnode/runtime/internal/manifest"
	"github.com/toolnode/toolnode/runtime/internal/rpc"
	"github.com/toolnode/toolnode/runtime/internal/upstream"
	"github.com/toolnode/toolnode/sdk-go/mcp"
	"github.com/toolnode/toolnode/sdk-go/rawjson"
)

// Tasks (MCP's tasks extension): the front holds the tasks of the calls it makes into
// tasks; the node tells it what each tool allows, makes the calls of tasks, relays the
// tasks/* requests of tasks a bundle holds itself to the process that made them, and
// carries tasks/* to the node of a cluster that holds a task.
//
// What a tool allows comes from its own listing (execution.taskSupport), which the
// bundle's "tasks" key overrides when the catalog is built; a tool that says nothing
// allows a task. The node's own tools never run as tasks.

// nodeTasks is the node's share of the tasks machinery.
type nodeTasks struct {
	tagOnce sync.Once
	tag     string

	required atomic.Pointer[requiredTools]

	mu      sync.Mutex
	watches map[watchKey]func(json.RawMessage) // notifications/tasks of bundle-held tasks, by process and the bundle's id
	route   TaskRoute                          // to the node of a cluster holding a task; nil outside a cluster
	serve   TaskRoute                          // the front's, for tasks/* other nodes carry here
}

type watchKey struct {
	inst *instance
	id   string
}

// requiredTools are the tools of one catalog that require a task.
type requiredTools struct {
	cat   *catalog.Catalog
	names map[string]bool
}

// TaskTag is what the ids of this node's tasks begin with, before a dot: the node that
// holds a task is found by it in a cluster. It is random, made once per run.
func (n *Node) TaskTag() string {
	n.tasks.tagOnce.Do(func() {
		var b [6]byte
		_, _ = rand.Read(b[:])
		n.tasks.tag = hex.EncodeToString(b[:])
	})
	return n.tasks.tag
}

// TaskSupport says whether a call of req (a tools/call) to the tool t may
// (mcp.TaskOptional), must (mcp.TaskRequired) or must not (mcp.TaskForbidden) become a
// task, and whether the bundle serving the tool holds its tasks itself (it speaks
// 2026-07-28 and offers the tasks extension), so that the node passes them through. "" for
// a tool the caller cannot reach: its call fails as it would without tasks.
func (n *Node) TaskSupport(req *Request, t Tool) (mode string, bundleHolds bool) {
	e, ok := t.entry()
	if !ok || !req.Allow.allows(e.Name) {
		return "", false
	}
	p := n.providerOf(e.Bundle)
	if mode = p.taskMode(e); mode == mcp.TaskForbidden {
		return mode, false
	}
	return mode, p.holdsTasks()
}

// RequiresTask reports whether a call to the tool req names must be a task: asked for
// every call of a client that did not declare the extension, so it reads a set made once
// per catalog.
func (n *Node) RequiresTask(req *Request) bool {
	cat := n.Catalog()
	r := n.tasks.required.Load()
	if r == nil || r.cat != cat {
		r = &requiredTools{cat: cat, names: map[string]bool{}}
		for _, e := range cat.Entries() {
			if n.providerOf(e.Bundle).taskMode(e) == mcp.TaskRequired {
				r.names[e.Name] = true
			}
		}
		n.tasks.required.Store(r)
	}
	if len(r.names) == 0 {
		return false
	}
	name := req.Target()
	return r.names[name] && req.Allow.allows(name)
}

// toolTaskSupport reads a listed tool's execution.taskSupport; optional when it has none.
func toolTaskSupport(tool json.RawMessage) string {
	exec, ok := rawjson.Member(tool, "execution")
	if !ok {
		return mcp.TaskOptional
	}
	v, _ := rawjson.Member(exec, "taskSupport")
	if s, ok := rawjson.String(v); ok && mcp.ValidTaskSupport(s) {
		return s
	}
	return mcp.TaskOptional
}

// taskTools returns a bundle's tools as the catalog lists them: with execution.taskSupport
// set as its manifest's "tasks" key says, where it says something.
func taskTools(m *manifest.Manifest, tools []json.RawMessage) []json.RawMessage {
	if len(m.Tasks) == 0 {
		return tools
	}
	out := make([]json.RawMessage, len(tools))
	for i, t := range tools {
		out[i] = t
		raw, _ := rawjson.Member(t, "name")
		name, ok := rawjson.String(raw)
		mode := m.TaskSupport(name)
		if !ok || mode == "" {
			continue
		}
		exec, ok := rawjson.Member(t, "execution")
		if !ok || len(exec) == 0 || exec[0] != '{' {
			exec = []byte(`{}`)
		}
		exec, _ = rawjson.PutMember(exec, "taskSupport", rawjson.AppendString(nil, mode))
		if edited, ok := rawjson.PutMember(t, "execution", exec); ok {
			out[i] = edited
		}
	}
	return out
}

// CallToolTask routes the tools/call of a task to the tool t (see FindTool) as CallTool
// does, but passes every outcome as it is: a bundle that fails, crashes or times out under
// the call fails the task with that error, rather than answering a tool result.
func (n *Node) CallToolTask(ctx context.Context, x Exchange, req *Request, t Tool) {
	n.callTool(n.shapedCall(new(call), ctx, x, req, settleAsIs), t)
}

// BundleTask is a task a bundle holds itself: the process that made it and the bundle's
// own id of it.
type BundleTask struct {
	Bundle string
	// ID is the bundle's id of the task.
	ID   string
	inst *instance
}

// BundleTaskOf reads the task a bundle made of a call (relayed with CallTool or
// CallToolTask) from its Outcome, a CreateTaskResult; false when it answered none.
func (n *Node) BundleTaskOf(o Outcome) (*BundleTask, bool) {
	if o.ResultType != mcp.ResultTypeTask || o.served == nil {
		return nil, false
	}
	id, _ := rawjson.Member(o.Result, "taskId")
	taskID, ok := rawjson.String(id)
	if !ok || taskID == "" {
		return nil, false
	}
	return &BundleTask{Bundle: o.Bundle, ID: taskID, inst: o.served}, true
}

// tasksCaps are the capabilities the node declares to a bundle in the tasks/* requests it
// relays: a bundle refuses them from a client without the extension.
var tasksCaps = json.RawMessage(`{"extensions":{"` + mcp.ExtensionTasks + `":{}}}`)

// ErrTaskProcessGone is wrapped by the error of a tasks/* request for a task whose bundle
// process has exited: the task went with it.
var ErrTaskProcessGone = errors.New("the bundle process that held the task has exited")

// SendTask relays a tasks/* request (method, with params as the client sent them) to the
// process that holds t, under the bundle's id of the task; the answer comes back as the
// bundle gave it (its taskId the bundle's).
func (n *Node) SendTask(ctx context.Context, t *BundleTask, method string, params json.RawMessage) (json.RawMessage, error) {
	select {
	case <-t.inst.client.Done():
		return nil, fmt.Errorf("bundle %q: %w (%s)", t.Bundle, ErrTaskProcessGone, t.inst.client.ExitStatus())
	default:
	}
	out := map[string]json.RawMessage{"taskId": rawjson.AppendString(nil, t.ID)}
	if method == mcp.MethodTasksUpdate {
		responses, ok := rawjson.Member(params, "inputResponses")
		if !ok {
			responses = json.RawMessage(`{}`)
		}
		out["inputResponses"] = responses
	}
	b, _ := json.Marshal(out)
	res, err := rpc.CallWait(ctx, taskPeer{t.inst.client}, method, b, nil)
	if errors.Is(err, upstream.ErrGone) {
		return nil, fmt.Errorf("bundle %q: %w: %v", t.Bundle, ErrTaskProcessGone, err)
	}
	return res, err
}

// taskPeer sends tasks/* to a bundle process as a client that declared the extension.
type taskPeer struct{ c *upstream.Client }

func (p taskPeer) Expect(done rpc.Done) (rpc.ID, error) { return p.c.Expect(done) }
func (p taskPeer) Request(id rpc.ID, method string, params json.RawMessage) error {
	return p.c.Send(id, method, params, upstream.Edit{Caller: upstream.Caller{Caps: tasksCaps}})
}
func (p taskPeer) Forget(id rpc.ID) bool { return p.c.Abandon(id, "the client no longer waits") }

// WatchTask asks the process holding t for its notifications/tasks about t, on a
// subscriptions/listen of their own, and gives each one's params to note (the bundle's
// id in it); stop ends the watch.
func (n *Node) WatchTask(t *BundleTask, note func(params json.RawMessage)) (stop func(), err error) {
	key := watchKey{t.inst, t.ID}
	c := t.inst.client
	n.tasks.mu.Lock()
	if n.tasks.watches == nil {
		n.tasks.watches = map[watchKey]func(json.RawMessage){}
	}
	n.tasks.watches[key] = note
	n.tasks.mu.Unlock()
	forget := func() {
		n.tasks.mu.Lock()
		delete(n.tasks.watches, key)
		n.tasks.mu.Unlock()
	}
	id, err := c.Expect(func(json.RawMessage, error) {})
	if err == nil {
		params, _ := json.Marshal(map[string]any{"notifications": map[string]any{"taskIds": []string{t.ID}}})
		err = c.Send(id, mcp.MethodSubscriptionsListen, params, upstream.Edit{Caller: upstream.Caller{Caps: tasksCaps}})
	}
	if err != nil {
		forget()
		return nil, fmt.Errorf("subscriptions/listen to bundle %q: %w", t.Bundle, err)
	}
	return func() {
		forget()
		c.Abandon(id, "no client listens any more")
	}, nil
}

// taskNote passes a bundle's notifications/tasks to whoever watches that task.
func (n *Node) taskNote(inst *instance, params json.RawMessage) {
	raw, _ := rawjson.Member(params, "taskId")
	id, _ := rawjson.String(raw)
	n.tasks.mu.Lock()
	note := n.tasks.watches[watchKey{inst, id}]
	n.tasks.mu.Unlock()
	if note != nil {
		note(params)
	}
}

// TaskCaller is who sends a tasks/* request carried between the nodes of a cluster.
type TaskCaller struct {
	// Owner is the caller's key for the ownership of tasks: its OAuth subject or access
	// client, "" for an anonymous one.
	Owner string `json:"owner,omitempty"`
	// Client is its access file's client, whose rules apply.
	Client string `json:"client,omitempty"`
}

// TaskRoute serves a tasks/* request of caller for a task whose id begins with tag.
type TaskRoute func(ctx context.Context, tag string, caller TaskCaller, method string, params json.RawMessage) (json.RawMessage, error)

// SetTaskRoute registers how tasks/* reach another node of a cluster (the cluster's).
func (n *Node) SetTaskRoute(r TaskRoute) {
	n.tasks.mu.Lock()
	n.tasks.route = r
	n.tasks.mu.Unlock()
}

// SetTaskServer registers what serves the tasks/* requests of this node's tasks that other
// nodes carry here (the front's).
func (n *Node) SetTaskServer(s TaskRoute) {
	n.tasks.mu.Lock()
	n.tasks.serve = s
	n.tasks.mu.Unlock()
}

// RouteTask carries a tasks/* request for a task another node holds to that node; false
// when the node is in no cluster.
func (n *Node) RouteTask(ctx context.Context, tag string, caller TaskCaller, method string, params json.RawMessage) (json.RawMessage, bool, error) {
	n.tasks.mu.Lock()
	route := n.tasks.route
	n.tasks.mu.Unlock()
	if route == nil {
		return nil, false, nil
	}
	res, err := route(ctx, tag, caller, method, params)
	return res, true, err
}

// ServeTask serves a tasks/* request another node of the cluster carried here, or the read
// of a result this node keeps (resources/read of a toolnode://result/ URI).
func (n *Node) ServeTask(ctx context.Context, caller TaskCaller, method string, params json.RawMessage) (json.RawMessage, error) {
	if method == mcp.MethodResourcesRead {
		uri, _ := rawjson.Member(params, "uri")
		s, _ := rawjson.String(uri)
		if r, ok := parseResultURI(s); !ok || !strings.HasPrefix(r.id, n.TaskTag()+"-") {
			return nil, resourceNotFound(s)
		}
		return n.readResult(ctx, caller.Owner, s)
	}
	n.tasks.mu.Lock()
	serve := n.tasks.serve
	n.tasks.mu.Unlock()
	if serve == nil {
		return nil, rpc.Errorf(mcp.CodeInvalidParams, "invalid params: unknown task: node serves no tasks")
	}
	return serve(ctx, n.TaskTag(), caller, method, params)
}
