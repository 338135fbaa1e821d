package front

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/audit"
	"github.com/toolnode/toolnode/runtime/internal/clock"
	"github.com/toolnode/toolnode/runtime/internal/node"
	"github.com/toolnode/toolnode/runtime/internal/rpc"
	"github.com/toolnode/toolnode/sdk-go/mcp"
	"github.com/toolnode/toolnode/sdk-go/rawjson"
)

// Tasks, MCP's tasks extension (io.modelcontextprotocol/tasks). A client that declares the
// extension in a request's capabilities may get a task for a tools/call instead of its
// result, and then polls it (tasks/get), answers its questions (tasks/update) and may
// cancel it (tasks/cancel), without holding a request open while the tool works.
//
// The node holds the task of any bundle's tool (taskcall.go): the call to the bundle runs
// as any relayed call does, and the node answers the client's request with the task once
// the call has run for TaskOptions.After, or shows progress, or asks the client something.
// A call that ends before then is answered with its result, as without tasks, unless its
// tool requires a task. A bundle that holds tasks itself (it offers the extension) is left
// to make its own; the node keeps the tasks it makes under ids of its own and relays their
// tasks/* to the process that made them.
//
// A task belongs to the client that made it: its OAuth subject or access client, or for an
// anonymous client its session; an anonymous client without a session (2026-07-28) is
// known by nothing but the task's id, which is unguessable. To anyone else a task does not
// exist (-32602, as an unknown one). A task's id begins with its node's tag, so that any
// node of a cluster can carry its tasks/* to the node holding it.

// TaskOptions time and bound the tasks a front holds. Zero fields take the defaults.
type TaskOptions struct {
	// TTL is how long a task is kept after it is made, result included (its ttlMs); a
	// task still working then is cancelled, and its id is unknown from then on. Default
	// DefaultTaskTTL.
	TTL time.Duration
	// PollInterval is how often clients are asked to poll a task (its pollIntervalMs).
	// Default DefaultTaskPoll.
	PollInterval time.Duration
	// After is how long a call that may become a task runs before the node answers the
	// client with the task; progress or a question of the bundle makes it a task sooner.
	// Default DefaultTaskAfter.
	After time.Duration
	// MaxPerClient bounds the tasks one client holds at once, working or kept; past it a
	// call that would make one is refused. Default DefaultMaxClientTasks.
	MaxPerClient int
	// MaxBytes bounds the bytes of results and errors the node keeps for all tasks
	// together, and MaxClientBytes those of one client's tasks. Both are checked when a
	// task is asked for: a call that would make one while its client's kept results, or
	// all of them, are at their bound is refused before its tool runs. A task admitted is
	// always kept with its result, so that a tool that ran never loses its result: the
	// bounds can be passed by the results of the tasks working when they were reached.
	// A client's results count against MaxBytes only up to MaxClientBytes: what one client
	// keeps past its share never keeps another's task out.
	// Defaults DefaultMaxTaskBytes and DefaultMaxClientTaskBytes.
	MaxBytes       int64
	MaxClientBytes int64
	// Clock is the time tasks are made, updated and expire by, and runs the timers of
	// After and TTL. Default the system's; tests give a clock.Fake to pass a TTL at once.
	Clock clock.Clock
}

// Defaults of TaskOptions.
const (
	DefaultTaskTTL        = time.Hour
	DefaultTaskPoll       = time.Second
	DefaultTaskAfter      = time.Second
	DefaultMaxClientTasks = 100
	DefaultMaxTaskBytes   = 64 << 20

	DefaultMaxClientTaskBytes = 16 << 20
)

func (o TaskOptions) withDefaults() TaskOptions {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.TTL, DefaultTaskTTL)
	def(&o.PollInterval, DefaultTaskPoll)
	def(&o.After, DefaultTaskAfter)
	if o.MaxPerClient <= 0 {
		o.MaxPerClient = DefaultMaxClientTasks
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxTaskBytes
	}
	if o.MaxClientBytes <= 0 {
		o.MaxClientBytes = DefaultMaxClientTaskBytes
	}
	o.Clock = clock.Or(o.Clock)
	return o
}

// taskStore holds a front's tasks.
type taskStore struct {
	srv  *Server
	opts TaskOptions

	mu     sync.Mutex
	byID   map[string]*task
	held   map[string]int   // tasks per client (Identity.bound), calls that may become one included
	kept   map[string]int64 // bytes of results and errors kept per client
	bytes  int64            // results and errors kept, all clients'
	shared int64            // what they take of the pool: each client's kept up to MaxClientBytes
}

func newTaskStore(srv *Server, opts TaskOptions) *taskStore {
	return &taskStore{srv: srv, opts: opts.withDefaults(), byID: map[string]*task{}, held: map[string]int{}, kept: map[string]int64{}}
}

// newTaskID returns an unguessable id under the node's tag.
func (s *taskStore) newTaskID() string {
	var b [18]byte
	_, _ = rand.Read(b[:])
	return s.srv.node.TaskTag() + "." + base64.RawURLEncoding.EncodeToString(b[:])
}

// reserve counts one more task against the client bound; an error past the bound. A task
// whose result the node keeps (keeps) is refused too while the client's kept results, or
// everyone's, are at their bound: refused now, before its tool runs, rather than its
// result lost once it has.
func (s *taskStore) reserve(bound string, keeps bool) *rpc.Error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.held[bound] >= s.opts.MaxPerClient:
		return rpc.Errorf(mcp.CodeInvalidRequest, "too many tasks: this client holds %d, the limit; wait for some to end or cancel them (tasks/cancel)",
			s.opts.MaxPerClient)
	case keeps && s.kept[bound] >= s.opts.MaxClientBytes:
		return rpc.Errorf(mcp.CodeInvalidRequest, "no task is made: this client's tasks keep %d bytes of results, and may keep %d (--max-client-task-bytes); read their results, then cancel them (tasks/cancel) or wait for their ttlMs to pass",
			s.kept[bound], s.opts.MaxClientBytes)
	case keeps && s.shared >= s.opts.MaxBytes:
		return rpc.Errorf(mcp.CodeInvalidRequest, "no task is made: the node's tasks keep %d bytes of results, and may keep %d (--max-task-bytes); try again when some have expired",
			s.bytes, s.opts.MaxBytes)
	}
	s.held[bound]++
	return nil
}

// keepLocked counts n more bytes (fewer when negative) kept for the client bound. What
// they take of the pool (shared) counts each client's up to its share, so that what a
// client keeps past its share (the results of tasks it had working when it reached it)
// never keeps another client's task out. The caller holds s.mu.
func (s *taskStore) keepLocked(bound string, n int64) {
	before := s.kept[bound]
	after := max(before+n, 0)
	if after == 0 {
		delete(s.kept, bound)
	} else {
		s.kept[bound] = after
	}
	s.bytes += n
	s.shared += min(after, s.opts.MaxClientBytes) - min(before, s.opts.MaxClientBytes)
}

// release gives back what a task held: its place among its client's, and its bytes.
func (s *taskStore) release(bound string, size int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held[bound]--; s.held[bound] <= 0 {
		delete(s.held, bound)
	}
	s.keepLocked(bound, -size)
}

// charge counts the n bytes of a result kept for a task of the client bound. It never
// refuses: the task was admitted under the bounds (reserve), and its tool has run.
func (s *taskStore) charge(bound string, n int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keepLocked(bound, n)
}

func (s *taskStore) register(t *task) {
	s.mu.Lock()
	s.byID[t.id] = t
	s.mu.Unlock()
}

// forget drops a task: unknown from then on.
func (s *taskStore) forget(t *task) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byID[t.id] != t {
		return false
	}
	delete(s.byID, t.id)
	return true
}

// Bounds reports the bounds of the tasks for toolnode.status.
func (s *taskStore) bounds() []node.Bound {
	s.mu.Lock()
	defer s.mu.Unlock()
	most, mostBytes := 0, int64(0)
	for _, n := range s.held {
		most = max(most, n)
	}
	for _, n := range s.kept {
		mostBytes = max(mostBytes, n)
	}
	return []node.Bound{
		{Name: "tasks.client_tasks", Limit: int64(s.opts.MaxPerClient), Used: int64(most)},
		{Name: "tasks.client_result_bytes", Limit: s.opts.MaxClientBytes, Used: mostBytes},
		{Name: "tasks.result_bytes", Limit: s.opts.MaxBytes, Used: s.bytes},
	}
}

// reach returns the task id names when the client owner may reach it (it is the
// client's, or anyone's with its id, and allow lets the client use its tool); nil when
// not, as for a task that does not exist.
func (s *taskStore) reach(id, owner string, allow node.Allow) *task {
	s.mu.Lock()
	t := s.byID[id]
	s.mu.Unlock()
	if t == nil || t.owner != "" && t.owner != owner || allow != nil && !allow(t.tool) {
		return nil
	}
	return t
}

// dropOwner cancels and forgets the tasks of an anonymous session that closed: nobody can
// reach them any more.
func (s *taskStore) dropOwner(owner string) {
	s.mu.Lock()
	var gone []*task
	for _, t := range s.byID {
		if t.owner == owner {
			gone = append(gone, t)
		}
	}
	s.mu.Unlock()
	for _, t := range gone {
		t.expire(errors.New("the session that made the task closed"))
	}
}

// tasksExtension is the member of capabilities.extensions that declares tasks.
var tasksExtension = map[string]json.RawMessage{mcp.ExtensionTasks: json.RawMessage(`{}`)}

// optedIn reports whether req's client declared the tasks extension: in the request's own
// capabilities (either era), or for a session in initialize.
func optedIn(p peer, req *node.Request) bool {
	caps, ok := rawjson.Member(req.Meta, mcp.MetaClientCapabilities)
	if !ok {
		caps = p.caller().Caps
	}
	return mcp.DeclaresExtension(caps, mcp.ExtensionTasks)
}

// errNeedsTasks is the -32021 error of a request that needs the tasks extension from a
// client that did not declare it.
func errNeedsTasks(what string) *rpc.Error {
	data, _ := json.Marshal(map[string]any{"requiredCapabilities": map[string]any{"extensions": tasksExtension}})
	return rpc.Errorf(mcp.CodeMissingClientCapability, "%s needs the %q extension, which the request's client capabilities do not declare",
		what, mcp.ExtensionTasks).WithData(data)
}

// errUnknownTask is the error of a tasks/* request for a task that does not exist for the
// caller: never made, expired, or another client's.
func errUnknownTask(id string) *rpc.Error {
	return rpc.Errorf(mcp.CodeInvalidParams, "invalid params: unknown task %q: it was never made, has expired (it is kept for its ttlMs), or is not this client's", id)
}

// serveTask serves a tools/call of c as a task, when it becomes one, and reports whether
// it took the call: false leaves it to the plain way. A tool that requires a task is
// refused (-32021) to a client that did not declare the extension.
func (c *Call) serveTask() bool {
	srv, req := c.peer.base().srv, c.req
	if !optedIn(c.peer, req) {
		if srv.node.RequiresTask(req) {
			err := errNeedsTasks(fmt.Sprintf("tool %q", req.Target()))
			srv.audit(req, c.peer.base().id, c.start, node.Refusal(req, audit.MissingCapability, err), false)
			c.end(nil, err)
			return true
		}
		return false
	}
	mode, bundleHolds := srv.node.TaskSupport(req, c.tool)
	switch {
	case mode == "":
		return false
	case bundleHolds:
		// The bundle decides, and the node keeps whatever task it makes.
		srv.tasks.passThrough(c)
	case mode == mcp.TaskForbidden:
		return false
	default:
		srv.tasks.begin(c, mode == mcp.TaskRequired)
	}
	return true
}

// answerTask answers the client's tools/call with res (a CreateTaskResult, or a result of
// the call that did not become a task), in the client's revision's terms.
func (c *Call) answerTask(res json.RawMessage, err error) {
	c.finish(c.peer.answer(mcp.MethodToolsCall, node.Answer(mcp.MethodToolsCall, res, err)))
}

// ownerOf is the key a task of p's client belongs to, and what it counts against (see
// node.Caller).
func ownerOf(p peer) (owner, bound string) {
	who := p.caller()
	return who.Key, who.Bound
}

// serveTasks serves tasks/get, tasks/update and tasks/cancel for p's client.
func (s *Server) serveTasks(ctx context.Context, p peer, req *node.Request) (any, error) {
	if !optedIn(p, req) {
		return nil, errNeedsTasks(req.Method)
	}
	owner, _ := ownerOf(p)
	if tag, _, _ := strings.Cut(req.TaskID, "."); tag != s.node.TaskTag() {
		if p.caller().Session != nil && p.base().id.key() == "" {
			// An anonymous session's tasks are all on its node: they are the session's.
			return nil, errUnknownTask(req.TaskID)
		}
		res, routed, err := s.node.RouteTask(ctx, tag, node.TaskCaller{Owner: owner, Client: p.base().id.Client}, req.Method, req.Params)
		if !routed {
			return nil, errUnknownTask(req.TaskID)
		}
		return res, err
	}
	return s.tasks.serve(ctx, owner, req)
}

// serveRoutedTask serves a tasks/* request another node of a cluster carried here: its
// front checked the caller's capabilities; the rules of the caller's access client apply
// here.
func (s *Server) serveRoutedTask(ctx context.Context, _ string, caller node.TaskCaller, method string, params json.RawMessage) (json.RawMessage, error) {
	req, rerr := node.ReadRequest(method, params)
	if rerr != nil {
		return nil, rerr
	}
	req.Allow = s.allow(Identity{Client: caller.Client})
	res, err := s.tasks.serve(ctx, caller.Owner, req)
	if err != nil {
		return nil, err
	}
	return rpc.Marshal(res)
}

// serve serves a tasks/* request of the client owner for a task of this node.
func (s *taskStore) serve(ctx context.Context, owner string, req *node.Request) (any, error) {
	t := s.reach(req.TaskID, owner, req.Allow)
	if t == nil {
		return nil, errUnknownTask(req.TaskID)
	}
	if t.bundle != nil {
		return t.relay(ctx, req)
	}
	switch req.Method {
	case mcp.MethodTasksGet:
		return t.snapshot(mcp.ResultTypeComplete), nil
	case mcp.MethodTasksUpdate:
		var responses map[string]json.RawMessage
		if len(req.Responses) > 0 && string(req.Responses) != "null" {
			if err := json.Unmarshal(req.Responses, &responses); err != nil {
				return nil, rpc.Errorf(mcp.CodeInvalidParams, "invalid params: inputResponses must map keys to results: %v", err)
			}
		}
		if err := t.update(responses); err != nil {
			return nil, err
		}
	case mcp.MethodTasksCancel:
		t.cancelByClient()
	}
	return ack, nil
}

// ack is the empty answer of tasks/update and tasks/cancel.
var ack = json.RawMessage(`{"resultType":"complete"}`)

// Task notifications: a subscriptions/listen naming tasks gets notifications/tasks for
// those of them the caller owns, each the task as tasks/get would give it.

// listenTasks attaches l to the tasks of ids its client (owner, as allow lets it) owns,
// and returns the ids agreed to.
func (s *taskStore) listenTasks(l *listener, owner string, allow node.Allow, ids []string) []string {
	var agreed []string
	for _, id := range ids {
		if t := s.reach(id, owner, allow); t != nil && t.listen(l) {
			l.taskIDs[id] = true
			agreed = append(agreed, id)
		}
	}
	return agreed
}

// unlistenTasks detaches l from every task.
func (s *taskStore) unlistenTasks(l *listener) {
	s.mu.Lock()
	tasks := make([]*task, 0, len(l.taskIDs))
	for id := range l.taskIDs {
		if t := s.byID[id]; t != nil {
			tasks = append(tasks, t)
		}
	}
	s.mu.Unlock()
	for _, t := range tasks {
		t.unlisten(l)
	}
}

// sendTask sends a listener notifications/tasks with a task's state, params.
func (l *listener) sendTask(params json.RawMessage) {
	meta, _ := json.Marshal(l.meta())
	if old, ok := rawjson.Member(params, "_meta"); ok {
		meta, _ = rawjson.PutMember(old, mcp.MetaSubscriptionID, json.RawMessage(l.id.String()))
	}
	params, _ = rawjson.PutMember(params, "_meta", meta)
	_ = l.send(context.Background(), rpc.Notification(mcp.NotifyTasks, params))
}

// withTaskID returns a task's JSON (a bundle's) with id as its taskId, and ttl, when
// positive, as its ttlMs.
func withTaskID(raw json.RawMessage, id string, ttl time.Duration) json.RawMessage {
	out, ok := rawjson.SetMember(raw, "taskId", rawjson.AppendString(nil, id))
	if !ok {
		return raw
	}
	if v, has := rawjson.Member(out, "ttlMs"); ttl > 0 && has && string(bytes.TrimSpace(v)) != "null" {
		var ms int64
		if json.Unmarshal(v, &ms) == nil && ms > ttl.Milliseconds() {
			out, _ = rawjson.SetMember(out, "ttlMs", []byte(fmt.Sprint(ttl.Milliseconds())))
		}
	}
	return out
}
