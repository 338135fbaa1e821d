// Package stdiofront serves MCP over stdio in front of a front.Server: one client, one
// message per line on its stdin and stdout, of a 2025 session and of stateless 2026-07-28
// requests at once.
package stdiofront

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/front"
	"github.com/toolnode/toolnode/runtime/internal/rpc"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// Serve serves one client of srv over newline-delimited JSON-RPC on in and out until in
// ends or ctx is cancelled. Lines that are not JSON-RPC messages are answered with a parse
// or invalid-request error and the session goes on. When in ends, the requests already
// received are answered before it returns; a client that stops reading its answers is
// disconnected once the node holds MaxQueue bytes for it. The client is the access file's
// client Options.Client names.
func Serve(ctx context.Context, srv *front.Server, in io.Reader, out io.Writer) error {
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
	opts := srv.Options()
	st := &stdio{srv: srv, ready: make(chan struct{}), broken: make(chan error, 1),
		info: front.SessionInfo{Identity: front.Identity{Client: opts.Client}, ID: "stdio", Transport: "pipe"}}
	closer, _ := in.(io.Closer)
	st.conn = rpc.NewConn(in, out, closer, rpc.ConnOptions{
		MaxLine:     opts.MaxMessage,
		MaxQueue:    opts.MaxQueue,
		Limits:      opts.Limits,
		Batch:       srv.Node().Batch(),
		Handle:      st.handle,
		Lend:        true,
		OnInvalid:   st.invalid,
		OnUnmatched: st.unmatched,
	})
	st.sess = srv.NewSession(st, st.info)
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
		srv.Logger().Error("ending the stdio session", "error", err)
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

// stdio is the one client of the stdio front, and where its messages go (node.Client).
type stdio struct {
	srv    *front.Server
	info   front.SessionInfo
	conn   *rpc.Conn
	sess   *front.Session
	ready  chan struct{} // closed once sess is set
	broken chan error    // the client cannot be written to
}

// handle runs on the goroutine reading the client: it registers each request before reading
// the next message (so a cancellation that follows finds it). A tools/call is routed right
// here: routing never waits (writes to a bundle are queued), and a goroutine hand-off would
// cost more than the routing. Anything else may wait, so it gets a goroutine of its own.
// m is the connection's, lent for this call only (rpc.ConnOptions.Lend): nothing keeps it.
func (st *stdio) handle(m *rpc.Message) {
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
	a, refused := st.srv.Admit(&front.Inbound{Method: m.Method, Params: m.Params, Out: st, Info: st.info})
	if refused != nil {
		call.Fail(refused.Err, st)
		return
	}
	if a.Client != nil {
		// A 2026-07-28 request, served for its client as its _meta says, while the session
		// keeps it among its requests in flight (a cancellation finds it).
		call.As(a.Client)
		if a.Listens() {
			st.listen(call, a)
			return
		}
	}
	if m.Method == mcp.MethodToolsCall {
		call.Serve(a.Req, st)
		return
	}
	go call.Serve(a.Req, st)
}

// Reply implements front.Replier: the answer to c goes to the client, unless the client
// cancelled the request (the spec asks receivers not to answer one; initialize is always
// answered).
func (st *stdio) Reply(c *front.Call, res json.RawMessage, err *rpc.Error) {
	switch {
	case c.Cancelled() && c.Method() != mcp.MethodInitialize:
	case err != nil:
		st.send(rpc.Failure(c.ID(), err))
	default:
		st.send(rpc.Result(c.ID(), res))
	}
}

// listen serves subscriptions/listen over stdio: the notifications asked for go out on the
// one stream, tagged with the listen request's id, until the client cancels it.
func (st *stdio) listen(call *front.Call, a front.Admitted) {
	call.LongLived()
	go func() {
		l, ack, err := st.srv.Listen(call.Context(), a.Client, call.ID(), a.Req, func(_ context.Context, msg *rpc.Message) error { return st.conn.Send(msg) })
		if err != nil {
			call.Fail(err, st)
			return
		}
		st.send(ack)
		context.AfterFunc(call.Context(), func() {
			l.Close()
			call.Fail(nil, st) // cancelled: the spec wants no answer, and Reply gives none
		})
	}()
}

// send writes to the client; one that has stopped reading is disconnected.
func (st *stdio) send(m *rpc.Message) {
	if err := st.conn.Send(m); err != nil && errors.Is(err, rpc.ErrNotReading) {
		select {
		case st.broken <- fmt.Errorf("the client is not reading what the node sends: %w", err):
		default:
		}
	}
}

// invalid answers a line that is not a message: -32700 when it is not JSON, -32600 when it
// is JSON but not a valid request, with its id when one could be read.
func (st *stdio) invalid(line []byte, m *rpc.Message, err *rpc.Error) {
	st.srv.Logger().Warn("client sent a line that is not a valid JSON-RPC message", "error", err.Message)
	if m.IsResponse() && !m.ID.IsZero() {
		return // an answer that cannot be read: nothing to answer
	}
	if len(line) > 0 && line[0] == '[' {
		err = rpc.Errorf(mcp.CodeInvalidRequest, "JSON-RPC batches are not supported over stdio")
	}
	st.send(rpc.Failure(m.ID, err))
}

func (st *stdio) unmatched(m *rpc.Message) {
	st.srv.Logger().Debug("dropped an answer to no request of the node", "id", m.ID.String())
}

// Notify implements node.Client.
func (st *stdio) Notify(_ context.Context, method string, params any) error {
	raw, err := rpc.Marshal(params)
	if err != nil {
		return fmt.Errorf("encode %s: %w", method, err)
	}
	return st.conn.Notify(method, raw)
}

// Request implements node.Client.
func (st *stdio) Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	return rpc.CallWait(ctx, st.conn, method, params, func(id rpc.ID) {
		_ = st.conn.Notify(mcp.NotifyCancelled, mcp.CancelledNotice(id.String(), "the bundle no longer needs the answer"))
	})
}
