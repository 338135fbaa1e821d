package httpfront

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
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

// streamCall serves a request whose answer, and what comes before it, go on st. status
// gives the HTTP status of an answer written as plain JSON.
func (h *Handler) streamCall(r *http.Request, st *stream, call *front.Call, msg *rpc.Message, req *node.Request, status func(*rpc.Error) int) {
	st.answered = make(chan struct{}, 1)
	if msg.Method == mcp.MethodToolsCall {
		call.Serve(req, st)
	} else {
		go call.Serve(req, st)
	}
	gone := r.Context().Done()
	for {
		select {
		case <-st.answered:
			o := st.answer
			if call.Cancelled() {
				return
			}
			resp := rpc.Result(msg.ID, o.res)
			if o.err != nil {
				resp = rpc.Failure(msg.ID, o.err)
			}
			if st.finish(status(o.err), resp) != nil {
				h.srv.Logger().Warn("client left before its answer was sent", "session", st.sessionID(), "method", msg.Method)
			}
			return
		case <-st.out.Wake():
			if _, err := st.out.WriteQueued(); err != nil {
				st.close() // later messages of the call go elsewhere, or nowhere
			}
		case <-gone:
			st.close()
			gone = nil // keep waiting for the answer, which ends the call cleanly
		}
	}
}

// stream is one event stream: a POST's, or a session's GET one. Messages are queued on its
// Outbox and written by the handler's goroutine. A POST makes one for every call, and most
// never start (the answer comes first, as plain JSON): it is kept to three allocations
// (itself with its Outbox, the Outbox's wake channel, answered).
type stream struct {
	h       *Handler
	hs      *httpSession // whose id the headers carry; nil without a session
	primed  bool         // starts with the session's primer (hs.primer): a POST's stream
	w       http.ResponseWriter
	rc      http.ResponseController
	out     rpc.Outbox // in the stream's own allocation
	started bool       // headers out; only the handler's goroutine touches it

	// The call's answer, set by Reply before it signals answered (a POST's stream only).
	answer   outcome
	answered chan struct{}
}

// Reply implements front.Replier for the call a POST's stream carries.
func (st *stream) Reply(_ *front.Call, res json.RawMessage, err *rpc.Error) {
	st.answer = outcome{res, err}
	st.answered <- struct{}{}
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
		writeMessage(st.w, status, st.sessionHeader(), answer)
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

// sessionHeader is the Mcp-Session-Id header of the stream's session, nil for none.
func (st *stream) sessionHeader() []string {
	if st.hs == nil {
		return nil
	}
	return st.hs.idHeader
}

// close ends the stream: what is queued after is refused.
func (st *stream) close() { st.out.Close() }
