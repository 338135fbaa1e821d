package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime/metrics"
	"sync"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/codemode"
	"github.com/toolnode/toolnode/runtime/internal/rpc"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// The worker's side: Serve runs the programs the node sends, one at a time, each with a
// host whose every method is a request back to the node.

// server is a worker serving the node on one connection.
type server struct {
	conn *rpc.Conn

	mu    sync.Mutex
	runs  map[string]context.CancelCauseFunc // the run going, by its request's id
	names *codemode.Names                    // the last run's: the next may say it has the same
}

// Serve serves the runs the node asks for on in, answering on out, until in ends. soft,
// when above 0, is the heap size past which a run is stopped at its memory bound before the
// kernel's bound (the worker's hard one) ends the worker; hard names that bound in the error.
func Serve(in io.Reader, out io.Writer, soft, hard int64) error {
	s := &server{runs: map[string]context.CancelCauseFunc{}}
	s.conn = rpc.NewConn(in, out, nil, rpc.ConnOptions{Handle: s.handle})
	if soft > 0 {
		stop := make(chan struct{})
		defer close(stop)
		go s.watchHeap(soft, hard, stop)
	}
	<-s.conn.Done()
	if err := s.conn.Err(); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("read the node's messages: %w", err)
	}
	return nil
}

// handle takes each message of the node, on the reading goroutine.
func (s *server) handle(m *rpc.Message) {
	switch {
	case m.Method == methodRun && m.IsRequest():
		var p runParams
		if err := json.Unmarshal(m.Params, &p); err != nil {
			_ = s.conn.ReplyError(m.ID, rpc.Errorf(mcp.CodeInvalidParams, "run: %v", err))
			return
		}
		ctx, cancel := context.WithCancelCause(context.Background())
		s.mu.Lock()
		s.runs[m.ID.String()] = cancel
		s.mu.Unlock()
		go s.run(ctx, m.ID, &p)
	case m.Method == methodCancel:
		var p cancelParams
		if json.Unmarshal(m.Params, &p) != nil {
			return
		}
		s.mu.Lock()
		cancel := s.runs[string(p.ID)]
		s.mu.Unlock()
		if cancel != nil {
			cancel(errors.New(p.Reason))
		}
	case m.IsRequest() && m.Method == methodProbe && probe != nil:
		go func() {
			var p struct{ What string }
			_ = json.Unmarshal(m.Params, &p)
			res, _ := json.Marshal(probe(p.What))
			_ = s.conn.Reply(m.ID, res)
		}()
	case m.IsRequest():
		_ = s.conn.ReplyError(m.ID, rpc.Errorf(mcp.CodeMethodNotFound, "method not found: %s", m.Method))
	}
}

// methodProbe asks a worker to try what probe does; answered only where probe is set.
const methodProbe = "probe"

// probe, set by this package's tests alone, tries from inside a worker what a program must
// not be able to do (open a file, a socket) and says how it went: the worker is the test
// binary there, so the tests look at the process the node runs programs in.
var probe func(what string) string

// run runs one program and answers the node with its outcome.
func (s *server) run(ctx context.Context, id rpc.ID, p *runParams) {
	s.mu.Lock()
	names := s.names
	if !p.SameNames || names == nil {
		names = codemode.NewNames(p.Names)
		s.names = names
	}
	s.mu.Unlock()
	out := codemode.Run(ctx, &remoteHost{conn: s.conn, tools: map[string]toolResult{}}, names, p.Bounds, p.Code)
	s.mu.Lock()
	cancel := s.runs[id.String()]
	delete(s.runs, id.String())
	s.mu.Unlock()
	cancel(nil)
	res, err := json.Marshal(outcome{Outcome: out, Sent: out.Sent})
	if err != nil {
		_ = s.conn.ReplyError(id, fmt.Errorf("encode the outcome: %w", err))
		return
	}
	_ = s.conn.Reply(id, res)
}

// heapEvery is how often the worker looks at its heap while it serves.
const heapEvery = 5 * time.Millisecond

// watchHeap stops the runs going, at their memory bound, whenever the heap's live objects
// pass soft: a program that grows step by step gets the bound's error from here; one that
// takes more at once than the kernel allows ends the worker, and the node says the same.
func (s *server) watchHeap(soft, hard int64, stop <-chan struct{}) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	t := time.NewTicker(heapEvery)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 || int64(sample[0].Value.Uint64()) <= soft {
			continue
		}
		err := MemoryError(hard)
		s.mu.Lock()
		for _, cancel := range s.runs {
			cancel(err)
		}
		s.mu.Unlock()
	}
}

// MemoryError is the error of a run stopped by its worker's memory bound of limit bytes.
func MemoryError(limit int64) *codemode.RunError {
	return codemode.BoundError(codemode.BoundMemory, fmt.Sprintf("it took more than the %s its process may have", Size(limit)))
}

// Size writes a number of bytes as a person reads it: 256 MiB, 1.5 GiB, 4096 bytes.
func Size(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d bytes", n)
}

// remoteHost is the node, as a run in the worker reaches it: every method a request.
type remoteHost struct {
	conn *rpc.Conn

	mu    sync.Mutex
	tools map[string]toolResult // what the node said of each tool, for this run (the caller's access does not change under it)
}

// ask sends a request to the node and decodes its answer into out.
func (h *remoteHost) ask(ctx context.Context, method string, params, out any) error {
	b, err := json.Marshal(params)
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	cancelled := func(id rpc.ID) {
		p, _ := json.Marshal(cancelParams{ID: idOf(id), Reason: context.Cause(ctx).Error()})
		_ = h.conn.Notify(methodCancel, p)
	}
	res, err := rpc.CallWait(ctx, h.conn, method, b, cancelled)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(res, out); err != nil {
		return fmt.Errorf("the node's answer to %s: %w", method, err)
	}
	return nil
}

// Tool implements codemode.Host.
func (h *remoteHost) Tool(name string) (json.RawMessage, bool) {
	h.mu.Lock()
	r, ok := h.tools[name]
	h.mu.Unlock()
	if ok {
		return r.Schema, r.OK
	}
	if err := h.ask(context.Background(), methodTool, toolParams{Name: name}, &r); err != nil {
		return nil, false
	}
	h.mu.Lock()
	h.tools[name] = r
	h.mu.Unlock()
	return r.Schema, r.OK
}

// Check implements codemode.Host.
func (h *remoteHost) Check(name string, args json.RawMessage) []codemode.Problem {
	var r checkResult
	if err := h.ask(context.Background(), methodCheck, checkParams{Name: name, Arguments: args}, &r); err != nil {
		return []codemode.Problem{{Reason: "the arguments could not be checked: " + err.Error()}}
	}
	return r.Problems
}

// Search implements codemode.Host.
func (h *remoteHost) Search(query string, limit int) (json.RawMessage, error) {
	var r json.RawMessage
	if err := h.ask(context.Background(), methodSearch, searchParams{Query: query, Limit: limit}, &r); err != nil {
		var rerr *rpc.Error
		if errors.As(err, &rerr) {
			return nil, errors.New(rerr.Message)
		}
		return nil, err
	}
	return r, nil
}

// callResult is codemode.CallResult on the wire.
type callResult struct {
	Result  json.RawMessage   `json:"result,omitempty"`
	Failure *codemode.Failure `json:"failure,omitempty"`
}

// Call implements codemode.Host: the node makes the call; when ctx ends first, the node is
// told to give it up.
func (h *remoteHost) Call(ctx context.Context, name string, args json.RawMessage) codemode.CallResult {
	var r callResult
	if err := h.ask(ctx, methodCall, checkParams{Name: name, Arguments: args}, &r); err != nil {
		kind := "failed"
		if ctx.Err() != nil {
			kind = codemode.KindCancelled
		}
		return codemode.CallResult{Failure: &codemode.Failure{Kind: kind, Dispatched: true, Message: err.Error()}}
	}
	return codemode.CallResult{Result: r.Result, Failure: r.Failure}
}
