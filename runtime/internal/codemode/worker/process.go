package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/codemode"
	"github.com/toolnode/toolnode/runtime/internal/proc"
	"github.com/toolnode/toolnode/runtime/internal/rpc"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// process is one worker process, as the node holds it: its connection, and the run it
// serves.
type process struct {
	cfg    Config
	p      *proc.Process
	conn   *rpc.Conn
	caller string // the caller whose runs it serves
	names  *codemode.Names

	killed atomic.Bool // the node killed it

	mu    sync.Mutex
	cur   *current      // the run it serves; nil between runs
	woke  chan struct{} // closed when an idle worker is taken again
	timer *time.Timer
}

// current is a run a worker serves: what its requests are served with.
type current struct {
	ctx  context.Context
	host codemode.Host
	b    codemode.Bounds

	mu    sync.Mutex
	calls map[string]context.CancelCauseFunc // inner calls going, by the worker's request id
	begun atomic.Int64                       // inner calls and searches asked for
	sent  atomic.Int64                       // of them, those that reached a tool
}

// workerVar, in a process's environment, makes it a worker (see main.go): its value is its
// memory bound in bytes.
const workerVar = "TOOLNODE_RUN_WORKER"

// start starts a worker as cfg says, under its sandbox (package proc places it in a cgroup
// of its own where it may, and package sandbox bounds its memory and network there).
func start(cfg Config) (*process, error) {
	argv := cfg.Command
	if len(argv) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("find the node's binary: %w", err)
		}
		argv = []string{exe, "run-worker"}
	}
	policy := policy(cfg)
	p, err := proc.Start(proc.Config{
		Path: argv[0], Args: argv[1:],
		// Nothing of the node's environment: its tokens and keys are not the program's.
		Env:     []string{workerVar + "=" + strconv.FormatInt(cfg.MaxMemory, 10), "GOMAXPROCS=2"},
		Logger:  cfg.Logger.Named("run-worker"),
		Grace:   time.Second,
		Sandbox: &policy,
	})
	if err != nil {
		return nil, err
	}
	w := &process{cfg: cfg, p: p}
	w.conn = rpc.NewConn(p.Stdout(), p.Stdin(), rpc.Closers{p.Stdin(), p.Stdout()}, rpc.ConnOptions{Handle: w.handle})
	return w, nil
}

// alive reports whether the process is still running.
func (w *process) alive() bool {
	select {
	case <-w.p.Done():
		return false
	case <-w.conn.Done():
		return false
	default:
		return true
	}
}

// graceAfterTime is how long past its time bound a run may take to answer before its worker
// is killed: the program stops at the bound itself, unless the worker is stuck.
const graceAfterTime = 5 * time.Second

// answer is the worker's answer to a run.
type answer struct {
	res json.RawMessage
	err error
}

// run runs one program in the worker and returns its outcome, and whether the worker may
// serve another run.
func (w *process) run(ctx context.Context, host codemode.Host, names *codemode.Names, b codemode.Bounds, code string) (codemode.Outcome, bool) {
	cur := &current{ctx: ctx, host: host, b: b, calls: map[string]context.CancelCauseFunc{}}
	w.mu.Lock()
	w.cur = cur
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		w.cur = nil
		w.mu.Unlock()
		cur.cancelAll(errors.New("the run has ended"))
	}()
	p := runParams{Code: code, Bounds: b}
	if names == w.names {
		p.SameNames = true
	} else {
		p.Names = names.Tools()
	}
	params, err := json.Marshal(p)
	if err != nil {
		return codemode.Outcome{Error: &codemode.RunError{Kind: codemode.KindProgramError, Message: "encode the run: " + err.Error()}}, true
	}
	ch := make(chan answer, 1)
	id, err := w.conn.Call(methodRun, params, func(res json.RawMessage, err error) { ch <- answer{res, err} })
	if err != nil {
		w.kill()
		return w.ended(cur, b, false, false), false
	}
	w.names = names
	backstop := time.NewTimer(b.Time + graceAfterTime)
	defer backstop.Stop()
	done := ctx.Done()
	cancelled, overtime := false, false
	var a answer
wait:
	for {
		select {
		case a = <-ch:
			break wait
		case <-done:
			done, cancelled = nil, true
			c, _ := json.Marshal(cancelParams{ID: idOf(id), Reason: context.Cause(ctx).Error()})
			_ = w.conn.Notify(methodCancel, c)
			backstop.Reset(graceAfterTime)
		case <-backstop.C:
			overtime = true
			w.kill()
			a = <-ch
			break wait
		}
	}
	if a.err == nil && !overtime {
		var out outcome
		if err := json.Unmarshal(a.res, &out); err == nil {
			out.Outcome.Sent = out.Sent
			reusable := out.Error == nil || out.Error.Bound != codemode.BoundMemory
			return out.Outcome, reusable
		}
	}
	select {
	case <-w.p.Done(): // it ended by itself, or the kernel ended it
	case <-time.After(2 * time.Second):
		w.kill()
	}
	return w.ended(cur, b, cancelled, overtime), false
}

// ended is the outcome of a run whose worker ended under it, saying why.
func (w *process) ended(cur *current, b codemode.Bounds, cancelled, overtime bool) codemode.Outcome {
	select {
	case <-w.p.Done():
	case <-time.After(10 * time.Second):
	}
	var e *codemode.RunError
	switch {
	case overtime:
		e = codemode.BoundError(codemode.BoundTime, fmt.Sprintf("it ran longer than %s", b.Time))
	case w.outOfMemory():
		e = MemoryError(w.cfg.MaxMemory)
	case cancelled:
		e = &codemode.RunError{Kind: codemode.KindCancelled, Message: "the run was cancelled: " + context.Cause(cur.ctx).Error()}
	default:
		e = &codemode.RunError{Kind: codemode.KindProgramError, Message: "the program's worker process ended: " + w.status()}
	}
	e.Dispatched = cur.sent.Load() > 0
	return codemode.Outcome{Calls: int(cur.begun.Load()), Sent: int(cur.sent.Load()), Error: e}
}

// outOfMemory reports whether the worker, ended, was ended by its memory bound: the kernel
// killed it at its cgroup's bound, or the Go runtime could not get memory under an
// address-space bound.
func (w *process) outOfMemory() bool {
	if w.p.Cause() != "" {
		return true // the sandbox saw the kernel kill it at its memory bound
	}
	if strings.Contains(w.p.ExitStatus(), "signal: killed") && !w.killed.Load() {
		return true // no one else kills a worker: the kernel's OOM killer
	}
	for _, line := range w.p.StderrTail() {
		if strings.Contains(line, "out of memory") || strings.Contains(line, "cannot allocate memory") {
			return true
		}
	}
	return false
}

// status says how the worker ended, with its last stderr lines.
func (w *process) status() string {
	s := w.p.ExitStatus()
	if tail := w.p.StderrTail(); len(tail) > 0 {
		s += "; it said: " + strings.Join(tail, " | ")
	}
	return s
}

// handle takes each message of the worker, on the reading goroutine: a cancel at once, a
// request on a goroutine of its own.
func (w *process) handle(m *rpc.Message) {
	w.mu.Lock()
	cur := w.cur
	w.mu.Unlock()
	switch {
	case m.Method == methodCancel:
		var p cancelParams
		if cur != nil && json.Unmarshal(m.Params, &p) == nil {
			cur.cancel(string(p.ID), errors.New(p.Reason))
		}
	case !m.IsRequest():
	case cur == nil:
		_ = w.conn.ReplyError(m.ID, rpc.Errorf(mcp.CodeInvalidRequest, "no run is going"))
	case (m.Method == methodCall || m.Method == methodSearch) && cur.begun.Add(1) > int64(cur.b.Calls):
		// The worker counts its calls against the bound; the node holds it too, for a
		// worker is the program's and need not be believed.
		_ = w.conn.ReplyError(m.ID, rpc.Errorf(mcp.CodeInvalidRequest, "the run has made its %d calls (%s)", cur.b.Calls, codemode.Flag(codemode.BoundCalls)))
	case m.Method == methodCall:
		// Registered here, in the order of the worker's messages, so that its cancel of
		// the call, read next, finds it.
		ctx, cancel := context.WithCancelCause(cur.ctx)
		cur.mu.Lock()
		cur.calls[m.ID.String()] = cancel
		cur.mu.Unlock()
		go w.serveCall(ctx, cur, m)
	default:
		go w.serve(cur, m)
	}
}

// serveCall makes an inner call of the run cur for the worker.
func (w *process) serveCall(ctx context.Context, cur *current, m *rpc.Message) {
	defer cur.cancel(m.ID.String(), nil)
	var p checkParams
	if err := json.Unmarshal(m.Params, &p); err != nil {
		_ = w.conn.ReplyError(m.ID, rpc.Errorf(mcp.CodeInvalidParams, "call: %v", err))
		return
	}
	res := cur.host.Call(ctx, p.Name, p.Arguments)
	if res.Failure == nil || res.Failure.Dispatched {
		cur.sent.Add(1)
	}
	w.reply(m.ID, callResult{Result: res.Result, Failure: res.Failure})
}

// serve answers the worker's other requests of the run cur.
func (w *process) serve(cur *current, m *rpc.Message) {
	switch m.Method {
	case methodTool:
		var p toolParams
		if err := json.Unmarshal(m.Params, &p); err != nil {
			_ = w.conn.ReplyError(m.ID, rpc.Errorf(mcp.CodeInvalidParams, "tool: %v", err))
			return
		}
		schema, ok := cur.host.Tool(p.Name)
		w.reply(m.ID, toolResult{Schema: schema, OK: ok})
	case methodCheck:
		var p checkParams
		if err := json.Unmarshal(m.Params, &p); err != nil {
			_ = w.conn.ReplyError(m.ID, rpc.Errorf(mcp.CodeInvalidParams, "check: %v", err))
			return
		}
		w.reply(m.ID, checkResult{Problems: cur.host.Check(p.Name, p.Arguments)})
	case methodSearch:
		var p searchParams
		if err := json.Unmarshal(m.Params, &p); err != nil {
			_ = w.conn.ReplyError(m.ID, rpc.Errorf(mcp.CodeInvalidParams, "search: %v", err))
			return
		}
		res, err := cur.host.Search(p.Query, p.Limit)
		if err != nil {
			_ = w.conn.ReplyError(m.ID, rpc.Errorf(mcp.CodeInvalidParams, "%s", err.Error()))
			return
		}
		_ = w.conn.Reply(m.ID, res)
	default:
		_ = w.conn.ReplyError(m.ID, rpc.Errorf(mcp.CodeMethodNotFound, "method not found: %s", m.Method))
	}
}

// reply answers request id with v.
func (w *process) reply(id rpc.ID, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		_ = w.conn.ReplyError(id, fmt.Errorf("encode the answer: %w", err))
		return
	}
	_ = w.conn.Reply(id, b)
}

// cancel ends the inner call the worker asked for under id.
func (c *current) cancel(id string, cause error) {
	c.mu.Lock()
	cancel := c.calls[id]
	delete(c.calls, id)
	c.mu.Unlock()
	if cancel != nil {
		cancel(cause)
	}
}

// cancelAll ends every inner call of the run.
func (c *current) cancelAll(cause error) {
	c.mu.Lock()
	calls := c.calls
	c.calls = map[string]context.CancelCauseFunc{}
	c.mu.Unlock()
	for _, cancel := range calls {
		cancel(cause)
	}
}

// sleep makes w an idle worker: f is called when it has been idle for d, or when ended
// is closed, unless wake comes first.
func (w *process) sleep(d time.Duration, ended <-chan struct{}, f func()) {
	woke := make(chan struct{})
	w.mu.Lock()
	w.woke = woke
	w.timer = time.AfterFunc(d, f)
	w.mu.Unlock()
	if ended != nil {
		go func() {
			select {
			case <-ended:
				f()
			case <-woke:
			case <-w.p.Done():
			}
		}()
	}
}

// wake makes an idle worker busy again: what sleep arranged is called off.
func (w *process) wake() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.timer != nil {
		w.timer.Stop()
		w.timer = nil
	}
	if w.woke != nil {
		close(w.woke)
		w.woke = nil
	}
}

// kill ends the worker at once.
func (w *process) kill() {
	w.killed.Store(true)
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // Stop skips to SIGKILL
	go func() { _ = w.p.Stop(ctx) }()
}

// stop ends the worker: its stdin closed, it exits, as package proc stops a process (its
// cgroup and sandbox removed). Safe to call many times.
func (w *process) stop() {
	_ = w.p.Stop(context.Background())
	_ = w.conn.Close()
}
