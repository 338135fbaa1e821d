package front

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/audit"
	"github.com/toolnode/toolnode/runtime/internal/clock"
	"github.com/toolnode/toolnode/runtime/internal/node"
	"github.com/toolnode/toolnode/runtime/internal/rpc"
	"github.com/toolnode/toolnode/sdk-go/mcp"
	"github.com/toolnode/toolnode/sdk-go/rawjson"
)

// A task the node holds is the node.Exchange of its call to the bundle, from the client's
// tools/call on. Until it starts (pending), the client's request waits: a call that ends
// then is answered with its outcome; a 2026 bundle's input_required answer goes to a
// stateless client as it is (the client calls again, and that call may become the task).
// The task starts when the call has run for TaskOptions.After, shows progress, asks the
// client something, or (a tool that requires a task) ends: the request is answered with
// the task, which the client polls from then on. While it works, the bundle's progress is
// its status message, and what the bundle asks is the task's inputRequests, answered with
// tasks/update: by the answer to the bundle's request (2025 era), or by calling the bundle
// again with the answers (2026-07-28). Its end (the result, the error, or the
// cancellation) is kept until the task's TTL.

type taskState uint8

const (
	taskPending taskState = iota // the client's tools/call waits
	taskStarted                  // the client has the task
	taskDropped                  // no task came of the call (the client left first)
)

// task is one task: held by the node (its call runs here), or by a bundle (bundle set).
type task struct {
	s      *taskStore
	id     string
	owner  string   // whose it is (node.Caller's Key); "" anyone holding the id
	bound  string   // what it counts against (Identity.bound)
	caller Identity // for the audit log
	tool   string   // the catalog's name of the tool, for the access rules
	start  time.Time

	// Set for a task the node holds.
	peer     peer            // the client that made it, for what comes before it starts
	who      node.Caller     // the client as the node reads it
	req      *node.Request   // the tools/call as the bundle gets it
	required bool            // the tool requires a task
	found    node.Tool       // the tool's catalog entry, found when the call was routed
	ctx      context.Context // the work's: ends when the task is cancelled or expires
	cancel   context.CancelCauseFunc
	bundle   *node.BundleTask // set for a task a bundle holds

	mu        sync.Mutex
	state     taskState
	call      *Call // the client's request, while pending
	stopWatch func() bool
	after     clock.Timer
	running   bool // a call to the bundle is in flight
	status    string
	message   string
	created   time.Time
	updated   time.Time
	result    json.RawMessage // completed: the tool's result
	failure   json.RawMessage // failed: the JSON-RPC error
	size      int64           // bytes of result or failure charged to the store
	asks      map[string]*taskAsk
	seq       int
	round     *taskRound // a 2026 bundle's question round, open
	expiry    clock.Timer
	audited   bool
	listeners map[*listener]bool
	stopNote  func()       // ends the watch of a bundle-held task's notifications
	gone      bool         // expired or dropped
	last      node.Outcome // of the task's last call to the bundle: what the node did, for the audit log
}

// taskAsk is one question of the bundle the client has to answer.
type taskAsk struct {
	method string
	params json.RawMessage
	answer chan json.RawMessage // a 2025 bundle's request waiting; nil for a 2026 bundle's round
	key    string               // the bundle's key of the question in its round
}

// taskRound is a 2026 bundle's input_required answer: the task calls again with the
// answers, under the bundle's requestState, once every question has one.
type taskRound struct {
	state   string
	answers map[string]json.RawMessage
	left    int
}

// taskToken stands for the client's progress token in a task's call when it gave none: the
// node passes progress only to calls whose client asked for it, and a task always wants it.
var taskToken = json.RawMessage(`"task"`)

// begin serves c, a tools/call of a client that declared the extension to a tool that
// allows a task, as a task the node holds.
func (s *taskStore) begin(c *Call, required bool) {
	owner, bound := ownerOf(c.peer)
	if err := s.reserve(bound, true); err != nil {
		s.srv.audit(c.req, c.peer.base().id, c.start, node.Refusal(c.req, audit.Failed, err), false)
		c.end(nil, err)
		return
	}
	inner := *c.req
	if inner.ProgressToken == nil {
		inner.ProgressToken = taskToken
	}
	t := &task{s: s, id: s.newTaskID(), owner: owner, bound: bound, caller: c.peer.base().id, tool: c.req.Target(),
		start: c.start, peer: c.peer, req: &inner, required: required, found: c.tool, status: mcp.TaskWorking, asks: map[string]*taskAsk{}}
	// A task outlives its client's requests, and its session: nothing of it ends with them.
	t.who = c.Caller()
	t.who.Key, t.who.Bound, t.who.Ended, t.who.Session = owner, bound, nil, nil
	if t.start.IsZero() {
		t.start = s.opts.Clock.Now()
	}
	// The work outlives the request (the client polls it), but keeps its values: the
	// trace it belongs to.
	t.ctx, t.cancel = context.WithCancelCause(context.WithoutCancel(c.ctx))
	t.mu.Lock()
	t.call, t.running = c, true
	t.stopWatch = context.AfterFunc(c.ctx, t.clientLeft)
	t.after = s.opts.Clock.AfterFunc(s.opts.After, t.startIdle)
	t.mu.Unlock()
	s.srv.node.CallToolTask(t.ctx, t, t.req, t.found)
}

// clientLeft ends a call whose client left before it became a task.
func (t *task) clientLeft() {
	t.mu.Lock()
	if t.state != taskPending {
		t.mu.Unlock()
		return
	}
	t.state = taskDropped
	t.after.Stop()
	c := t.call
	t.mu.Unlock()
	t.cancel(fmt.Errorf("the client left before the call became a task: %w", context.Cause(c.ctx)))
}

// startIdle makes the task of a call that has run for TaskOptions.After.
func (t *task) startIdle() {
	t.mu.Lock()
	answer := t.startLocked()
	t.mu.Unlock()
	answer()
}

// startLocked makes the task of a pending call and returns what answers the client's
// request with it; the caller holds t.mu and runs the answer once it has let go.
func (t *task) startLocked() func() {
	if t.state != taskPending {
		return func() {}
	}
	t.state = taskStarted
	t.after.Stop()
	t.stopWatch()
	now := t.s.opts.Clock.Now()
	t.created, t.updated = now, now
	t.s.register(t) // before the answer: a tasks/get right after it finds the task
	t.expiry = t.s.opts.Clock.AfterFunc(t.s.opts.TTL, func() { t.expire(errors.New("the task's ttl has passed")) })
	c := t.call
	t.call = nil
	return func() { c.answerTask(t.snapshot(mcp.ResultTypeTask), nil) }
}

// Caller implements node.Exchange: the task's client, as its request described it. A
// 2026 bundle is told the client's capabilities, so that it asks only what the client can
// answer; log messages reach the client only before its request is answered, so a bundle
// is asked for what the client's request asked.
func (t *task) Caller() node.Caller { return t.who }

// Progress implements node.Exchange: progress makes the task (and then is its status
// message).
func (t *task) Progress(p mcp.ProgressParams) {
	msg := progressMessage(p)
	t.mu.Lock()
	answer := t.startLocked()
	changed := t.state == taskStarted && !mcp.TaskTerminal(t.status) && msg != t.message
	if changed {
		t.message, t.updated = msg, t.s.opts.Clock.Now()
	}
	t.mu.Unlock()
	answer()
	if changed {
		t.announce()
	}
}

// Log implements node.Exchange: a log message goes to the client's request while it
// waits, and nowhere once the request is answered (a task carries none).
func (t *task) Log(m mcp.LoggingMessageParams) {
	t.mu.Lock()
	c := t.call
	t.mu.Unlock()
	if c != nil {
		c.Log(m)
	}
}

// Watch implements node.Exchange: the task's call ends with the task's context.
func (t *task) Watch(node.Abandoner) bool { return false }

// progressMessage is the status message a progress notification makes: its message, else
// how far it has got.
func progressMessage(p mcp.ProgressParams) string {
	switch {
	case p.Message != "":
		return p.Message
	case p.Total != nil && *p.Total > 0:
		return fmt.Sprintf("progress %g of %g", p.Progress, *p.Total)
	}
	return fmt.Sprintf("progress %g", p.Progress)
}

// Ask implements node.Exchange: what a bundle of the 2025 era asks the client becomes an
// input request of the task (starting it), and waits for tasks/update to answer it.
func (t *task) Ask(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	need := capabilityFor(method)
	if need == "" {
		return nil, rpc.Errorf(mcp.CodeMethodNotFound, "method %q not found", method)
	}
	if !t.peer.capable(need) {
		return nil, missingCapability(need, method)
	}
	t.mu.Lock()
	if t.state == taskDropped || t.gone || mcp.TaskTerminal(t.status) {
		t.mu.Unlock()
		return nil, errors.New("the task has ended")
	}
	answer := t.startLocked()
	a := &taskAsk{method: method, params: params, answer: make(chan json.RawMessage, 1)}
	key := t.askLocked(a)
	t.mu.Unlock()
	answer()
	t.announce()
	select {
	case v, ok := <-a.answer:
		if !ok {
			return nil, errors.New("the task ended before the client answered")
		}
		return v, nil
	case <-ctx.Done():
		t.mu.Lock()
		if t.asks[key] == a {
			delete(t.asks, key)
			t.settleAsksLocked()
		}
		t.mu.Unlock()
		return nil, context.Cause(ctx)
	}
}

// askLocked adds a question under a key unique in the task's life, and returns the key;
// the caller holds t.mu.
func (t *task) askLocked(a *taskAsk) string {
	t.seq++
	key := capabilityFor(a.method) + "-" + strconv.Itoa(t.seq)
	t.asks[key] = a
	t.status, t.message, t.updated = mcp.TaskInputRequired, "waiting for the client's input", t.s.opts.Clock.Now()
	return key
}

// settleAsksLocked puts a task whose questions are all answered back to work; the caller
// holds t.mu.
func (t *task) settleAsksLocked() {
	if len(t.asks) == 0 && t.status == mcp.TaskInputRequired {
		t.status, t.message, t.updated = mcp.TaskWorking, "", t.s.opts.Clock.Now()
	}
}

// update takes the client's answers (tasks/update): those to questions open now go to
// them; the others are ignored, as the extension asks. A 2026 bundle is called again once
// every question of its round has an answer.
func (t *task) update(responses map[string]json.RawMessage) *rpc.Error {
	t.mu.Lock()
	for k, v := range responses {
		if _, open := t.asks[k]; open && (len(v) == 0 || v[0] != '{') {
			t.mu.Unlock()
			return rpc.Errorf(mcp.CodeInvalidParams, "invalid params: inputResponses[%q] must be a result object", k)
		}
	}
	for k, v := range responses {
		a := t.asks[k]
		if a == nil {
			continue
		}
		delete(t.asks, k)
		if a.answer != nil {
			a.answer <- v
		} else if t.round != nil {
			t.round.answers[a.key] = v
			t.round.left--
		}
	}
	var again *node.Request
	if r := t.round; r != nil && r.left <= 0 {
		again, t.round, t.running = t.retryLocked(r), nil, true
	}
	t.settleAsksLocked()
	t.mu.Unlock()
	t.announce()
	if again != nil {
		t.s.srv.node.CallToolTask(t.ctx, t, again, t.found)
	}
	return nil
}

// retryLocked is the call again of a 2026 bundle, with the answers of round r; the caller
// holds t.mu.
func (t *task) retryLocked(r *taskRound) *node.Request {
	b, _ := json.Marshal(r.answers)
	params, _ := rawjson.PutMember(t.req.Params, "inputResponses", b)
	if r.state != "" {
		params, _ = rawjson.PutMember(params, "requestState", rawjson.AppendString(nil, r.state))
	} else {
		params = rawjson.DeleteMember(params, "requestState")
	}
	next := *t.req
	next.Params = params
	t.req = &next
	return t.req
}

// CallDone receives the Outcome of the task's call to the bundle (it implements
// node.Exchange).
func (t *task) CallDone(o node.Outcome) {
	asking := o.InputRequired()
	t.mu.Lock()
	t.running = false
	t.last = o
	switch t.state {
	case taskDropped:
		c := t.call
		t.call = nil
		t.mu.Unlock()
		t.s.release(t.bound, 0)
		t.auditOnce(o.Translated(nil, context.Cause(t.ctx)), true)
		if c != nil {
			c.end(nil, context.Cause(t.ctx))
		}
		return
	case taskPending:
		if o.Refused || asking && !t.peer.asksInline() || !asking && !t.required {
			// No task: the call answers as it would without one.
			t.state = taskDropped
			t.after.Stop()
			t.stopWatch()
			c := t.call
			t.call, t.audited = nil, true // by the call's own answer
			t.mu.Unlock()
			t.s.release(t.bound, 0)
			// As without tasks: the bundle's failure is a tool result the model can read.
			c.audited(o.SettledAsTool())
			return
		}
		answer := t.startLocked()
		defer answer() // after the task's outcome is set: the client's first look sees it
	}
	if t.gone { // expired while the call ran: nothing is kept
		t.mu.Unlock()
		t.auditOnce(o, true)
		return
	}
	if asking && t.status != mcp.TaskCancelled {
		t.openRoundLocked(o.Result)
		t.mu.Unlock()
		t.announce()
		return
	}
	if t.status != mcp.TaskCancelled {
		t.settleLocked(o.Result, o.Err)
	}
	t.mu.Unlock()
	t.auditOnce(o, t.statusIs(mcp.TaskCancelled))
	t.announce()
}

// openRoundLocked makes a 2026 bundle's input_required answer the task's questions; the
// caller holds t.mu.
func (t *task) openRoundLocked(res json.RawMessage) {
	var ir mcp.InputRequiredResult
	if err := json.Unmarshal(res, &ir); err != nil || len(ir.InputRequests) == 0 {
		t.settleLocked(nil, rpc.Errorf(mcp.CodeInternalError, "the bundle asked for input without saying what (its input_required answer has no inputRequests)"))
		return
	}
	for _, q := range ir.InputRequests {
		if need := capabilityFor(q.Method); need == "" || !t.peer.capable(need) {
			t.settleLocked(nil, missingCapability(need, q.Method))
			return
		}
	}
	t.round = &taskRound{state: ir.RequestState, answers: map[string]json.RawMessage{}, left: len(ir.InputRequests)}
	for key, q := range ir.InputRequests {
		t.askLocked(&taskAsk{method: q.Method, params: q.Params, key: key})
	}
}

// settleLocked ends the task with the call's outcome, kept whatever its size (see
// TaskOptions.MaxBytes); the caller holds t.mu.
func (t *task) settleLocked(res json.RawMessage, err error) {
	now := t.s.opts.Clock.Now()
	t.updated = now
	t.closeAsksLocked()
	if err == nil {
		t.status, t.message, t.result, t.size = mcp.TaskCompleted, "", res, int64(len(res))
	} else {
		e := rpc.AsError(err)
		t.failure, _ = json.Marshal(e)
		t.status, t.message, t.size = mcp.TaskFailed, e.Message, int64(len(t.failure))
	}
	t.s.charge(t.bound, t.size)
}

// closeAsksLocked ends every question open; the caller holds t.mu.
func (t *task) closeAsksLocked() {
	for k, a := range t.asks {
		if a.answer != nil {
			close(a.answer)
		}
		delete(t.asks, k)
	}
	t.round = nil
}

func (t *task) statusIs(status string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.status == status
}

// errTaskCancelled ends the work of a task its client cancelled.
var errTaskCancelled = errors.New("the client cancelled the task (tasks/cancel)")

// cancelByClient serves tasks/cancel: the task is cancelled at once, and the bundle told
// to cancel its call. A task that has ended stays as it is.
func (t *task) cancelByClient() {
	t.mu.Lock()
	if t.state != taskStarted || mcp.TaskTerminal(t.status) {
		t.mu.Unlock()
		return
	}
	t.status, t.message, t.updated = mcp.TaskCancelled, "cancelled by the client", t.s.opts.Clock.Now()
	t.closeAsksLocked()
	running := t.running
	t.mu.Unlock()
	t.cancel(errTaskCancelled)
	if !running { // waiting for answers: no call will end to record it
		t.mu.Lock()
		last := t.last
		t.mu.Unlock()
		t.auditOnce(last.Translated(nil, errTaskCancelled), true)
	}
	t.announce()
}

// expire forgets a task past its TTL (or one nobody can reach any more), cancelling its
// work if it still runs.
func (t *task) expire(why error) {
	if !t.s.forget(t) {
		return
	}
	t.mu.Lock()
	t.gone = true
	if t.expiry != nil {
		t.expiry.Stop()
	}
	t.closeAsksLocked()
	stop := t.stopNote
	t.stopNote, t.listeners = nil, nil
	size := t.size
	t.mu.Unlock()
	t.s.release(t.bound, size)
	if stop != nil {
		stop()
	}
	if t.cancel != nil {
		t.cancel(why)
	}
}

// auditOnce writes the audit record of the task's tools/call, once, as o says it ended.
func (t *task) auditOnce(o node.Outcome, cancelled bool) {
	t.mu.Lock()
	done := t.audited
	t.audited = true
	t.mu.Unlock()
	if done || t.s.srv.opts.Audit == nil {
		return
	}
	rec := t.s.srv.auditRecord(t.req, t.caller, t.start, o, cancelled)
	rec.Task = t.id
	t.s.srv.opts.Audit.Record(rec)
}

// isoMillis is how a task's times are written: ISO 8601, in UTC, to the millisecond.
const isoMillis = "2006-01-02T15:04:05.000Z"

// encodeLocked is the task as a result of resultType rt (or, "", a notification); the
// caller holds t.mu.
func (t *task) encodeLocked(rt string) json.RawMessage {
	ttl := t.s.opts.TTL.Milliseconds()
	v := mcp.Task{ResultType: rt, TaskID: t.id, Status: t.status, StatusMessage: t.message,
		CreatedAt: t.created.UTC().Format(isoMillis), LastUpdatedAt: t.updated.UTC().Format(isoMillis),
		TTLMs: &ttl, PollIntervalMs: t.s.opts.PollInterval.Milliseconds()}
	switch {
	case rt == mcp.ResultTypeTask:
		// A CreateTaskResult carries the task alone: what it asks or ends with is for
		// tasks/get.
	case t.status == mcp.TaskInputRequired:
		v.InputRequests = make(mcp.InputRequests, len(t.asks))
		for k, a := range t.asks {
			v.InputRequests[k] = mcp.InputRequest{Method: a.method, Params: a.params}
		}
	case t.status == mcp.TaskCompleted:
		v.Result = t.result
	case t.status == mcp.TaskFailed:
		v.Error = t.failure
	}
	b, _ := json.Marshal(v)
	return b
}

// snapshot is the task as tasks/get answers it.
func (t *task) snapshot(rt string) json.RawMessage {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.encodeLocked(rt)
}

// listen attaches l to the task's notifications; false when it cannot be.
func (t *task) listen(l *listener) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.gone {
		return false
	}
	if t.bundle != nil && t.stopNote == nil {
		stop, err := t.s.srv.node.WatchTask(t.bundle, t.bundleNote)
		if err != nil {
			return false
		}
		t.stopNote = stop
	}
	if t.listeners == nil {
		t.listeners = map[*listener]bool{}
	}
	t.listeners[l] = true
	return true
}

func (t *task) unlisten(l *listener) {
	t.mu.Lock()
	delete(t.listeners, l)
	var stop func()
	if len(t.listeners) == 0 && t.stopNote != nil {
		stop, t.stopNote = t.stopNote, nil
	}
	t.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// announce tells the task's listeners its state.
func (t *task) announce() {
	t.mu.Lock()
	if len(t.listeners) == 0 || t.state != taskStarted {
		t.mu.Unlock()
		return
	}
	note := t.encodeLocked("")
	t.mu.Unlock()
	t.tell(note)
}

// tell sends notifications/tasks with note to the task's listeners.
func (t *task) tell(note json.RawMessage) {
	t.mu.Lock()
	ls := make([]*listener, 0, len(t.listeners))
	for l := range t.listeners {
		ls = append(ls, l)
	}
	t.mu.Unlock()
	for _, l := range ls {
		l.sendTask(note)
	}
}

// Tasks a bundle holds itself: the node relays the call, and keeps the task the bundle
// makes of it under an id of its own, so that every tasks/* of it reaches the process
// that made it, and nobody but its client reaches it.

// passThrough serves c, a tools/call to a bundle that holds tasks itself.
func (s *taskStore) passThrough(c *Call) {
	p := &passing{Call: c, s: s, inner: *c.req}
	s.srv.node.CallFound(c.ctx, p, &p.inner, c.tool)
}

// passing is the call c to a bundle that holds tasks itself, as the node serves it: the
// task the bundle makes is kept before c gets the outcome.
type passing struct {
	*Call
	s     *taskStore
	inner node.Request
}

// CallDone implements node.Exchange.
func (p *passing) CallDone(o node.Outcome) {
	if bt, ok := p.s.srv.node.BundleTaskOf(o); ok {
		o = o.Translated(p.s.adopt(p.Call, bt, o.Result))
	}
	p.Call.CallDone(o)
}

// adopt keeps the task bt a bundle made of c's call, and returns the CreateTaskResult
// that names it by the node's id.
func (s *taskStore) adopt(c *Call, bt *node.BundleTask, res json.RawMessage) (json.RawMessage, error) {
	owner, bound := ownerOf(c.peer)
	if err := s.reserve(bound, false); err != nil { // the bundle keeps its task's result
		go func() { // the bundle's task is of no use to anyone now
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, _ = s.srv.node.SendTask(ctx, bt, mcp.MethodTasksCancel, nil)
		}()
		return nil, err
	}
	now := s.opts.Clock.Now()
	t := &task{s: s, id: s.newTaskID(), owner: owner, bound: bound, caller: c.peer.base().id, tool: c.req.Target(),
		start: now, bundle: bt, state: taskStarted, created: now, updated: now}
	t.status, _ = rawjson.String(memberOf(res, "status"))
	t.ttlFrom(res)
	s.register(t)
	return withTaskID(res, t.id, s.opts.TTL), nil
}

// ttlFrom sets the expiry of a bundle-held task: the bundle's ttlMs, at most the node's.
func (t *task) ttlFrom(res json.RawMessage) {
	ttl := t.s.opts.TTL
	var ms int64
	if json.Unmarshal(memberOf(res, "ttlMs"), &ms) == nil && ms > 0 && time.Duration(ms)*time.Millisecond < ttl {
		ttl = time.Duration(ms) * time.Millisecond
	}
	t.mu.Lock()
	if t.expiry != nil {
		t.expiry.Stop()
	}
	t.expiry = t.s.opts.Clock.AfterFunc(t.created.Add(ttl).Sub(t.s.opts.Clock.Now()), func() { t.expire(errors.New("the task's ttl has passed")) })
	t.mu.Unlock()
}

func memberOf(raw json.RawMessage, key string) json.RawMessage {
	v, _ := rawjson.Member(raw, key)
	return v
}

// relay serves a tasks/* request for a task its bundle holds.
func (t *task) relay(ctx context.Context, req *node.Request) (any, error) {
	t.mu.Lock()
	failed := t.failure
	t.mu.Unlock()
	if failed != nil && req.Method == mcp.MethodTasksGet {
		return t.snapshot(mcp.ResultTypeComplete), nil
	}
	res, err := t.s.srv.node.SendTask(ctx, t.bundle, req.Method, req.Params)
	var rpcErr *rpc.Error
	switch {
	case errors.Is(err, node.ErrTaskProcessGone):
		// The task went with its process: it has failed, and says why from now on.
		t.mu.Lock()
		if !mcp.TaskTerminal(t.status) {
			e, _ := json.Marshal(rpc.Errorf(mcp.CodeInternalError, "%v", err))
			t.status, t.message, t.failure, t.updated = mcp.TaskFailed, err.Error(), e, t.s.opts.Clock.Now()
		}
		t.mu.Unlock()
		if req.Method == mcp.MethodTasksGet {
			return t.snapshot(mcp.ResultTypeComplete), nil
		}
		return ack, nil
	case errors.As(err, &rpcErr) && rpcErr.Code == mcp.CodeInvalidParams:
		t.expire(errors.New("the bundle no longer knows the task"))
		return nil, errUnknownTask(t.id)
	case err != nil:
		return nil, err
	}
	if req.Method != mcp.MethodTasksGet {
		return ack, nil
	}
	t.noteStatus(res)
	return withTaskID(res, t.id, t.s.opts.TTL), nil
}

// noteStatus remembers the status a bundle reports of its task.
func (t *task) noteStatus(res json.RawMessage) {
	if status, ok := rawjson.String(memberOf(res, "status")); ok {
		t.mu.Lock()
		t.status, t.updated = status, t.s.opts.Clock.Now()
		t.mu.Unlock()
	}
}

// bundleNote passes a bundle's notifications/tasks about the task to its listeners, under
// the node's id of it.
func (t *task) bundleNote(params json.RawMessage) {
	t.noteStatus(params)
	t.tell(withTaskID(params, t.id, t.s.opts.TTL))
}
