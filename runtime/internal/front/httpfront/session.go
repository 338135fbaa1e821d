package httpfront

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/front"
	"github.com/toolnode/toolnode/runtime/internal/node"
	"github.com/toolnode/toolnode/runtime/internal/rpc"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// httpSession is one client of the HTTP front with a session of a 2025 revision: what
// Mcp-Session-Id names. It is where the session's messages go (node.Client): on the event
// stream of the POST whose call they concern, else on the session's GET stream.
type httpSession struct {
	id       string
	idHeader []string // Mcp-Session-Id's value: id, shared by the session's answers
	h        *Handler
	sess     *front.Session
	who      front.Identity
	ctx      context.Context // ends with the session
	cancel   context.CancelFunc
	asked    rpc.Pending // the node's requests to the client, answered in POSTs

	mu       sync.Mutex
	get      *stream
	lastUsed time.Time
	events   atomic.Uint64
}

// retryMillis is the reconnection delay suggested to clients on event streams.
const retryMillis = 1000

// crowdedIdle is how long a session may stay idle while more than half of MaxSessions are
// open.
const crowdedIdle = time.Minute

// expire ends sessions idle for too long.
func (h *Handler) expire() {
	defer h.wg.Done()
	t := time.NewTicker(min(h.opts.IdleTimeout/4, 15*time.Second))
	defer t.Stop()
	for {
		select {
		case <-h.stop:
			return
		case now := <-t.C:
			h.mu.Lock()
			limit := h.opts.IdleTimeout
			if len(h.sessions) > h.opts.MaxSessions/2 {
				limit = min(limit, crowdedIdle)
			}
			for id, hs := range h.sessions {
				if hs.idleSince(now) > limit {
					h.forget(id, hs)
					go hs.end()
				}
			}
			h.mu.Unlock()
		}
	}
}

// forget removes a session from the table; the caller holds h.mu.
func (h *Handler) forget(id string, hs *httpSession) {
	if h.sessions[id] != hs {
		return
	}
	delete(h.sessions, id)
	if b := hs.who.Bound(); h.byClient[b] <= 1 {
		delete(h.byClient, b)
	} else {
		h.byClient[b]--
	}
}

// session finds the session a request names: 400 without the header, 404 when it is gone,
// 403 when it belongs to another client than the request's credentials name.
func (h *Handler) session(w http.ResponseWriter, r *http.Request, id front.Identity) *httpSession {
	sid := r.Header.Get(HeaderSessionID)
	if sid == "" {
		httpError(w, http.StatusBadRequest, mcp.CodeInvalidRequest, "missing "+HeaderSessionID+" header; send initialize first")
		return nil
	}
	h.mu.Lock()
	hs := h.sessions[sid]
	h.mu.Unlock()
	if hs == nil {
		httpError(w, http.StatusNotFound, mcp.CodeInvalidRequest, "session not found; it ended or expired: initialize a new one")
		return nil
	}
	if id.Client != hs.who.Client || id.Subject != hs.who.Subject {
		httpError(w, http.StatusForbidden, mcp.CodeInvalidRequest, "this session belongs to another client's credentials")
		return nil
	}
	hs.touch()
	return hs
}

// initialize opens a session, within the node's bound and its client's.
func (h *Handler) initialize(w http.ResponseWriter, r *http.Request, id front.Identity, msg *rpc.Message, req *node.Request) {
	sid, err := h.newSessionID()
	if err != nil {
		httpError(w, http.StatusInternalServerError, mcp.CodeInternalError, err.Error())
		return
	}
	h.mu.Lock()
	switch {
	case len(h.sessions) >= h.opts.MaxSessions:
		h.mu.Unlock()
		w.Header().Set("Retry-After", "60")
		httpError(w, http.StatusServiceUnavailable, mcp.CodeInternalError,
			fmt.Sprintf("the node has %d sessions open, its limit: end one (DELETE) or try later", h.opts.MaxSessions))
		return
	case h.byClient[id.Bound()] >= h.opts.MaxClientSessions:
		h.mu.Unlock()
		w.Header().Set("Retry-After", "60")
		httpError(w, http.StatusServiceUnavailable, mcp.CodeInternalError,
			fmt.Sprintf("this client has %d sessions open, its limit: end one (DELETE) or try later", h.opts.MaxClientSessions))
		return
	}
	// Counted now, so that initializes arriving together cannot pass the bound.
	h.byClient[id.Bound()]++
	h.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	hs := &httpSession{id: sid, idHeader: []string{sid}, h: h, who: id, ctx: ctx, cancel: cancel}
	hs.touch()
	hs.sess = h.srv.NewSession(hs, front.SessionInfo{Identity: id, ID: sid, Transport: "tcp"})
	resp, _ := hs.serve(msg, req)
	h.mu.Lock()
	if resp.Error != nil {
		h.byClient[id.Bound()]--
		h.mu.Unlock()
		hs.end()
		writeMessage(w, http.StatusOK, nil, resp)
		return
	}
	h.sessions[sid] = hs
	h.mu.Unlock()
	writeMessage(w, http.StatusOK, hs.idHeader, resp)
}

// get opens the session's stream for the node's own messages.
func (h *Handler) get(w http.ResponseWriter, r *http.Request, id front.Identity) {
	if !accepts(r.Header.Get("Accept"), "text/event-stream") {
		httpError(w, http.StatusNotAcceptable, mcp.CodeInvalidRequest, "GET opens an event stream: Accept must list text/event-stream")
		return
	}
	hs := h.session(w, r, id)
	if hs == nil {
		return
	}
	st := h.newStream(w, hs, false)
	st.start()
	hs.mu.Lock()
	old := hs.get
	hs.get = st
	hs.mu.Unlock()
	if old != nil {
		old.close() // one stream for the server's own messages; the newest wins
	}
	t := time.NewTicker(h.opts.KeepAlive)
	defer t.Stop()
	closed := st.out.Closed()
loop:
	for {
		select {
		case <-r.Context().Done():
			break loop
		case <-hs.ctx.Done():
			break loop
		case <-closed:
			break loop
		case <-t.C:
			_ = st.out.Send([]byte(": keep-alive\n\n"))
		case <-st.out.Wake():
		}
		if _, err := st.out.WriteQueued(); err != nil {
			break
		}
	}
	st.close()
	hs.mu.Lock()
	if hs.get == st {
		hs.get = nil
	}
	hs.mu.Unlock()
}

// delete ends a session.
func (h *Handler) delete(w http.ResponseWriter, r *http.Request, id front.Identity) {
	hs := h.session(w, r, id)
	if hs == nil {
		return
	}
	h.mu.Lock()
	h.forget(hs.id, hs)
	h.mu.Unlock()
	hs.end()
	w.WriteHeader(http.StatusOK)
}

func (hs *httpSession) touch() {
	hs.mu.Lock()
	hs.lastUsed = time.Now()
	hs.mu.Unlock()
}

func (hs *httpSession) idleSince(now time.Time) time.Duration {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.get != nil {
		return 0
	}
	return now.Sub(hs.lastUsed)
}

func (hs *httpSession) end() {
	hs.cancel()
	hs.sess.Close()
	hs.asked.Close(errors.New("client session ended"))
	hs.mu.Lock()
	get := hs.get
	hs.mu.Unlock()
	if get != nil {
		get.close()
	}
}

// serve runs a request and returns its answer, or false when the client cancelled it.
func (hs *httpSession) serve(msg *rpc.Message, req *node.Request) (*rpc.Message, bool) {
	call, err := hs.sess.Begin(hs.callContext(), msg.ID)
	if err != nil {
		return rpc.Failure(msg.ID, err), true
	}
	ch := make(answer, 1)
	call.Serve(req, ch)
	o := <-ch
	if call.Cancelled() {
		return nil, false
	}
	if o.err != nil {
		return rpc.Failure(msg.ID, o.err), true
	}
	return rpc.Result(msg.ID, o.res), true
}

// answer is where a call's answer waits for the handler that writes it (a front.Replier).
type answer chan outcome

type outcome struct {
	res json.RawMessage
	err *rpc.Error
}

// Reply implements front.Replier.
func (a answer) Reply(_ *front.Call, res json.RawMessage, err *rpc.Error) { a <- outcome{res, err} }

// serveStream answers a request that may cause messages before its answer (progress, log
// messages, requests to the client). The answer is plain JSON unless such a message comes
// first: then the response turns into an event stream, primed with an event id and a retry
// interval as SEP-1699 recommends, so that a client whose connection drops knows to come
// back. Most calls send nothing first, and JSON spares them the stream's extra writes.
func (hs *httpSession) serveStream(w http.ResponseWriter, r *http.Request, msg *rpc.Message, req *node.Request) {
	call, err := hs.sess.Begin(hs.callContext(), msg.ID)
	if err != nil {
		writeMessage(w, http.StatusOK, hs.idHeader, rpc.Failure(msg.ID, err))
		return
	}
	cs := hs.h.newCallStream(w, hs, true)
	defer cs.close()
	call.SendOn(cs)
	// A client that drops the connection has not cancelled the call (the spec says so):
	// the call lives as long as the session.
	cs.serve(r, call, msg, req, func(*rpc.Error) int { return http.StatusOK })
}

// callContext is the context a call of the session begins with: one that no end of the
// session cancels, as the stdio front's calls have, for the session's close cancels every
// call in flight itself (front.Session.Close). A child of the session's context costs each
// call a registration with it, under a lock its calls in flight share. A session already
// ended gives its own context, done.
func (hs *httpSession) callContext() context.Context {
	if hs.ctx.Err() != nil {
		return hs.ctx
	}
	return context.Background()
}

// header is the Mcp-Session-Id header of the session's answers; nil for none (hs nil).
func (hs *httpSession) header() []string {
	if hs == nil {
		return nil
	}
	return hs.idHeader
}

// primer returns the SEP-1699 primer of a session's POST streams: an event id and a retry
// interval, so that a client whose connection drops knows to come back.
func (hs *httpSession) primer() string {
	return "id: " + hs.id + "-" + strconv.FormatUint(hs.events.Add(1), 10) + "\nretry: " + strconv.Itoa(retryMillis) + "\ndata: \n\n"
}

// send queues a message on cs, the way back of the call it concerns, else (cs nil, or
// closed) on the session's GET stream. It never waits for the client.
func (hs *httpSession) send(cs *callStream, m *rpc.Message) error {
	b := m.Encode()
	if cs != nil && cs.event(b) == nil {
		return nil
	}
	hs.mu.Lock()
	get := hs.get
	hs.mu.Unlock()
	if get == nil {
		return errors.New("the client has no open stream for this message")
	}
	return get.event(b)
}

// Notify implements node.Client: the session's own messages go on its GET stream.
func (hs *httpSession) Notify(_ context.Context, method string, params any) error {
	raw, err := rpc.Marshal(params)
	if err != nil {
		return fmt.Errorf("encode %s: %w", method, err)
	}
	return hs.send(nil, rpc.Notification(method, raw))
}

// Request implements node.Client: the request goes on the GET stream, and the client's
// answer comes back in a POST.
func (hs *httpSession) Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	return hs.request(ctx, nil, method, params)
}

// request sends the session's request to the client on cs, the way back of the call it
// concerns, else (cs nil, or closed) on the GET stream, and waits for the answer the client
// POSTs, or for ctx to end.
func (hs *httpSession) request(ctx context.Context, cs *callStream, method string, params json.RawMessage) (json.RawMessage, error) {
	return rpc.CallWait(ctx, streamPeer{hs, cs}, method, params, func(id rpc.ID) {
		// Tell the client, so that it stops asking its user or its model.
		_ = hs.send(cs, rpc.Notification(mcp.NotifyCancelled,
			mcp.CancelledNotice(id.String(), "the bundle no longer needs the answer")))
	})
}

// streamPeer sends the session's requests on the way back of a call, else the GET stream.
type streamPeer struct {
	hs *httpSession
	cs *callStream // nil for the GET stream
}

func (p streamPeer) Expect(done rpc.Done) (rpc.ID, error) { return p.hs.asked.Add(done) }
func (p streamPeer) Forget(id rpc.ID) bool                { return p.hs.asked.Take(id) != nil }
func (p streamPeer) Request(id rpc.ID, method string, params json.RawMessage) error {
	if err := p.hs.send(p.cs, rpc.Request(id, method, params)); err != nil {
		p.hs.asked.Take(id)
		return fmt.Errorf("send %s to the client: %w", method, err)
	}
	return nil
}

// deliver hands the client's answer to the request of the node waiting for it; a second
// answer, or one to a request never sent, is dropped.
func (hs *httpSession) deliver(m *rpc.Message) {
	if !hs.asked.Deliver(m) {
		hs.h.srv.Logger().Debug("dropped an answer to no request of the node", "session", hs.id, "id", m.ID.String())
	}
}

func newSessionID() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("session id: %w", err)
	}
	return hex.EncodeToString(b), nil
}
