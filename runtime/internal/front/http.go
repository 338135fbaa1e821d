package front

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/node"
	"github.com/toolnode/toolnode/runtime/internal/rpc"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// HTTP header names of the Streamable HTTP transport.
const (
	HeaderSessionID       = "Mcp-Session-Id"
	HeaderProtocolVersion = "Mcp-Protocol-Version"
)

// HTTPOptions configures the Streamable HTTP front.
type HTTPOptions struct {
	// AllowOrigins lists Origin values accepted besides loopback ones (http://localhost,
	// http://127.0.0.1, http://[::1] on any port); "*" accepts any. Requests without an
	// Origin header (not from a browser) are always accepted. Browsers at these origins get
	// CORS answers, preflights included.
	AllowOrigins []string
	// CheckHost, when set, accepts only Host headers naming a loopback address or
	// localhost: the node listens on loopback, and any other name in Host is a DNS
	// rebinding attempt, even without an Origin header.
	CheckHost bool
	// Token, when set, must come with every request as "Authorization: Bearer <Token>".
	Token string
	// MaxBody is the largest request body accepted, in bytes. Default 16 MiB.
	MaxBody int64
	// MaxSessions bounds the sessions open at once; past it initialize is refused with
	// 503. Default DefaultMaxSessions.
	MaxSessions int
	// IdleTimeout ends sessions that saw no request for this long. Default 30m; sessions
	// idle for a minute end sooner while more than half of MaxSessions are open.
	IdleTimeout time.Duration
	// KeepAlive is the interval of comment lines on idle event streams, which keep proxies
	// from closing them. Default 25s.
	KeepAlive time.Duration
	// StreamWriteTimeout is how long one write to an event stream may wait for the client
	// before the stream is closed. Default 30s.
	StreamWriteTimeout time.Duration
}

// DefaultMaxSessions is how many HTTP sessions may be open at once by default.
const DefaultMaxSessions = 1000

// HTTPHandler serves the MCP Streamable HTTP transport (spec 2025-11-25, "Transports"):
// POST carries client messages and answers with JSON or an event stream, GET opens a stream
// for the server's own messages, DELETE ends a session.
type HTTPHandler struct {
	srv  *Server
	opts HTTPOptions

	mu       sync.Mutex
	sessions map[string]*httpSession
	views    viewCache // the Session of the last stateless request

	stop chan struct{}
	wg   sync.WaitGroup
}

// NewHTTPHandler returns the handler of the HTTP front; Close ends its sessions.
func (s *Server) NewHTTPHandler(opts HTTPOptions) *HTTPHandler {
	if opts.MaxBody <= 0 {
		opts.MaxBody = 16 << 20
	}
	if opts.MaxSessions <= 0 {
		opts.MaxSessions = DefaultMaxSessions
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = 30 * time.Minute
	}
	if opts.KeepAlive <= 0 {
		opts.KeepAlive = 25 * time.Second
	}
	if opts.StreamWriteTimeout <= 0 {
		opts.StreamWriteTimeout = 30 * time.Second
	}
	h := &HTTPHandler{srv: s, opts: opts, sessions: map[string]*httpSession{}, stop: make(chan struct{})}
	h.wg.Add(1)
	go h.expire()
	return h
}

// Close ends every session and stops the handler's goroutines.
func (h *HTTPHandler) Close() {
	close(h.stop)
	h.mu.Lock()
	sessions := h.sessions
	h.sessions = map[string]*httpSession{}
	h.mu.Unlock()
	for _, hs := range sessions {
		hs.end()
	}
	h.wg.Wait()
}

// Sessions is how many sessions are open, and the bound.
func (h *HTTPHandler) Sessions() (open, limit int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.sessions), h.opts.MaxSessions
}

// crowdedIdle is how long a session may stay idle while more than half of MaxSessions are
// open.
const crowdedIdle = time.Minute

func (h *HTTPHandler) expire() {
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
					delete(h.sessions, id)
					go hs.end()
				}
			}
			h.mu.Unlock()
		}
	}
}

// ServeHTTP implements http.Handler.
func (h *HTTPHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.opts.CheckHost && !loopbackHost(r.Host) {
		httpError(w, http.StatusForbidden, mcp.CodeInvalidRequest, "host "+r.Host+" is not this node's (it listens on loopback)")
		return
	}
	origin := r.Header.Get("Origin")
	if !h.originAllowed(origin) {
		httpError(w, http.StatusForbidden, mcp.CodeInvalidRequest, "origin "+origin+" is not allowed (use --allow-origin)")
		return
	}
	if origin != "" {
		corsHeaders(w.Header(), origin)
	}
	if r.Method == http.MethodOptions {
		preflight(w, r)
		return
	}
	if name, isOAuth, refused := h.oauthClient(r); refused {
		insufficientScope(w)
		return
	} else if isOAuth {
		r = r.WithContext(context.WithValue(r.Context(), clientKey{}, name))
	} else if !h.authenticate(w, r) {
		return
	} else if acc := h.srv.opts.Access; acc != nil {
		got, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		c, ok := acc.Policy().Authenticate(got)
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="toolnode"`)
			httpError(w, http.StatusUnauthorized, mcp.CodeInvalidRequest, "missing or unknown bearer token")
			return
		}
		r = r.WithContext(context.WithValue(r.Context(), clientKey{}, c.Name))
	}
	if v := r.Header.Get(HeaderProtocolVersion); r.Method != http.MethodPost && v != "" && !mcp.IsSupportedVersion(v) {
		badSessionVersion(w, v)
		return
	}
	switch r.Method {
	case http.MethodPost:
		h.post(w, r)
	case http.MethodGet:
		h.get(w, r)
	case http.MethodDelete:
		h.delete(w, r)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE, OPTIONS")
		httpError(w, http.StatusMethodNotAllowed, mcp.CodeInvalidRequest, "use POST, GET or DELETE")
	}
}

// clientKey is the request context key of the access file's client a request comes from.
type clientKey struct{}

// clientOf names the access file's client of a request, "" without an access file.
func clientOf(r *http.Request) string {
	name, _ := r.Context().Value(clientKey{}).(string)
	return name
}

// authenticate checks the --token-file token, when there is one.
func (h *HTTPHandler) authenticate(w http.ResponseWriter, r *http.Request) bool {
	if h.opts.Token == "" {
		return true
	}
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(h.opts.Token)) != 1 {
		w.Header().Set("WWW-Authenticate", `Bearer realm="toolnode"`)
		httpError(w, http.StatusUnauthorized, mcp.CodeInvalidRequest, "missing or wrong bearer token")
		return false
	}
	return true
}

// badSessionVersion refuses a request of a session whose version header names a revision
// no session speaks.
func badSessionVersion(w http.ResponseWriter, v string) {
	httpError(w, http.StatusBadRequest, mcp.CodeInvalidRequest,
		fmt.Sprintf("unsupported %s %q; supported: %s", HeaderProtocolVersion, v, strings.Join(mcp.AllVersions(), ", ")))
}

// corsHeaders lets a browser page at origin (already allowed) read the answers.
func corsHeaders(h http.Header, origin string) {
	h.Set("Access-Control-Allow-Origin", origin)
	h.Add("Vary", "Origin")
	h.Set("Access-Control-Expose-Headers", HeaderSessionID+", "+HeaderProtocolVersion+", WWW-Authenticate")
}

// preflight answers a browser's CORS preflight from an allowed origin.
func preflight(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	if r.Header.Get("Access-Control-Request-Method") != "" {
		hd.Set("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS")
		hd.Set("Access-Control-Allow-Headers", strings.Join([]string{"Content-Type", "Accept", "Authorization",
			HeaderSessionID, HeaderProtocolVersion, "Last-Event-ID", "Mcp-Method", "Mcp-Name"}, ", "))
		hd.Set("Access-Control-Max-Age", "600")
	}
	hd.Set("Allow", "GET, POST, DELETE, OPTIONS")
	w.WriteHeader(http.StatusNoContent)
}

// originAllowed guards against DNS rebinding: a page on another site must not reach a node
// listening on loopback through the browser.
func (h *HTTPHandler) originAllowed(origin string) bool {
	if origin == "" {
		return true
	}
	for _, o := range h.opts.AllowOrigins {
		if o == "*" || strings.EqualFold(o, origin) {
			return true
		}
	}
	u, err := url.Parse(origin)
	if err != nil {
		return false
	}
	return loopbackName(u.Hostname())
}

// loopbackHost reports whether a Host header names localhost or a loopback address.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return loopbackName(strings.Trim(host, "[]"))
}

func loopbackName(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// session finds the session a request names: 400 without the header, 404 when it is gone.
func (h *HTTPHandler) session(w http.ResponseWriter, r *http.Request) *httpSession {
	id := r.Header.Get(HeaderSessionID)
	if id == "" {
		httpError(w, http.StatusBadRequest, mcp.CodeInvalidRequest, "missing "+HeaderSessionID+" header; send initialize first")
		return nil
	}
	h.mu.Lock()
	hs := h.sessions[id]
	h.mu.Unlock()
	if hs == nil {
		httpError(w, http.StatusNotFound, mcp.CodeInvalidRequest, "session not found; it ended or expired: initialize a new one")
		return nil
	}
	if clientOf(r) != hs.sess.clientName {
		httpError(w, http.StatusForbidden, mcp.CodeInvalidRequest, "this session belongs to another client's token")
		return nil
	}
	hs.touch()
	return hs
}

// isJSON reports whether a Content-Type names application/json; the plain spelling nearly
// every client sends is taken without parsing.
func isJSON(contentType string) bool {
	if contentType == "application/json" {
		return true
	}
	mt, _, _ := mime.ParseMediaType(contentType)
	return mt == "application/json"
}

// readBody reads a request's body, bounded by limit: one of a declared length (nearly every
// client declares it) into one buffer of that size, else growing as it comes.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	body := http.MaxBytesReader(w, r.Body, limit)
	if n := r.ContentLength; n > 0 && n <= limit {
		b := make([]byte, n)
		if _, err := io.ReadFull(body, b); err != nil {
			return nil, err
		}
		return b, nil
	}
	return io.ReadAll(body)
}

func (h *HTTPHandler) post(w http.ResponseWriter, r *http.Request) {
	if !isJSON(r.Header.Get("Content-Type")) {
		httpError(w, http.StatusUnsupportedMediaType, mcp.CodeInvalidRequest, "Content-Type must be application/json")
		return
	}
	accept := r.Header.Get("Accept")
	wantsJSON, wantsSSE := accepts(accept, "application/json"), accepts(accept, "text/event-stream")
	if !wantsJSON && !wantsSSE {
		httpError(w, http.StatusNotAcceptable, mcp.CodeInvalidRequest, "Accept must list application/json and text/event-stream")
		return
	}
	body, err := readBody(w, r, h.opts.MaxBody)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			httpError(w, http.StatusRequestEntityTooLarge, mcp.CodeInvalidRequest,
				fmt.Sprintf("request body over the limit of %d bytes", h.opts.MaxBody))
			return
		}
		httpError(w, http.StatusBadRequest, mcp.CodeInvalidRequest, "reading body: "+err.Error())
		return
	}
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] == '[' {
		h.batch(w, r, body)
		return
	}
	msg, perr := rpc.Parse(body, h.srv.opts.Limits)
	if perr != nil {
		writeMessage(w, http.StatusBadRequest, "", rpc.Failure(msg.ID, perr))
		return
	}
	version := r.Header.Get(HeaderProtocolVersion)
	if f := h.srv.metas.fieldsOf(msg.Params); mcp.IsStatelessVersion(version) || f.stateless() {
		h.stateless(w, r, &msg, &f)
		return
	}
	if version != "" && !mcp.IsSupportedVersion(version) {
		badSessionVersion(w, version)
		return
	}
	if msg.IsRequest() && msg.Method == mcp.MethodInitialize {
		h.initialize(w, r, &msg)
		return
	}
	hs := h.session(w, r)
	if hs == nil {
		return
	}
	switch {
	case msg.IsNotification():
		hs.sess.HandleNotification(msg.Method, msg.Params)
		w.WriteHeader(http.StatusAccepted)
	case msg.IsResponse():
		hs.deliver(&msg)
		w.WriteHeader(http.StatusAccepted)
	case wantsSSE && streams(msg.Method):
		hs.serveStream(w, r, &msg)
	default:
		resp, ok := hs.serve(hs.ctx, &msg)
		if !ok {
			w.WriteHeader(http.StatusAccepted) // cancelled by the client: nothing to answer
			return
		}
		writeMessage(w, http.StatusOK, hs.id, resp)
	}
}

// streams reports whether answers to method go on an event stream, where the progress, log
// messages and requests the call causes can precede them.
func streams(method string) bool {
	switch method {
	case mcp.MethodToolsCall, mcp.MethodPromptsGet, mcp.MethodResourcesRead, mcp.MethodComplete:
		return true
	}
	return false
}

func (h *HTTPHandler) initialize(w http.ResponseWriter, r *http.Request, msg *rpc.Message) {
	id, err := newSessionID()
	if err != nil {
		httpError(w, http.StatusInternalServerError, mcp.CodeInternalError, err.Error())
		return
	}
	h.mu.Lock()
	full := len(h.sessions) >= h.opts.MaxSessions
	h.mu.Unlock()
	if full {
		w.Header().Set("Retry-After", "60")
		httpError(w, http.StatusServiceUnavailable, mcp.CodeInternalError,
			fmt.Sprintf("the node has %d sessions open, its limit: end one (DELETE) or try later", h.opts.MaxSessions))
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	hs := &httpSession{id: id, h: h, ctx: ctx, cancel: cancel}
	hs.touch()
	hs.sess = h.srv.NewSession(hs)
	hs.sess.clientName = clientOf(r)
	hs.sess.sessionID, hs.sess.transport = id, "tcp"
	resp, _ := hs.serve(ctx, msg)
	if resp.Error != nil {
		hs.end()
		writeMessage(w, http.StatusOK, "", resp)
		return
	}
	h.mu.Lock()
	h.sessions[id] = hs
	h.mu.Unlock()
	writeMessage(w, http.StatusOK, id, resp)
}

func (h *HTTPHandler) get(w http.ResponseWriter, r *http.Request) {
	if !accepts(r.Header.Get("Accept"), "text/event-stream") {
		httpError(w, http.StatusNotAcceptable, mcp.CodeInvalidRequest, "GET opens an event stream: Accept must list text/event-stream")
		return
	}
	hs := h.session(w, r)
	if hs == nil {
		return
	}
	st := h.newStream(w, hs.id, nil)
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
loop:
	for {
		select {
		case <-r.Context().Done():
			break loop
		case <-hs.ctx.Done():
			break loop
		case <-st.closed:
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

func (h *HTTPHandler) delete(w http.ResponseWriter, r *http.Request) {
	hs := h.session(w, r)
	if hs == nil {
		return
	}
	h.mu.Lock()
	delete(h.sessions, hs.id)
	h.mu.Unlock()
	hs.end()
	w.WriteHeader(http.StatusOK)
}

// batch serves a JSON-RPC batch, which only revision 2025-03-26 has.
func (h *HTTPHandler) batch(w http.ResponseWriter, r *http.Request, body []byte) {
	elems, perr := rpc.SplitBatch(body, h.srv.opts.Limits)
	if perr != nil {
		writeMessage(w, http.StatusBadRequest, "", rpc.Failure(rpc.ID{}, perr))
		return
	}
	hs := h.session(w, r)
	if hs == nil {
		return
	}
	if v := hs.sess.Version(); !mcp.AllowsBatches(v) {
		httpError(w, http.StatusBadRequest, mcp.CodeInvalidRequest,
			fmt.Sprintf("JSON-RPC batches are not part of protocol version %s (only of %s)", v, mcp.Version20250326))
		return
	}
	if len(elems) == 0 {
		httpError(w, http.StatusBadRequest, mcp.CodeInvalidRequest, "empty batch")
		return
	}
	if limit := h.srv.opts.MaxInflight; len(elems) > limit {
		httpError(w, http.StatusBadRequest, mcp.CodeInvalidRequest,
			fmt.Sprintf("a batch of %d messages is over the limit of %d", len(elems), limit))
		return
	}
	var wg sync.WaitGroup
	answers := make([]*rpc.Message, len(elems))
	for i, raw := range elems {
		m, perr := rpc.Parse(raw, h.srv.opts.Limits)
		switch {
		case perr != nil:
			answers[i] = rpc.Failure(m.ID, perr)
		case m.IsNotification():
			hs.sess.HandleNotification(m.Method, m.Params)
		case m.IsResponse():
			hs.deliver(&m)
		case m.Method != mcp.MethodInitialize:
			wg.Add(1)
			go func() {
				defer wg.Done()
				if resp, ok := hs.serve(hs.ctx, &m); ok {
					answers[i] = resp
				}
			}()
		default:
			answers[i] = rpc.Failure(m.ID, rpc.Errorf(mcp.CodeInvalidRequest, "initialize cannot be part of a batch"))
		}
	}
	wg.Wait()
	out := []byte{'['}
	for _, a := range answers {
		if a != nil {
			if len(out) > 1 {
				out = append(out, ',')
			}
			out = a.Append(out)
		}
	}
	if len(out) == 1 {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	writeJSON(w, http.StatusOK, hs.id, append(out, ']'))
}

// httpSession is one client of the HTTP front.
type httpSession struct {
	id     string
	h      *HTTPHandler
	sess   *Session
	ctx    context.Context // ends with the session
	cancel context.CancelFunc
	asked  rpc.Pending // the node's requests to the client, answered in POSTs

	mu       sync.Mutex
	get      *stream
	lastUsed time.Time
	events   atomic.Uint64
}

// retryMillis is the reconnection delay suggested to clients on event streams.
const retryMillis = 1000

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
func (hs *httpSession) serve(ctx context.Context, msg *rpc.Message) (*rpc.Message, bool) {
	call, err := hs.sess.Begin(ctx, msg.ID)
	if err != nil {
		return rpc.Failure(msg.ID, err), true
	}
	res, rpcErr := call.Handle(msg.Method, msg.Params)
	if call.Cancelled() {
		return nil, false
	}
	if rpcErr != nil {
		return rpc.Failure(msg.ID, rpcErr), true
	}
	return rpc.Result(msg.ID, res), true
}

// streamKey is the context key of the event stream of the POST a call came in on.
type streamKey struct{}

// serveStream answers a request that may cause messages before its answer (progress, log
// messages, requests to the client). The answer is plain JSON unless such a message comes
// first: then the response turns into an event stream, primed with an event id and a retry
// interval as SEP-1699 recommends, so that a client whose connection drops knows to come
// back. Most calls send nothing first, and JSON spares them the stream's extra writes.
//
// Only this handler's goroutine writes to the response: what the call causes is queued on
// the stream by whoever produces it (the goroutine reading a bundle, among others), which
// never waits for this client.
func (hs *httpSession) serveStream(w http.ResponseWriter, r *http.Request, msg *rpc.Message) {
	st := hs.h.newStream(w, hs.id, hs.primer)
	defer st.close()
	call, err := hs.sess.Begin(context.WithValue(hs.ctx, streamKey{}, st), msg.ID)
	if err != nil {
		writeMessage(w, http.StatusOK, hs.id, rpc.Failure(msg.ID, err))
		return
	}
	// A client that drops the connection has not cancelled the call (the spec says so):
	// the call lives as long as the session.
	h := hs.h
	h.streamCall(r, st, call, msg, func(*rpc.Error) int { return http.StatusOK })
}

// streamCall serves a request whose answer, and what comes before it, go on st. status
// gives the HTTP status of an answer written as plain JSON.
func (h *HTTPHandler) streamCall(r *http.Request, st *stream, call *Call, msg *rpc.Message, status func(*rpc.Error) int) {
	type outcome struct {
		res json.RawMessage
		err *rpc.Error
	}
	answered := make(chan outcome, 1)
	reply := func(res json.RawMessage, err *rpc.Error) { answered <- outcome{res, err} }
	if msg.Method == mcp.MethodToolsCall {
		call.HandleAsync(msg.Method, msg.Params, reply)
	} else {
		go call.HandleAsync(msg.Method, msg.Params, reply)
	}
	gone := r.Context().Done()
	for {
		select {
		case o := <-answered:
			if call.Cancelled() {
				return
			}
			resp := rpc.Result(msg.ID, o.res)
			if o.err != nil {
				resp = rpc.Failure(msg.ID, o.err)
			}
			if st.finish(status(o.err), resp) != nil {
				h.srv.opts.Logger.Warn("client left before its answer was sent", "session", st.sessionID, "method", msg.Method)
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

// send queues a message on the stream of the call ctx belongs to, else on the session's GET
// stream. It never waits for the client.
func (hs *httpSession) send(ctx context.Context, m *rpc.Message) error {
	b := m.Encode()
	if st, ok := ctx.Value(streamKey{}).(*stream); ok && st.event(b) == nil {
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

// Notify implements Outbound.
func (hs *httpSession) Notify(ctx context.Context, method string, params any) error {
	raw, err := rpc.Marshal(params)
	if err != nil {
		return fmt.Errorf("encode %s: %w", method, err)
	}
	return hs.send(ctx, rpc.Notification(method, raw))
}

// Request implements Outbound: the request goes on the stream of the related call (or the
// GET stream) and the client's answer comes back in a POST.
func (hs *httpSession) Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	return rpc.CallWait(ctx, streamPeer{hs, ctx}, method, params, func(id rpc.ID) {
		// Tell the client, so that it stops asking its user or its model.
		_ = hs.send(ctx, rpc.Notification(mcp.NotifyCancelled,
			mcp.CancelledNotice(id.String(), "the bundle no longer needs the answer")))
	})
}

// streamPeer sends the session's requests on the stream of the call ctx belongs to.
type streamPeer struct {
	hs  *httpSession
	ctx context.Context
}

func (p streamPeer) Expect(done rpc.Done) (rpc.ID, error) { return p.hs.asked.Add(done) }
func (p streamPeer) Forget(id rpc.ID) bool                { return p.hs.asked.Take(id) != nil }
func (p streamPeer) Request(id rpc.ID, method string, params json.RawMessage) error {
	if err := p.hs.send(p.ctx, rpc.Request(id, method, params)); err != nil {
		p.hs.asked.Take(id)
		return fmt.Errorf("send %s to the client: %w", method, err)
	}
	return nil
}

// deliver hands the client's answer to the request of the node waiting for it; a second
// answer, or one to a request never sent, is dropped.
func (hs *httpSession) deliver(m *rpc.Message) {
	if !hs.asked.Deliver(m) {
		hs.h.srv.opts.Logger.Debug("dropped an answer to no request of the node", "session", hs.id, "id", m.ID.String())
	}
}

// stream is one event stream: a POST's, or a session's GET one. Messages are queued on its
// Outbox and written by the handler's goroutine.
type stream struct {
	h         *HTTPHandler
	sessionID string        // sent back in the headers; "" without a session
	primer    func() string // the first event of a POST's stream; nil for none
	w         http.ResponseWriter
	rc        *http.ResponseController
	out       *rpc.Outbox
	started   bool // headers out; only the handler's goroutine touches it
	closeOnce sync.Once
	closed    chan struct{}
}

func (h *HTTPHandler) newStream(w http.ResponseWriter, sessionID string, primer func() string) *stream {
	st := &stream{h: h, sessionID: sessionID, primer: primer, w: w, rc: http.NewResponseController(w), closed: make(chan struct{})}
	st.out = rpc.NewOutbox(streamWriter{st}, rpc.OutboxOptions{MaxQueue: h.srv.opts.MaxQueue, Flush: st.rc.Flush})
	return st
}

// primer returns the SEP-1699 primer of a session's POST streams: an event id and a retry
// interval, so that a client whose connection drops knows to come back.
func (hs *httpSession) primer() string {
	return "id: " + hs.id + "-" + strconv.FormatUint(hs.events.Add(1), 10) + "\nretry: " + strconv.Itoa(retryMillis) + "\ndata: \n\n"
}

// streamWriter starts the event stream on its first write, and bounds each write in time.
type streamWriter struct{ st *stream }

func (sw streamWriter) Write(b []byte) (int, error) {
	st := sw.st
	if !st.started {
		st.start()
	}
	_ = st.rc.SetWriteDeadline(time.Now().Add(st.h.opts.StreamWriteTimeout))
	return st.w.Write(b)
}

// start writes the event stream's headers, and the primer when there is one.
func (st *stream) start() {
	hd := st.w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Cache-Control", "no-cache")
	hd.Set("X-Accel-Buffering", "no")
	if st.sessionID != "" {
		hd.Set(HeaderSessionID, st.sessionID)
	}
	st.w.WriteHeader(http.StatusOK)
	st.started = true
	if st.primer != nil {
		_, _ = io.WriteString(st.w, st.primer())
	}
	_ = st.rc.Flush()
}

// event queues one message as a server-sent event.
func (st *stream) event(data []byte) error {
	select {
	case <-st.closed:
		return errors.New("stream closed")
	default:
	}
	data = bytes.TrimSuffix(data, []byte{'\n'})
	b := make([]byte, 0, len(data)+32)
	b = append(append(append(b, "event: message\ndata: "...), data...), "\n\n"...)
	if err := st.out.Send(b); err != nil {
		if errors.Is(err, rpc.ErrNotReading) {
			st.h.srv.opts.Logger.Warn("closing an event stream the client does not read", "session", st.sessionID, "error", err)
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
		writeMessage(st.w, status, st.sessionID, answer)
		return nil
	}
	data := answer.Append(make([]byte, 0, 64+len(answer.Result)))
	_ = st.rc.SetWriteDeadline(time.Now().Add(st.h.opts.StreamWriteTimeout))
	if _, err := st.w.Write(append(append([]byte("event: message\ndata: "), data...), "\n\n"...)); err != nil {
		return err
	}
	return st.rc.Flush()
}

func (st *stream) close() {
	st.closeOnce.Do(func() {
		close(st.closed)
		st.out.Close()
	})
}

func newSessionID() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("session id: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// accepts reports whether an Accept header admits mediaType, without splitting it: it is
// read on every request.
func accepts(header, mediaType string) bool {
	if header == "" {
		return true
	}
	major, _, _ := strings.Cut(mediaType, "/")
	for header != "" {
		var part string
		part, header, _ = strings.Cut(header, ",")
		mt, _, _ := strings.Cut(part, ";")
		mt = strings.TrimSpace(mt)
		if mt == mediaType || mt == "*/*" || len(mt) == len(major)+2 && strings.HasPrefix(mt, major) && mt[len(major):] == "/*" {
			return true
		}
	}
	return false
}

func writeMessage(w http.ResponseWriter, status int, sessionID string, m *rpc.Message) {
	writeJSON(w, status, sessionID, m.Append(make([]byte, 0, 64+len(m.Result))))
}

func writeJSON(w http.ResponseWriter, status int, sessionID string, b []byte) {
	w.Header().Set("Content-Type", "application/json")
	if sessionID != "" {
		w.Header().Set(HeaderSessionID, sessionID)
	}
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func httpError(w http.ResponseWriter, status int, code int64, msg string) {
	writeMessage(w, status, "", rpc.Failure(rpc.NullID, rpc.Errorf(code, "%s", msg)))
}

// Bounds reports the HTTP front's bounds for toolnode.status.
func (h *HTTPHandler) Bounds() []node.Bound {
	h.mu.Lock()
	defer h.mu.Unlock()
	var inflight, queued int64
	for _, hs := range h.sessions {
		inflight = max(inflight, int64(hs.sess.inflightCount()))
		hs.mu.Lock()
		if hs.get != nil {
			queued = max(queued, int64(hs.get.out.Queued()))
		}
		hs.mu.Unlock()
	}
	return []node.Bound{
		{Name: "http.sessions", Limit: int64(h.opts.MaxSessions), Used: int64(len(h.sessions))},
		{Name: "http.body_bytes", Limit: h.opts.MaxBody},
		{Name: "http.session_inflight", Limit: int64(h.srv.opts.MaxInflight), Used: inflight},
		{Name: "http.stream_queued_bytes", Limit: int64(h.srv.opts.maxQueue()), Used: queued},
	}
}
