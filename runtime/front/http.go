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
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sourcegraph/jsonrpc2"

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
	// Origin header (not from a browser) are always accepted.
	AllowOrigins []string
	// Token, when set, must come with every request as "Authorization: Bearer <Token>".
	Token string
	// MaxBody is the largest request body accepted, in bytes. Default 16 MiB.
	MaxBody int64
	// IdleTimeout ends sessions that saw no request for this long. Default 1h.
	IdleTimeout time.Duration
	// KeepAlive is the interval of comment lines on idle event streams, which keep proxies
	// from closing them. Default 25s.
	KeepAlive time.Duration
}

// HTTPHandler serves the MCP Streamable HTTP transport (spec 2025-11-25, "Transports"):
// POST carries client messages and answers with JSON or an event stream, GET opens a stream
// for the server's own messages, DELETE ends a session.
type HTTPHandler struct {
	srv  *Server
	opts HTTPOptions

	mu       sync.Mutex
	sessions map[string]*httpSession

	stop chan struct{}
	wg   sync.WaitGroup
}

// NewHTTPHandler returns the handler of the HTTP front; Close ends its sessions.
func (s *Server) NewHTTPHandler(opts HTTPOptions) *HTTPHandler {
	if opts.MaxBody <= 0 {
		opts.MaxBody = 16 << 20
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = time.Hour
	}
	if opts.KeepAlive <= 0 {
		opts.KeepAlive = 25 * time.Second
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

func (h *HTTPHandler) expire() {
	defer h.wg.Done()
	t := time.NewTicker(min(h.opts.IdleTimeout/4, time.Minute))
	defer t.Stop()
	for {
		select {
		case <-h.stop:
			return
		case now := <-t.C:
			h.mu.Lock()
			for id, hs := range h.sessions {
				if hs.idleSince(now) > h.opts.IdleTimeout {
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
	if !h.originAllowed(r.Header.Get("Origin")) {
		httpError(w, http.StatusForbidden, mcp.CodeInvalidRequest, "origin "+r.Header.Get("Origin")+" is not allowed (use --allow-origin)")
		return
	}
	if h.opts.Token != "" {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(h.opts.Token)) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="toolnode"`)
			httpError(w, http.StatusUnauthorized, mcp.CodeInvalidRequest, "missing or wrong bearer token")
			return
		}
	}
	if v := r.Header.Get(HeaderProtocolVersion); v != "" && !mcp.IsSupportedVersion(v) {
		httpError(w, http.StatusBadRequest, mcp.CodeInvalidRequest,
			fmt.Sprintf("unsupported %s %q; supported: %s", HeaderProtocolVersion, v, strings.Join(mcp.SupportedVersions(), ", ")))
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
		w.Header().Set("Allow", "GET, POST, DELETE")
		httpError(w, http.StatusMethodNotAllowed, mcp.CodeInvalidRequest, "use POST, GET or DELETE")
	}
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
	host := u.Hostname()
	if host == "localhost" {
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
	hs.touch()
	return hs
}

// wireMessage is any JSON-RPC message as it arrives.
type wireMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  *string         `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   *jsonrpc2.Error `json:"error"`
}

func (m *wireMessage) isRequest() bool {
	return m.Method != nil && len(m.ID) > 0 && string(m.ID) != "null"
}
func (m *wireMessage) isNotification() bool { return m.Method != nil && len(m.ID) == 0 }
func (m *wireMessage) isResponse() bool {
	return m.Method == nil && len(m.ID) > 0 && (m.Result != nil || m.Error != nil)
}

func (h *HTTPHandler) post(w http.ResponseWriter, r *http.Request) {
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct != "application/json" {
		httpError(w, http.StatusUnsupportedMediaType, mcp.CodeInvalidRequest, "Content-Type must be application/json")
		return
	}
	accept := r.Header.Get("Accept")
	wantsJSON, wantsSSE := accepts(accept, "application/json"), accepts(accept, "text/event-stream")
	if !wantsJSON && !wantsSSE {
		httpError(w, http.StatusNotAcceptable, mcp.CodeInvalidRequest, "Accept must list application/json and text/event-stream")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.opts.MaxBody))
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
	var msg wireMessage
	if err := json.Unmarshal(body, &msg); err != nil {
		httpError(w, http.StatusBadRequest, mcp.CodeParseError, "parse error: "+err.Error())
		return
	}
	if msg.JSONRPC != "2.0" || !(msg.isRequest() || msg.isNotification() || msg.isResponse()) {
		httpError(w, http.StatusBadRequest, mcp.CodeInvalidRequest, `invalid request: not a JSON-RPC 2.0 request, notification or response`)
		return
	}
	if msg.isRequest() && *msg.Method == mcp.MethodInitialize {
		h.initialize(w, r, &msg)
		return
	}
	hs := h.session(w, r)
	if hs == nil {
		return
	}
	switch {
	case msg.isNotification():
		hs.sess.HandleNotification(*msg.Method, msg.Params)
		w.WriteHeader(http.StatusAccepted)
	case msg.isResponse():
		hs.deliver(&msg)
		w.WriteHeader(http.StatusAccepted)
	case wantsSSE && streams(*msg.Method):
		hs.serveSSE(w, r, &msg)
	default:
		resp, ok := hs.serve(hs.ctx, &msg)
		if !ok {
			w.WriteHeader(http.StatusAccepted) // cancelled by the client: nothing to answer
			return
		}
		writeJSON(w, http.StatusOK, hs.id, resp)
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

func (h *HTTPHandler) initialize(w http.ResponseWriter, r *http.Request, msg *wireMessage) {
	id, err := newSessionID()
	if err != nil {
		httpError(w, http.StatusInternalServerError, mcp.CodeInternalError, err.Error())
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	hs := &httpSession{id: id, h: h, ctx: ctx, cancel: cancel, pending: map[string]chan *wireMessage{}}
	hs.touch()
	hs.sess = h.srv.NewSession(hs)
	resp, _ := hs.serve(ctx, msg)
	if resp.Error != nil {
		hs.end()
		writeJSON(w, http.StatusOK, "", resp)
		return
	}
	h.mu.Lock()
	h.sessions[id] = hs
	h.mu.Unlock()
	writeJSON(w, http.StatusOK, id, resp)
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
	sw := startSSE(w, hs.id)
	hs.mu.Lock()
	old := hs.get
	hs.get = sw
	hs.mu.Unlock()
	if old != nil {
		old.close() // one stream for the server's own messages; the newest wins
	}
	t := time.NewTicker(h.opts.KeepAlive)
	defer t.Stop()
	for {
		select {
		case <-r.Context().Done():
		case <-hs.ctx.Done():
		case <-sw.done:
		case <-t.C:
			if sw.comment("keep-alive") == nil {
				continue
			}
		}
		break
	}
	sw.close()
	hs.mu.Lock()
	if hs.get == sw {
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
	var msgs []wireMessage
	if err := json.Unmarshal(body, &msgs); err != nil {
		httpError(w, http.StatusBadRequest, mcp.CodeParseError, "parse error: "+err.Error())
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
	if len(msgs) == 0 {
		httpError(w, http.StatusBadRequest, mcp.CodeInvalidRequest, "empty batch")
		return
	}
	var wg sync.WaitGroup
	answers := make([]*response, len(msgs))
	for i := range msgs {
		m := &msgs[i]
		switch {
		case m.isNotification():
			hs.sess.HandleNotification(*m.Method, m.Params)
		case m.isResponse():
			hs.deliver(m)
		case m.isRequest() && *m.Method != mcp.MethodInitialize:
			wg.Add(1)
			go func() {
				defer wg.Done()
				if resp, ok := hs.serve(hs.ctx, m); ok {
					answers[i] = &resp
				}
			}()
		default:
			answers[i] = &response{JSONRPC: "2.0", ID: orNull(m.ID), Error: &jsonrpc2.Error{Code: mcp.CodeInvalidRequest, Message: "invalid request in batch"}}
		}
	}
	wg.Wait()
	var out []*response
	for _, a := range answers {
		if a != nil {
			out = append(out, a)
		}
	}
	if len(out) == 0 {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	writeJSON(w, http.StatusOK, hs.id, out)
}

// httpSession is one client of the HTTP front.
type httpSession struct {
	id     string
	h      *HTTPHandler
	sess   *Session
	ctx    context.Context // ends with the session
	cancel context.CancelFunc

	mu       sync.Mutex
	get      *sseWriter
	pending  map[string]chan *wireMessage // our requests to the client, by id
	lastUsed time.Time
	ids      atomic.Uint64
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
	hs.mu.Lock()
	get := hs.get
	hs.mu.Unlock()
	if get != nil {
		get.close()
	}
}

// response is a JSON-RPC response as written.
type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *jsonrpc2.Error `json:"error,omitempty"`
}

// MarshalJSON writes a result that is already JSON as it is: the bundle's bytes, checked
// when they were read, need no second pass through the encoder.
func (r response) MarshalJSON() ([]byte, error) {
	raw, ok := r.Result.(json.RawMessage)
	if r.Error != nil || !ok {
		type plain response
		return json.Marshal(plain(r))
	}
	b := make([]byte, 0, len(raw)+len(r.ID)+40)
	b = append(append(b, `{"jsonrpc":"2.0","id":`...), r.ID...)
	b = append(append(append(b, `,"result":`...), raw...), '}')
	return b, nil
}

// serve runs a request and returns its response, or false when the client cancelled it.
func (hs *httpSession) serve(ctx context.Context, msg *wireMessage) (response, bool) {
	var id jsonrpc2.ID
	if err := json.Unmarshal(msg.ID, &id); err != nil {
		return response{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: &jsonrpc2.Error{Code: mcp.CodeInvalidRequest, Message: "invalid id"}}, true
	}
	call := hs.sess.Begin(ctx, id)
	res, rpcErr := call.Handle(*msg.Method, msg.Params)
	if call.Cancelled() {
		return response{}, false
	}
	resp := response{JSONRPC: "2.0", ID: msg.ID, Error: rpcErr}
	if rpcErr == nil {
		resp.Result = res
	}
	return resp, true
}

// streamKey is the context key of the event stream of the POST a call came in on.
type streamKey struct{}

// serveSSE answers a request that may cause messages before its answer (progress, log
// messages, requests to the client). The answer is plain JSON unless such a message comes
// first: then the response turns into an event stream, primed with an event id and a retry
// interval as SEP-1699 recommends, so that a client whose connection drops knows to come
// back. Most calls send nothing first, and JSON spares them the stream's extra writes.
func (hs *httpSession) serveSSE(w http.ResponseWriter, r *http.Request, msg *wireMessage) {
	sw := &sseWriter{w: w, rc: http.NewResponseController(w), done: make(chan struct{}), sessionID: hs.id,
		primer: func() string {
			return fmt.Sprintf("id: %s-%d\nretry: %d\ndata: \n\n", hs.id, hs.events.Add(1), retryMillis)
		}}
	defer sw.close()
	// A client that drops the connection has not cancelled the call (the spec says so):
	// the call lives as long as the session.
	ctx := context.WithValue(hs.ctx, streamKey{}, sw)
	resp, ok := hs.serve(ctx, msg)
	if !ok {
		return
	}
	b, err := encode(resp)
	if err != nil {
		b, _ = json.Marshal(response{JSONRPC: "2.0", ID: msg.ID, Error: &jsonrpc2.Error{Code: mcp.CodeInternalError, Message: err.Error()}})
	}
	if sw.finish(b) != nil {
		hs.h.srv.opts.Logger.Warn("client left before its answer was sent", "session", hs.id, "method", *msg.Method)
	}
}

// send writes a message on the stream of the call ctx belongs to, else on the session's GET
// stream.
func (hs *httpSession) send(ctx context.Context, b []byte) error {
	if sw, ok := ctx.Value(streamKey{}).(*sseWriter); ok && sw.event(b) == nil {
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
	b, err := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		Method  string `json:"method"`
		Params  any    `json:"params,omitempty"`
	}{"2.0", method, params})
	if err != nil {
		return fmt.Errorf("encode %s: %w", method, err)
	}
	return hs.send(ctx, b)
}

// Request implements Outbound: the request goes on the stream of the related call (or the
// GET stream) and the client's answer comes back in a POST.
func (hs *httpSession) Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	id := fmt.Sprintf(`"toolnode-%d"`, hs.ids.Add(1))
	ch := make(chan *wireMessage, 1)
	hs.mu.Lock()
	hs.pending[id] = ch
	hs.mu.Unlock()
	defer func() {
		hs.mu.Lock()
		delete(hs.pending, id)
		hs.mu.Unlock()
	}()
	b, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params,omitempty"`
	}{"2.0", json.RawMessage(id), method, params})
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", method, err)
	}
	if err := hs.send(ctx, b); err != nil {
		return nil, fmt.Errorf("send %s to the client: %w", method, err)
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			return nil, m.Error
		}
		return m.Result, nil
	case <-ctx.Done():
		// Tell the client, so that it stops asking its user or its model.
		_ = hs.Notify(context.WithoutCancel(ctx), mcp.NotifyCancelled,
			mcp.CancelledParams{RequestID: json.RawMessage(id), Reason: "the bundle no longer needs the answer"})
		return nil, context.Cause(ctx)
	case <-hs.ctx.Done():
		return nil, errors.New("client session ended")
	}
}

func (hs *httpSession) deliver(m *wireMessage) {
	hs.mu.Lock()
	ch := hs.pending[string(m.ID)]
	hs.mu.Unlock()
	if ch == nil {
		hs.h.srv.opts.Logger.Debug("answer to no pending request", "session", hs.id, "id", string(m.ID))
		return
	}
	ch <- m
}

// sseWriter writes server-sent events to one response. Safe for concurrent use.
type sseWriter struct {
	mu        sync.Mutex
	w         http.ResponseWriter
	rc        *http.ResponseController
	sessionID string
	primer    func() string // the first event, written when the stream starts; may be nil
	started   bool          // the event stream's headers are out
	closed    bool
	done      chan struct{}
}

// startSSE starts an event stream at once (for GET).
func startSSE(w http.ResponseWriter, sessionID string) *sseWriter {
	sw := &sseWriter{w: w, rc: http.NewResponseController(w), done: make(chan struct{}), sessionID: sessionID}
	sw.mu.Lock()
	defer sw.mu.Unlock()
	sw.start()
	_ = sw.rc.Flush()
	return sw
}

// start writes the event stream's headers and the primer; the caller holds mu.
func (s *sseWriter) start() {
	hd := s.w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Cache-Control", "no-cache")
	if s.sessionID != "" {
		hd.Set(HeaderSessionID, s.sessionID)
	}
	s.w.WriteHeader(http.StatusOK)
	s.started = true
	if s.primer != nil {
		_, _ = io.WriteString(s.w, s.primer())
	}
}

// finish writes the answer that ends the response: an event when the stream has started,
// else the whole response as JSON.
func (s *sseWriter) finish(answer []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errors.New("stream closed")
	}
	if s.started {
		return s.writeLocked("event: message\ndata: ", answer, "\n\n")
	}
	s.w.Header().Set("Content-Type", "application/json")
	s.w.Header().Set(HeaderSessionID, s.sessionID)
	s.w.WriteHeader(http.StatusOK)
	_, err := s.w.Write(answer)
	return err
}

func (s *sseWriter) event(data []byte) error {
	return s.write("event: message\ndata: ", data, "\n\n")
}

func (s *sseWriter) comment(text string) error {
	return s.write(": ", []byte(text), "\n\n")
}

func (s *sseWriter) write(prefix string, data []byte, suffix string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errors.New("stream closed")
	}
	return s.writeLocked(prefix, data, suffix)
}

// writeLocked writes one event, starting the stream first if need be; the caller holds mu.
func (s *sseWriter) writeLocked(prefix string, data []byte, suffix string) error {
	if !s.started {
		s.start()
	}
	buf := make([]byte, 0, len(prefix)+len(data)+len(suffix))
	buf = append(append(append(buf, prefix...), data...), suffix...)
	if _, err := s.w.Write(buf); err != nil {
		return err
	}
	return s.rc.Flush()
}

func (s *sseWriter) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		close(s.done)
	}
}

func newSessionID() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("session id: %w", err)
	}
	return hex.EncodeToString(b), nil
}

func accepts(header, mediaType string) bool {
	if header == "" {
		return true
	}
	for _, part := range strings.Split(header, ",") {
		mt, _, _ := strings.Cut(strings.TrimSpace(part), ";")
		mt = strings.TrimSpace(mt)
		if mt == mediaType || mt == "*/*" || mt == strings.Split(mediaType, "/")[0]+"/*" {
			return true
		}
	}
	return false
}

// encode writes v as JSON; a response's own encoding is taken as it is, since
// json.Marshal would scan its result, of any size, once more to check it.
func encode(v any) ([]byte, error) {
	if r, ok := v.(response); ok {
		return r.MarshalJSON()
	}
	return json.Marshal(v)
}

func writeJSON(w http.ResponseWriter, status int, sessionID string, v any) {
	b, err := encode(v)
	if err != nil {
		status = http.StatusInternalServerError
		b, _ = json.Marshal(response{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: &jsonrpc2.Error{Code: mcp.CodeInternalError, Message: err.Error()}})
	}
	w.Header().Set("Content-Type", "application/json")
	if sessionID != "" {
		w.Header().Set(HeaderSessionID, sessionID)
	}
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func httpError(w http.ResponseWriter, status int, code int64, msg string) {
	writeJSON(w, status, "", response{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: &jsonrpc2.Error{Code: code, Message: msg}})
}

func orNull(id json.RawMessage) json.RawMessage {
	if len(id) == 0 {
		return json.RawMessage("null")
	}
	return id
}
