package upstream

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/toolnode/toolnode/runtime/internal/redirect"
	"github.com/toolnode/toolnode/runtime/internal/rpc"
	"github.com/toolnode/toolnode/sdk-go/mcp"
	"github.com/toolnode/toolnode/sdk-go/rawjson"
)

// Streamable HTTP header names.
const (
	headerSessionID       = "Mcp-Session-Id"
	headerProtocolVersion = "Mcp-Protocol-Version"
	headerMethod          = "Mcp-Method"
	headerName            = "Mcp-Name"
)

// streamRetry is the pause before the GET stream of a session is opened again after the
// server closed it.
const streamRetry = time.Second

// newHTTPClient returns the client of a remote bundle: connecting and the TLS handshake are
// bounded, answers are not (a call lasts as long as its own timeouts allow, which its
// context carries).
func newHTTPClient() *http.Client {
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	return &http.Client{Transport: &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
	}}
}

// httpTransport speaks Streamable HTTP to a remote bundle: each message the node sends is a
// POST, answered with JSON or an SSE stream that carries the request's notifications (and,
// in a session, the server's requests) before its answer. In a session the server's other
// messages come on a GET stream, and Mcp-Session-Id and Mcp-Protocol-Version go on every
// request; in the stateless era every POST stands alone, with Mcp-Method and Mcp-Name, and
// closing a request's stream is what cancels it.
type httpTransport struct {
	name    string
	url     string
	headers http.Header
	client  *http.Client
	log     hclog.Logger
	maxBody int
	limits  rpc.Limits
	hooks   hooks
	pending rpc.Pending

	ctx    context.Context // ends with the transport; every request runs under it
	cancel context.CancelCauseFunc

	maxQueue int
	queued   atomic.Int64 // bytes of request bodies not yet answered

	// The tool parameters mirrored into headers of tools/call, by tool name.
	paramHeaders atomic.Pointer[map[string][]paramHeader]

	mu        sync.Mutex
	era       Era
	version   string // of the session's initialize answer
	sessionID string
	calls     map[string]context.CancelFunc // the POSTs of calls waiting, by id

	endOnce sync.Once
	done    chan struct{}
	endErr  error // why the transport ended; set before done closes
}

func newHTTP(cfg Config, h hooks) (*httpTransport, error) {
	client := cfg.HTTPClient
	if client == nil {
		client = newHTTPClient()
	}
	// The bundle's headers hold its secrets: they go to its server's origin only.
	client = redirect.Client(client)
	ctx, cancel := context.WithCancelCause(context.Background())
	t := &httpTransport{
		name: cfg.Name, url: cfg.URL, headers: cfg.Headers.Clone(), client: client, log: cfg.Logger,
		maxBody: cfg.MaxLine, limits: cfg.Limits, hooks: h, ctx: ctx, cancel: cancel,
		maxQueue: cfg.MaxQueue, calls: map[string]context.CancelFunc{}, done: make(chan struct{}),
	}
	if t.headers == nil {
		t.headers = http.Header{}
	}
	return t, nil
}

func (t *httpTransport) setEra(e Era, version string) {
	t.mu.Lock()
	t.era, t.version = e, version
	t.mu.Unlock()
}

// opened starts the GET stream of a session, where the server sends what belongs to no
// request.
func (t *httpTransport) opened() {
	t.mu.Lock()
	session := t.era == EraSession
	t.mu.Unlock()
	if session {
		go t.stream()
	}
}

func (t *httpTransport) Expect(done rpc.Done) (rpc.ID, error)    { return t.pending.Add(done) }
func (t *httpTransport) ExpectTo(a rpc.Answerer) (rpc.ID, error) { return t.pending.AddTo(a) }

// Request posts a request on a goroutine of its own; its answer ends the call.
func (t *httpTransport) Request(id rpc.ID, method string, params json.RawMessage) error {
	return t.request(id, method, params, nil)
}

// request is Request with header, unless nil, set over the bundle's own headers.
func (t *httpTransport) request(id rpc.ID, method string, params json.RawMessage, header http.Header) error {
	body := rpc.Request(id, method, params).Encode()
	if q := t.queued.Add(int64(len(body))); q > int64(t.maxQueue) {
		t.queued.Add(-int64(len(body)))
		t.pending.Take(id)
		return fmt.Errorf("remote bundle %q has %d bytes of requests unanswered, over the bound of %d: %w",
			t.name, q-int64(len(body)), t.maxQueue, rpc.ErrNotReading)
	}
	ctx, cancel := context.WithCancel(t.ctx)
	t.mu.Lock()
	t.calls[id.String()] = cancel
	t.mu.Unlock()
	go func() {
		defer func() {
			t.mu.Lock()
			delete(t.calls, id.String())
			t.mu.Unlock()
			cancel()
		}()
		t.post(ctx, id, method, params, body, header)
	}()
	return nil
}

// Forget gives up on call id, closing its request's stream: to a stateless server that is
// the cancellation itself.
func (t *httpTransport) Forget(id rpc.ID) bool {
	took := t.pending.Take(id) != nil
	t.mu.Lock()
	cancel := t.calls[id.String()]
	t.mu.Unlock()
	if took && cancel != nil {
		cancel()
	}
	return took
}

// Notify posts a notification. The stateless era has none from client to server over HTTP:
// notifications/cancelled is replaced by closing the request's stream, which Forget did.
func (t *httpTransport) Notify(method string, params json.RawMessage) error {
	if t.currentEra() == EraStateless {
		return nil
	}
	return t.postMessage(rpc.Notification(method, params))
}

// Reply answers a request the server sent on a stream of the session.
func (t *httpTransport) Reply(id rpc.ID, result json.RawMessage) error {
	return t.postMessage(rpc.Result(id, result))
}

// ReplyError answers a request of the server with an error.
func (t *httpTransport) ReplyError(id rpc.ID, err error) error {
	return t.postMessage(rpc.Failure(id, err))
}

// postMessage posts a notification or a response, which the server answers with 202.
func (t *httpTransport) postMessage(m *rpc.Message) error {
	select {
	case <-t.done:
		return t.gone()
	default:
	}
	body := m.Encode()
	go func() {
		req, err := t.newRequest(t.ctx, http.MethodPost, body, m.Method, nil)
		if err != nil {
			return
		}
		resp, err := t.client.Do(req)
		if err != nil {
			t.log.Debug("post to remote bundle", "method", m.Method, "error", err)
			return
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		if resp.StatusCode >= 300 {
			t.log.Debug("remote bundle refused a message", "method", m.Method, "status", resp.Status)
		}
	}()
	return nil
}

func (t *httpTransport) currentEra() Era {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.era
}

// newRequest builds a request to the endpoint with the headers of the era.
func (t *httpTransport) newRequest(ctx context.Context, verb string, body []byte, method string, params json.RawMessage) (*http.Request, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, verb, t.url, r)
	if err != nil {
		return nil, fmt.Errorf("remote bundle %q: %w", t.name, err)
	}
	for k, v := range t.headers {
		req.Header[k] = v
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
	} else {
		req.Header.Set("Accept", "text/event-stream")
	}
	t.mu.Lock()
	era, version, session := t.era, t.version, t.sessionID
	t.mu.Unlock()
	switch era {
	case EraStateless:
		req.Header.Set(headerProtocolVersion, mcp.Version20260728)
		if method != "" {
			req.Header.Set(headerMethod, method)
			if name, ok := nameOf(method, params); ok {
				req.Header.Set(headerName, headerValue(name))
				t.mirrorParams(req.Header, method, name, params)
			}
		}
	case EraSession:
		if session != "" {
			req.Header.Set(headerSessionID, session)
		}
		if version != "" {
			req.Header.Set(headerProtocolVersion, version)
		}
	}
	return req, nil
}

// mirrorParams sets the Mcp-Param-<Name> headers of a tools/call, from the parameters its
// tool marks with x-mcp-header.
func (t *httpTransport) mirrorParams(h http.Header, method, tool string, params json.RawMessage) {
	m := t.paramHeaders.Load()
	if method != mcp.MethodToolsCall || m == nil || len((*m)[tool]) == 0 {
		return
	}
	args, ok := rawjson.Member(params, "arguments")
	if !ok {
		return
	}
	for _, p := range (*m)[tool] {
		if v, ok := paramValue(args, p.path); ok {
			h.Set("Mcp-Param-"+p.name, v)
		}
	}
}

// nameOf is what Mcp-Name carries: the tool or prompt name, or the resource URI.
func nameOf(method string, params json.RawMessage) (string, bool) {
	key := ""
	switch method {
	case mcp.MethodToolsCall, mcp.MethodPromptsGet:
		key = "name"
	case mcp.MethodResourcesRead:
		key = "uri"
	default:
		return "", false
	}
	raw, ok := rawjson.Member(params, key)
	var s string
	if !ok || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// headerValue writes s as a header value: as it is when it is plain visible ASCII, else in
// the base64 form the 2026-07-28 revision defines.
func headerValue(s string) string {
	plain := s == strings.TrimSpace(s) && !(strings.HasPrefix(s, "=?base64?") && strings.HasSuffix(s, "?="))
	for i := 0; plain && i < len(s); i++ {
		plain = s[i] >= 0x20 && s[i] < 0x7f
	}
	if plain {
		return s
	}
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?="
}

// post sends one request and hands on everything its answer carries.
func (t *httpTransport) post(ctx context.Context, id rpc.ID, method string, params json.RawMessage, body []byte, header http.Header) {
	sent := true
	defer func() {
		if sent {
			t.queued.Add(-int64(len(body)))
		}
	}()
	req, err := t.newRequest(ctx, http.MethodPost, body, method, params)
	if err != nil {
		t.fail(id, err)
		return
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := t.client.Do(req)
	t.queued.Add(-int64(len(body)))
	sent = false
	if err != nil {
		if ctx.Err() != nil {
			return // given up on, or the transport ended: the call's end is told elsewhere
		}
		// The server cannot be reached: the session is lost, and the supervisor connects
		// again.
		t.end(fmt.Errorf("POST %s: %w", method, err))
		return
	}
	defer resp.Body.Close()
	if method == mcp.MethodInitialize && resp.StatusCode == http.StatusOK {
		t.mu.Lock()
		t.sessionID = resp.Header.Get(headerSessionID)
		t.mu.Unlock()
	}
	t.answer(ctx, resp, id, method)
}

// answer reads the answer to the request id: JSON, an SSE stream, or an HTTP error.
func (t *httpTransport) answer(ctx context.Context, resp *http.Response, id rpc.ID, method string) {
	t.mu.Lock()
	inSession := t.era == EraSession && t.sessionID != ""
	t.mu.Unlock()
	if resp.StatusCode == http.StatusNotFound && inSession {
		t.end(fmt.Errorf("the server ended the session (HTTP 404 to %s)", method))
		return
	}
	ctype, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case ctype == "text/event-stream" && resp.StatusCode == http.StatusOK:
		err := t.readSSE(resp.Body, id)
		if err != nil && ctx.Err() == nil && !errors.Is(err, errEventTooLong) {
			t.end(fmt.Errorf("the answer to %s broke off: %w", method, err))
			return
		}
		if done := t.pending.Take(id); done != nil {
			done.Answer(nil, fmt.Errorf("%w: remote bundle %q ended the stream of %s without answering it", rpc.ErrBadAnswer, t.name, method))
		}
	case ctype == "application/json":
		body, err := io.ReadAll(io.LimitReader(resp.Body, int64(t.maxBody)+1))
		switch {
		case err != nil && ctx.Err() != nil:
			return
		case err != nil:
			t.end(fmt.Errorf("the answer to %s broke off: %w", method, err))
			return
		case len(body) > t.maxBody:
			t.fail(id, fmt.Errorf("%w: remote bundle %q answered %s with over %d bytes", rpc.ErrBadAnswer, t.name, method, t.maxBody))
			return
		}
		t.dispatchBody(body, id)
		if done := t.pending.Take(id); done != nil {
			done.Answer(nil, fmt.Errorf("%w: remote bundle %q answered %s with HTTP %s and no answer to it", rpc.ErrBadAnswer, t.name, method, resp.Status))
		}
	default:
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		t.fail(id, fmt.Errorf("remote bundle %q answered %s with HTTP %s: %s", t.name, method, resp.Status, clip(bytes.TrimSpace(b))))
	}
}

// dispatchBody hands on a JSON body: one message or a batch. An error without an id, as
// servers send with an HTTP error, answers the request the body came for.
func (t *httpTransport) dispatchBody(body []byte, forID rpc.ID) {
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] == '[' {
		parts, err := rpc.SplitBatch(body, t.limits)
		if err != nil {
			t.fail(forID, fmt.Errorf("%w: %s", rpc.ErrBadAnswer, err.Message))
			return
		}
		for _, p := range parts {
			t.dispatch(p, forID)
		}
		return
	}
	t.dispatch(body, forID)
}

// dispatch hands on one message: an answer to the call it answers, anything else to the
// session.
func (t *httpTransport) dispatch(line []byte, forID rpc.ID) {
	m, perr := rpc.Parse(line, t.limits)
	if perr != nil {
		if m.Method == "" && !m.ID.IsZero() {
			if done := t.pending.Take(m.ID); done != nil {
				done.Answer(nil, fmt.Errorf("%w: %s", rpc.ErrBadAnswer, perr.Message))
				return
			}
		}
		t.hooks.invalid(line, &m, perr)
		return
	}
	if m.IsResponse() {
		if (m.ID.IsNull() || m.ID.IsZero()) && m.Error != nil && !forID.IsZero() {
			m.ID = forID
		}
		if !t.pending.Deliver(&m) {
			t.hooks.unmatched(&m)
		}
		return
	}
	t.hooks.handle(&m)
}

func (t *httpTransport) fail(id rpc.ID, err error) {
	if done := t.pending.Take(id); done != nil {
		done.Answer(nil, err)
	}
}

// stream keeps the GET stream of a session open, handing on what the server sends on it,
// until the transport ends. A server that offers none answers 405.
func (t *httpTransport) stream() {
	for {
		req, err := t.newRequest(t.ctx, http.MethodGet, nil, "", nil)
		if err != nil {
			return
		}
		resp, err := t.client.Do(req)
		if err != nil {
			if t.ctx.Err() == nil {
				t.end(fmt.Errorf("GET stream: %w", err))
			}
			return
		}
		ctype, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
		switch {
		case resp.StatusCode == http.StatusNotFound:
			resp.Body.Close()
			t.end(errors.New("the server ended the session (HTTP 404 to the GET stream)"))
			return
		case resp.StatusCode != http.StatusOK || ctype != "text/event-stream":
			resp.Body.Close()
			t.log.Debug("remote bundle offers no GET stream", "status", resp.Status)
			return
		}
		err = t.readSSE(resp.Body, rpc.ID{})
		resp.Body.Close()
		if t.ctx.Err() != nil {
			return
		}
		if err != nil && !errors.Is(err, errEventTooLong) {
			t.end(fmt.Errorf("GET stream broke off: %w", err))
			return
		}
		select {
		case <-t.ctx.Done():
			return
		case <-time.After(streamRetry):
		}
	}
}

// end ends the transport: every call waiting fails with why, and every request is
// cancelled.
func (t *httpTransport) end(why error) {
	t.endOnce.Do(func() {
		t.endErr = why
		close(t.done) // first, so that the calls ended below are told why
		t.cancel(why)
		t.pending.Close(fmt.Errorf("%w: %v", rpc.ErrClosed, why))
	})
}

func (t *httpTransport) Done() <-chan struct{} { return t.done }
func (t *httpTransport) Queued() int           { return int(t.queued.Load()) }
func (t *httpTransport) Waiting() int          { return t.pending.Len() }
func (t *httpTransport) pid() int              { return 0 }

func (t *httpTransport) gone() error {
	select {
	case <-t.done:
		return fmt.Errorf("%w: remote bundle %q at %s: %w", ErrGone, t.name, t.url, t.endErr)
	default:
		return fmt.Errorf("%w: remote bundle %q at %s", ErrGone, t.name, t.url)
	}
}

func (t *httpTransport) status() string {
	select {
	case <-t.done:
		return fmt.Sprintf("disconnected: %v", t.endErr)
	default:
		return "running"
	}
}

// stop ends the transport, deleting the session on the server when there is one.
func (t *httpTransport) stop(ctx context.Context) error {
	t.mu.Lock()
	session := t.era == EraSession && t.sessionID != ""
	t.mu.Unlock()
	select {
	case <-t.done:
		session = false
	default:
	}
	if session {
		dctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		if req, err := t.newRequest(dctx, http.MethodDelete, nil, "", nil); err == nil {
			if resp, err := t.client.Do(req); err == nil {
				resp.Body.Close()
			}
		}
		cancel()
	}
	t.end(errors.New("closed by the node"))
	return nil
}
