// Package httpfront serves MCP over Streamable HTTP (spec 2025-11-25, "Transports", and
// the stateless requests of 2026-07-28) in front of a front.Server. Its rooms: the guard
// every request passes (guard.go), the sessions of the 2025 revisions (session.go), event
// streams (stream.go), stateless requests (stateless.go), batches (batch.go) and OAuth
// (oauth.go); this file holds the handler's life and routes requests to the rooms.
package httpfront

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/front"
	"github.com/toolnode/toolnode/runtime/internal/node"
	"github.com/toolnode/toolnode/runtime/internal/oauth"
	"github.com/toolnode/toolnode/runtime/internal/rpc"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// HTTP header names of the Streamable HTTP transport.
const (
	HeaderSessionID       = "Mcp-Session-Id"
	HeaderProtocolVersion = "Mcp-Protocol-Version"
)

// Options configures the Streamable HTTP front.
type Options struct {
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
	// MaxClientSessions bounds the sessions one client has open at once (a client is its
	// OAuth subject or access-file client, else the address it connects from); past it
	// its initialize is refused with 503. Default DefaultMaxClientSessions.
	MaxClientSessions int
	// IdleTimeout ends sessions that saw no request for this long. Default 30m; sessions
	// idle for a minute end sooner while more than half of MaxSessions are open.
	IdleTimeout time.Duration
	// KeepAlive is the interval of comment lines on idle event streams, which keep proxies
	// from closing them. Default 25s.
	KeepAlive time.Duration
	// StreamWriteTimeout is how long one write to an event stream may wait for the client
	// before the stream is closed. Default 30s.
	StreamWriteTimeout time.Duration
	// TrustedProxies are the addresses of balancers that may say who a client is, by
	// the PROXY protocol (see WrapListener) or X-Forwarded-For (see proxy.go). Default:
	// none, and every client is known by the address it connects from.
	TrustedProxies []netip.Prefix
	// Replicas, when set, is the cluster this front serves in as one of several replicas
	// behind a balancer (see replica.go). Default: none.
	Replicas Replicas
}

// DefaultMaxSessions is how many HTTP sessions may be open at once by default.
const DefaultMaxSessions = 1000

// DefaultMaxClientSessions is how many HTTP sessions one client may have open at once by
// default: more than any client opens for itself, few enough that no client alone fills
// the node's MaxSessions.
const DefaultMaxClientSessions = 100

// Handler serves the MCP Streamable HTTP transport: POST carries client messages and
// answers with JSON or an event stream, GET opens a stream for the server's own messages,
// DELETE ends a session.
type Handler struct {
	srv  *front.Server
	opts Options
	rs   *oauth.ResourceServer // set by WithOAuth

	lastHost atomic.Pointer[string] // the last Host header the guard accepted (CheckHost)
	date     dateCache

	mu       sync.Mutex
	sessions map[string]*httpSession
	byClient map[string]int // open sessions per client (Identity.Bound)

	stop chan struct{}
	wg   sync.WaitGroup
}

// New returns the handler of the HTTP front of srv; Close ends its sessions.
func New(srv *front.Server, opts Options) *Handler {
	if opts.MaxBody <= 0 {
		opts.MaxBody = 16 << 20
	}
	if opts.MaxSessions <= 0 {
		opts.MaxSessions = DefaultMaxSessions
	}
	if opts.MaxClientSessions <= 0 {
		opts.MaxClientSessions = DefaultMaxClientSessions
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
	h := &Handler{srv: srv, opts: opts, sessions: map[string]*httpSession{}, byClient: map[string]int{}, stop: make(chan struct{})}
	h.wg.Add(1)
	go h.expire()
	return h
}

// Close ends every session and stops the handler's goroutines.
func (h *Handler) Close() {
	close(h.stop)
	h.mu.Lock()
	sessions := h.sessions
	h.sessions, h.byClient = map[string]*httpSession{}, map[string]int{}
	h.mu.Unlock()
	for _, hs := range sessions {
		hs.end()
	}
	h.wg.Wait()
}

// Sessions is how many sessions are open, and the bound.
func (h *Handler) Sessions() (open, limit int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.sessions), h.opts.MaxSessions
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header()["Date"] = h.date.header(time.Now())
	id, ok := h.guard(w, r)
	if !ok {
		return
	}
	if r.URL.Path == ApprovalsPath {
		h.approvals(w, r, id)
		return
	}
	h.route(w, r, id, false)
}

// route serves a request that passed the guard, from the client id: here, or at the
// replica holding its session. One another replica forwarded (forwarded) is served here or
// not at all, never forwarded again.
func (h *Handler) route(w http.ResponseWriter, r *http.Request, id front.Identity, forwarded bool) {
	if owner := h.replicaOf(forwarded, r); owner != "" {
		h.forward(w, r, id, owner, nil)
		return
	}
	if v := r.Header.Get(HeaderProtocolVersion); r.Method != http.MethodPost && v != "" && !mcp.IsSupportedVersion(v) {
		badSessionVersion(w, v)
		return
	}
	switch r.Method {
	case http.MethodPost:
		h.post(w, r, id, forwarded)
	case http.MethodGet:
		h.get(w, r, id)
	case http.MethodDelete:
		h.delete(w, r, id)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE, OPTIONS")
		httpError(w, http.StatusMethodNotAllowed, mcp.CodeInvalidRequest, "use POST, GET or DELETE")
	}
}

// post serves a POST: one message, or a batch, of a session or of a stateless client.
func (h *Handler) post(w http.ResponseWriter, r *http.Request, id front.Identity, forwarded bool) {
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
		h.batch(w, r, id, body)
		return
	}
	msg, perr := rpc.Parse(body, h.srv.Options().Limits)
	if perr != nil {
		writeMessage(w, http.StatusBadRequest, nil, rpc.Failure(msg.ID, perr))
		return
	}
	version := r.Header.Get(HeaderProtocolVersion)
	var a front.Admitted
	if msg.IsRequest() {
		var refused *front.Refusal
		if a, refused = h.admit(r, &msg, id, version); refused != nil {
			if refused.Stateless {
				writeMessage(w, refusalStatus(refused.Err), nil, rpc.Failure(msg.ID, refused.Err))
			} else {
				writeMessage(w, http.StatusOK, r.Header.Values(HeaderSessionID), rpc.Failure(msg.ID, refused.Err))
			}
			return
		}
	}
	if a.Client != nil || !msg.IsRequest() && mcp.IsStatelessVersion(version) {
		h.stateless(w, r, id, &msg, a, body, forwarded)
		return
	}
	if version != "" && !mcp.IsSupportedVersion(version) {
		badSessionVersion(w, version)
		return
	}
	if msg.IsRequest() && msg.Method == mcp.MethodInitialize {
		h.initialize(w, r, id, &msg, a.Req)
		return
	}
	hs := h.session(w, r, id)
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
		hs.serveStream(w, r, &msg, a.Req)
	default:
		resp, ok := hs.serve(&msg, a.Req)
		if !ok {
			w.WriteHeader(http.StatusAccepted) // cancelled by the client: nothing to answer
			return
		}
		writeMessage(w, http.StatusOK, hs.idHeader, resp)
	}
}

// admit hands a request to the front's admission (front.Server.Admit) with what HTTP knows
// beside it: the caller's token, the revision its header names (version), and the headers
// mirroring its body, which a stateless request's must match.
func (h *Handler) admit(r *http.Request, msg *rpc.Message, id front.Identity, version string) (front.Admitted, *front.Refusal) {
	token, _ := h.token(r)
	return h.srv.Admit(&front.Inbound{Method: msg.Method, Params: msg.Params, Token: token, Version: version, Check: (*mirrored)(r),
		Out: noStream{}, Info: front.SessionInfo{Identity: id, Transport: "tcp"}})
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
// client declares it) into one buffer of that size, the declared length checked against the
// limit before anything is read (net/http reads no further than it); else growing as it
// comes, up to the limit. A body over the limit is an *http.MaxBytesError.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	if n := r.ContentLength; n > limit {
		return nil, &http.MaxBytesError{Limit: limit}
	} else if n > 0 {
		b := make([]byte, n)
		if _, err := io.ReadFull(r.Body, b); err != nil {
			return nil, err
		}
		return b, nil
	}
	return io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
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

// badSessionVersion refuses a request of a session whose version header names a revision
// no session speaks.
func badSessionVersion(w http.ResponseWriter, v string) {
	httpError(w, http.StatusBadRequest, mcp.CodeInvalidRequest,
		fmt.Sprintf("unsupported %s %q; supported: %s", HeaderProtocolVersion, v, strings.Join(mcp.AllVersions(), ", ")))
}

// writeMessage writes m as the whole response, with status and the header sessionID (the
// Mcp-Session-Id header's value, nil for none).
func writeMessage(w http.ResponseWriter, status int, sessionID []string, m *rpc.Message) {
	// The response copies what it is given (into its buffer, or to the socket), so the
	// encoding's buffer serves the next answer.
	buf := answerBuffers.Get().(*[]byte)
	*buf = m.Append((*buf)[:0])
	writeJSON(w, status, sessionID, *buf)
	if cap(*buf) <= keptAnswerBuffer {
		answerBuffers.Put(buf)
	}
}

// answerBuffers holds the buffers (*[]byte) answers are encoded into, one for every call.
var answerBuffers = sync.Pool{New: func() any { return new([]byte) }}

// keptAnswerBuffer bounds the buffers kept in answerBuffers: one grown by a large result
// goes to the garbage collector.
const keptAnswerBuffer = 64 << 10

// jsonContentType is the Content-Type of a JSON response, one value shared by every
// response: net/http only reads a header's values.
var jsonContentType = []string{"application/json"}

// writeJSON writes b as the whole response, with status and the header sessionID (the
// Mcp-Session-Id header's value, nil for none: a session's own, made once, is shared by its
// answers as jsonContentType is).
func writeJSON(w http.ResponseWriter, status int, sessionID []string, b []byte) {
	hd := w.Header()
	hd["Content-Type"] = jsonContentType
	if len(sessionID) > 0 {
		hd[HeaderSessionID] = sessionID[:1]
	}
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func httpError(w http.ResponseWriter, status int, code int64, msg string) {
	writeMessage(w, status, nil, rpc.Failure(rpc.NullID, rpc.Errorf(code, "%s", msg)))
}

// Bounds reports the HTTP front's bounds for toolnode.status.
func (h *Handler) Bounds() []node.Bound {
	h.mu.Lock()
	defer h.mu.Unlock()
	var inflight, queued, perClient int64
	for _, hs := range h.sessions {
		inflight = max(inflight, int64(hs.sess.Inflight()))
		hs.mu.Lock()
		if hs.get != nil {
			queued = max(queued, int64(hs.get.out.Queued()))
		}
		hs.mu.Unlock()
	}
	for _, n := range h.byClient {
		perClient = max(perClient, int64(n))
	}
	return []node.Bound{
		{Name: "http.sessions", Limit: int64(h.opts.MaxSessions), Used: int64(len(h.sessions))},
		{Name: "http.client_sessions", Limit: int64(h.opts.MaxClientSessions), Used: perClient},
		{Name: "http.body_bytes", Limit: h.opts.MaxBody},
		{Name: "http.session_inflight", Limit: int64(h.srv.Options().MaxInflight), Used: inflight},
		{Name: "http.stream_queued_bytes", Limit: int64(h.srv.Options().MaxQueue), Used: queued},
	}
}
