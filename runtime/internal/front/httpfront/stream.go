package httpfront

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/front"
	"github.com/toolnode/toolnode/runtime/internal/node"
	"github.com/toolnode/toolnode/runtime/internal/rpc"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// Event streams: the answer to a POST, when messages come before it, and a session's GET
// stream for the node's own messages. Only the handler's goroutine writes to a response:
// what a call causes is queued on the stream's Outbox by whoever produces it (the goroutine
// reading a bundle, among others), which never waits for the client.

// callStream is the way back of the call a POST carries (front.Call.SendOn): its answer,
// and the messages that come before it (progress, log messages, the session's requests to
// the client), which turn the response into an event stream. A POST makes one for every
// call, and most calls send nothing before their answer: the event stream is made only
// for the first such message, and the call's callStream is two allocations (itself and
// signal).
type callStream struct {
	h      *Handler
	hs     *httpSession // whose messages fall back to its GET stream; nil for a stateless request
	primed bool         // the event stream starts with the session's primer
	w      http.ResponseWriter
	signal chan struct{} // holds a value once the answer came or a message was queued

	mu       sync.Mutex
	st       *stream // made by the first message; nil until then
	closed   bool    // messages are refused: the client left, or the response is done
	answered bool
	answer   outcome
}

// errStreamClosed refuses a message on the way back of a call whose response is done.
var errStreamClosed = errors.New("the call's event stream is closed")

// newCallStream makes the way back of a call answered on w, of the session hs (nil for a
// stateless request), its event stream starting with the session's primer when primed.
func (h *Handler) newCallStream(w http.ResponseWriter, hs *httpSession, primed bool) *callStream {
	return &callStream{h: h, hs: hs, primed: primed, w: w, signal: make(chan struct{}, 1)}
}

// Reply implements front.Replier.
func (cs *callStream) Reply(_ *front.Call, res json.RawMessage, err *rpc.Error) {
	cs.mu.Lock()
	cs.answer, cs.answered = outcome{res, err}, true
	cs.mu.Unlock()
	cs.wake()
}

// wake tells the handler's goroutine that there is something to write.
func (cs *callStream) wake() {
	select {
	case cs.signal <- struct{}{}:
	default: // already told, and not yet looked
	}
}

// event queues one message as a server-sent event, on the event stream it makes first when
// there is none yet.
func (cs *callStream) event(data []byte) error {
	cs.mu.Lock()
	if cs.closed {
		cs.mu.Unlock()
		return errStreamClosed
	}
	if cs.st == nil {
		cs.st = cs.h.newStream(cs.w, cs.hs, cs.primed)
	}
	st := cs.st
	cs.mu.Unlock()
	if err := st.event(data); err != nil {
		return err
	}
	cs.wake()
	return nil
}

// send queues a message on the call's way back.
func (cs *callStream) send(_ context.Context, m *rpc.Message) error { return cs.event(m.Encode()) }

// close refuses what comes after, and closes the event stream if there is one.
func (cs *callStream) close() {
	cs.mu.Lock()
	cs.closed = true
	st := cs.st
	cs.mu.Unlock()
	if st != nil {
		st.close()
	}
}

// Notify implements node.Client: a message of a session's call goes on this way back,
// else on the session's GET stream.
func (cs *callStream) Notify(ctx context.Context, method string, params any) error {
	raw, err := rpc.Marshal(params)
	if err != nil {
		return fmt.Errorf("encode %s: %w", method, err)
	}
	if cs.hs == nil {
		return cs.send(ctx, rpc.Notification(method, raw))
	}
	return cs.hs.send(cs, rpc.Notification(method, raw))
}

// Request implements node.Client: a session's request goes on this way back, and the
// client's answer comes back in a POST. A stateless request takes none.
func (cs *callStream) Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	if cs.hs == nil {
		return nil, errNoRequests()
	}
	return cs.hs.request(ctx, cs, method, params)
}

// serve serves a request whose answer, and what comes before it, go on the call's way
// back. status gives the HTTP status of an answer written as plain JSON.
func (cs *callStream) serve(r *http.Request, call *front.Call, msg *rpc.Message, req *node.Request, status func(*rpc.Error) int) {
	if msg.Method == mcp.MethodToolsCall {
		call.Serve(req, cs)
	} else {
		go call.Serve(req, cs)
	}
	gone := r.Context().Done()
	for {
		select {
		case <-cs.signal:
			cs.mu.Lock()
			st, answered, o := cs.st, cs.answered, cs.answer
			cs.mu.Unlock()
			if !answered {
				if _, err := st.out.WriteQueued(); err != nil {
					cs.close() // later messages of the call go elsewhere, or nowhere
				}
				continue
			}
			if call.Cancelled() {
				return
			}
			resp := rpc.Result(msg.ID, o.res)
			if o.err != nil {
				resp = rpc.Failure(msg.ID, o.err)
			}
			if st == nil {
				writeMessage(cs.w, status(o.err), cs.hs.header(), resp)
				return
			}
			if st.finish(status(o.err), resp) != nil {
				cs.h.srv.Logger().Warn("client left before its answer was sent", "session", st.sessionID(), "method", msg.Method)
			}
			return
		case <-gone:
			cs.close()
			gone = nil // keep waiting for the answer, which ends the call cleanly
		}
	}
}

// stream is one event stream: a POST's (made by its callStream), a session's GET one, or a
// stateless listen's. Messages are queued on its Outbox and written by the handler's
// goroutine.
type stream struct {
	h       *Handler
	hs      *httpSession // whose id the headers carry; nil without a session
	primed  bool         // starts with the session's primer (hs.primer): a POST's stream
	w       http.ResponseWriter
	rc      http.ResponseController
	out     rpc.Outbox // in the stream's own allocation
	started bool       // headers out; only the handler's goroutine touches it
}

// newStream makes the event stream of the response w, of the session hs (nil for none),
// starting with the session's primer when primed.
func (h *Handler) newStream(w http.ResponseWriter, hs *httpSession, primed bool) *stream {
	st := &stream{h: h, hs: hs, primed: primed, w: w, rc: *http.NewResponseController(w)}
	st.out.Init(streamWriter{st}, rpc.OutboxOptions{MaxQueue: h.srv.Options().MaxQueue})
	return st
}

// streamWriter starts the event stream on its first write, bounds each write in time, and
// flushes what it wrote: the Outbox writes all it holds at once.
type streamWriter struct{ st *stream }

func (sw streamWriter) Write(b []byte) (int, error) {
	st := sw.st
	if !st.started {
		st.start()
	}
	_ = st.rc.SetWriteDeadline(time.Now().Add(st.h.opts.StreamWriteTimeout))
	n, err := st.w.Write(b)
	if err != nil {
		return n, err
	}
	return n, st.rc.Flush()
}

// start writes the event stream's headers, and the primer when there is one.
func (st *stream) start() {
	hd := st.w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Cache-Control", "no-cache")
	hd.Set("X-Accel-Buffering", "no")
	if st.hs != nil {
		hd[HeaderSessionID] = st.hs.idHeader
	}
	st.w.WriteHeader(http.StatusOK)
	st.started = true
	if st.primed {
		_, _ = io.WriteString(st.w, st.hs.primer())
	}
	_ = st.rc.Flush()
}

// event queues one message as a server-sent event.
func (st *stream) event(data []byte) error {
	data = bytes.TrimSuffix(data, []byte{'\n'})
	b := make([]byte, 0, len(data)+32)
	b = append(append(append(b, "event: message\ndata: "...), data...), "\n\n"...)
	if err := st.out.Send(b); err != nil {
		if errors.Is(err, rpc.ErrNotReading) {
			st.h.srv.Logger().Warn("closing an event stream the client does not read", "session", st.sessionID(), "error", err)
			st.close()
		}
		return err
	}
	return nil
}

// send queues a message on the stream.
func (st *stream) send(_ context.Context, m *rpc.Message) error { return st.event(m.Encode()) }

// finish writes what is queued and then the answer that ends the response: an event when
// the stream has started, else the whole response as JSON with status.
func (st *stream) finish(status int, answer *rpc.Message) error {
	if _, err := st.out.WriteQueued(); err != nil {
		return err
	}
	if !st.started {
		writeMessage(st.w, status, st.hs.header(), answer)
		return nil
	}
	data := answer.Append(make([]byte, 0, 64+len(answer.Result)))
	_ = st.rc.SetWriteDeadline(time.Now().Add(st.h.opts.StreamWriteTimeout))
	if _, err := st.w.Write(append(append([]byte("event: message\ndata: "), data...), "\n\n"...)); err != nil {
		return err
	}
	return st.rc.Flush()
}

// sessionID is the id of the stream's session, "" for none.
func (st *stream) sessionID() string {
	if st.hs == nil {
		return ""
	}
	return st.hs.id
}

// close ends the stream: what is queued after is refused.
func (st *stream) close() { st.out.Close() }
