package front

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/rpc"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// ServeStdio serves one client over newline-delimited JSON-RPC on in and out until in ends
// or ctx is cancelled. Lines that are not JSON-RPC messages are answered with a parse or
// invalid-request error and the session goes on. When in ends, the requests already
// received are answered before it returns; a client that stops reading its answers is
// disconnected once the node holds MaxQueue bytes for it.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	// Both ends through the runtime's poller when they are pipes: a write never waits for
	// the client, and a read wakes nothing but the reader.
	if nb := nonBlocking(out); nb != nil {
		defer nb.Close()
		out = nb
	}
	if nb := nonBlocking(in); nb != nil {
		defer nb.Close()
		in = nb
	}
	st := &stdioSession{srv: s, ready: make(chan struct{}), broken: make(chan error, 1)}
	closer, _ := in.(io.Closer)
	st.conn = rpc.NewConn(in, out, closer, rpc.ConnOptions{
		MaxLine:     s.opts.MaxMessage,
		MaxQueue:    s.opts.MaxQueue,
		Limits:      s.opts.Limits,
		Batch:       s.node.Batch(),
		Handle:      st.handle,
		OnInvalid:   st.invalid,
		OnUnmatched: st.unmatched,
	})
	st.sess = s.NewSession(st)
	st.sess.clientName = s.opts.Client
	st.sess.sessionID, st.sess.transport = "stdio", "pipe"
	close(st.ready)
	defer st.sess.Close()

	var err error
	select {
	case <-st.conn.Done():
		// The client closed its side: answer what it asked before going.
		st.sess.Drain(ctx)
		stop := make(chan struct{})
		t := time.AfterFunc(5*time.Second, func() { close(stop) })
		st.conn.Flush(stop)
		t.Stop()
	case err = <-st.broken:
		s.opts.Logger.Error("ending the stdio session", "error", err)
	case <-ctx.Done():
	}
	st.conn.Close()
	return err
}

// nonBlocking returns a non-blocking descriptor of v's file (see rpc.NonBlocking), which the
// caller closes; nil when v is not a pipe or socket file.
func nonBlocking(v any) *os.File {
	if f, ok := v.(*os.File); ok {
		if nb := rpc.NonBlocking(f); nb != f {
			return nb
		}
	}
	return nil
}

// stdioSession is the one client of the stdio front.
type stdioSession struct {
	srv    *Server
	conn   *rpc.Conn
	sess   *Session
	ready  chan struct{} // closed once sess is set
	broken chan error    // the client cannot be written to

	views viewCache // the Session of the last stateless request
}

// view returns the Session that serves a stateless request with the _meta of f.
func (st *stdioSession) view(f *fields) (*Session, *rpc.Error) {
	e, err := st.srv.metas.read(f)
	if err != nil {
		return nil, err
	}
	return st.views.get(st.srv, st, e, st.sess.clientName, "pipe"), nil
}

// handle runs on the goroutine reading the client: it registers each request before reading
// the next message (so a cancellation that follows finds it). A tools/call is routed right
// here: routing never waits (writes to a bundle are queued), and a goroutine hand-off would
// cost more than the routing. Anything else may wait, so it gets a goroutine of its own.
func (st *stdioSession) handle(m *rpc.Message) {
	<-st.ready
	if m.IsNotification() {
		st.sess.HandleNotification(m.Method, m.Params)
		return
	}
	call, err := st.sess.Begin(context.Background(), m.ID)
	if err != nil {
		st.send(rpc.Failure(m.ID, err))
		return
	}
	if call.fields = st.srv.metas.fieldsOf(m.Params); call.fields.stateless() {
		// A 2026-07-28 request: served on its own, with what its _meta says.
		view, err := st.view(&call.fields)
		if err != nil {
			_, e := call.end(nil, err)
			st.send(rpc.Failure(m.ID, e))
			return
		}
		call.As(view)
		if m.Method == mcp.MethodSubscriptionsListen {
			st.listen(call, m)
			return
		}
	}
	method, id := m.Method, m.ID
	reply := func(res json.RawMessage, rpcErr *rpc.Error) {
		switch {
		case call.Cancelled() && method != mcp.MethodInitialize:
			// The spec asks receivers not to answer a cancelled request.
		case rpcErr != nil:
			st.send(rpc.Failure(id, rpcErr))
		default:
			st.send(rpc.Result(id, res))
		}
	}
	if method == mcp.MethodToolsCall {
		call.HandleAsync(method, m.Params, reply)
		return
	}
	go call.HandleAsync(method, m.Params, reply)
}

// listen serves subscriptions/listen over stdio: the notifications asked for go out on the
// one stream, tagged with the listen request's id, until the client cancels it.
func (st *stdioSession) listen(call *Call, m *rpc.Message) {
	call.longLived = true
	l, ack, err := st.srv.newListener(call.ctx, m, func(_ context.Context, msg *rpc.Message) error { return st.conn.Send(msg) })
	if err != nil {
		_, e := call.end(nil, err)
		st.send(rpc.Failure(m.ID, e))
		return
	}
	st.send(ack)
	context.AfterFunc(call.ctx, func() {
		l.close()
		call.end(nil, nil) // cancelled: the spec wants no answer
	})
}

// send writes to the client; one that has stopped reading is disconnected.
func (st *stdioSession) send(m *rpc.Message) {
	if err := st.conn.Send(m); err != nil && errors.Is(err, rpc.ErrNotReading) {
		select {
		case st.broken <- fmt.Errorf("the client is not reading what the node sends: %w", err):
		default:
		}
	}
}

// invalid answers a line that is not a message: -32700 when it is not JSON, -32600 when it
// is JSON but not a valid request, with its id when one could be read.
func (st *stdioSession) invalid(line []byte, m *rpc.Message, err *rpc.Error) {
	st.srv.opts.Logger.Warn("client sent a line that is not a valid JSON-RPC message", "error", err.Message)
	if m.IsResponse() && !m.ID.IsZero() {
		return // an answer that cannot be read: nothing to answer
	}
	if len(line) > 0 && line[0] == '[' {
		err = rpc.Errorf(rpc.CodeInvalidRequest, "JSON-RPC batches are not supported over stdio")
	}
	st.send(rpc.Failure(m.ID, err))
}

func (st *stdioSession) unmatched(m *rpc.Message) {
	st.srv.opts.Logger.Debug("dropped an answer to no request of the node", "id", m.ID.String())
}

// Notify implements Outbound.
func (st *stdioSession) Notify(_ context.Context, method string, params any) error {
	raw, err := rpc.Marshal(params)
	if err != nil {
		return fmt.Errorf("encode %s: %w", method, err)
	}
	return st.conn.Notify(method, raw)
}

// Request implements Outbound.
func (st *stdioSession) Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	return rpc.CallWait(ctx, st.conn, method, params, func(id rpc.ID) {
		_ = st.conn.Notify(mcp.NotifyCancelled, mcp.CancelledNotice(id.String(), "the bundle no longer needs the answer"))
	})
}
