package front

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/node"
	"github.com/toolnode/toolnode/runtime/internal/rpc"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// Session is one client of a 2025 revision: opened by initialize, it holds the negotiated
// version, the client's capabilities and log level, and its requests in flight. It is
// registered with the node for broadcasts (list changes, resource updates) until Close.
// A transport makes one per connection (stdio) or per Mcp-Session-Id (HTTP).
type Session struct {
	client
	key       string        // the node.Caller key, made once: it is asked on every call
	opened    time.Time     // for the session's duration metric
	ended     chan struct{} // closed by Close
	closeOnce sync.Once

	// state is what every call reads of the session, replaced whole (under mu) when the
	// client changes it: read without a lock, as calls are served on both cores.
	state atomic.Pointer[sessionState]

	mu       sync.Mutex // guards inflight, and orders the writers of state
	inflight map[rpc.ID]*Call
}

// sessionState is what the client negotiated and set, as one value that is never changed
// once stored: a call reads it all with one atomic load.
type sessionState struct {
	who         node.Caller // the client as the node reads it (see Session.caller)
	strict      bool        // tool names rendered for a strict client
	whole       bool        // tools/list answered in one page (see clients.go)
	selects     bool        // the client picks tools itself: the auto view lists it every one
	version     string
	clientCaps  json.RawMessage // an object: the client's capabilities by name
	initialized bool
	minLevel    int
}

// SessionInfo says what a transport knows of a session's client.
type SessionInfo struct {
	// Identity is who the client is.
	Identity Identity
	// ID is the session's id for telemetry: the HTTP session id, or "stdio".
	ID string
	// Transport is "tcp" (Streamable HTTP) or "pipe" (stdio), for telemetry.
	Transport string
}

// NewSession starts a session whose messages go out through out.
func (s *Server) NewSession(out node.Client, info SessionInfo) *Session {
	sess := &Session{client: client{srv: s, out: out, id: info.Identity, sessionID: info.ID, transport: info.Transport},
		inflight: map[rpc.ID]*Call{}, opened: time.Now(), ended: make(chan struct{})}
	// Anonymous clients are told apart by their sessions; others are who they are.
	if sess.key = info.Identity.key(); sess.key == "" {
		sess.key = fmt.Sprintf("session:%p", sess)
	}
	sess.state.Store(sess.withCaller(sessionState{}))
	s.node.Attach(sess)
	s.recorder().SessionOpened()
	return sess
}

// Close detaches the session and cancels its calls in flight.
func (sess *Session) Close() {
	sess.closeOnce.Do(func() { close(sess.ended) })
	sess.srv.node.Detach(sess)
	if sess.id.key() == "" { // its tasks were the session's: nobody can reach them now
		sess.srv.tasks.dropOwner(sess.key)
	}
	sess.srv.recorder().SessionClosed(sess.Version(), time.Since(sess.opened))
	sess.mu.Lock()
	for _, c := range sess.inflight {
		c.cancelByClient(errors.New("client session closed"))
	}
	sess.mu.Unlock()
}

// Identity is who the session's client is.
func (sess *Session) Identity() Identity { return sess.id }

// caller is the session's client as the node reads it: its identity, or for an anonymous
// one the session itself; the capabilities it declared in initialize; the level it set,
// every level until it sets one.
func (sess *Session) caller() *node.Caller { return &sess.state.Load().who }

// withCaller is st with its who made from the rest of it, to be stored.
func (sess *Session) withCaller(st sessionState) *sessionState {
	level, wants := mcp.LogLevelName(st.minLevel)
	st.who = node.Caller{Subject: sess.id.Subject, Client: sess.id.Client, Key: sess.key, Bound: sess.id.Bound(), Ended: sess.ended,
		Session: sess, Caps: st.clientCaps, LogLevel: level, NoLogs: !wants}
	return &st
}

// update replaces the session's state with a copy changed by change.
func (sess *Session) update(change func(*sessionState)) {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	st := *sess.state.Load()
	change(&st)
	sess.state.Store(sess.withCaller(st))
}

// notify sends a message about the call c on its way back, as Notify does.
func (sess *Session) notify(c *Call, method string, params any) {
	if sess.wants(method, params) {
		_ = c.outbound().Notify(c.ctx, method, params)
	}
}

// Notify sends a notification to the client, dropping log messages below the level the
// client set. It implements node.Session.
func (sess *Session) Notify(ctx context.Context, method string, params any) error {
	if !sess.wants(method, params) {
		return nil
	}
	return sess.out.Notify(ctx, method, params)
}

// wants reports whether the client is sent a message: not a list change before it is
// initialized, nor a log message below the level it set.
func (sess *Session) wants(method string, params any) bool {
	st := sess.state.Load()
	initialized, minLevel := st.initialized, st.minLevel
	if strings.HasSuffix(method, "/list_changed") && !initialized {
		// The client lists tools after initialized anyway; telling it earlier breaks the
		// lifecycle.
		return false
	}
	if method == mcp.NotifyMessage {
		if m, ok := params.(mcp.LoggingMessageParams); ok {
			if rank, _ := mcp.LogLevelRank(m.Level); rank < minLevel {
				return false
			}
		}
	}
	return true
}

// ask sends a bundle's request about the call c to the client, on c's way back, when the
// client declared the capability it needs.
func (sess *Session) ask(ctx context.Context, c *Call, method string, params json.RawMessage) (json.RawMessage, error) {
	if need := capabilityFor(method); need != "" && !sess.capable(need) {
		return nil, rpc.Errorf(mcp.CodeMethodNotFound, "the client did not declare the %q capability that %s needs", need, method)
	}
	return c.outbound().Request(ctx, method, params)
}

func (sess *Session) protocol() string { return sess.Version() }

// answer passes a session's answers as they are.
func (sess *Session) answer(_ string, o node.Outcome) node.Outcome { return o }

// asksInline is true: a session's client takes requests.
func (sess *Session) asksInline() bool { return true }

func (sess *Session) strictNames() bool { return sess.state.Load().strict }

func (sess *Session) listsWhole() bool { return sess.state.Load().whole }

func (sess *Session) selectsTools() bool { return sess.state.Load().selects }

func (sess *Session) capable(need string) bool {
	return capabilityIn(sess.state.Load().clientCaps, need)
}

// Version is the protocol revision negotiated with the client, or "" before initialize.
func (sess *Session) Version() string { return sess.state.Load().version }

// Begin registers the request id for cancellation. It must be called in the order requests
// arrive, before a later notifications/cancelled can be handled; the call may then be
// served on its own goroutine. A request is refused when its id is already in flight or the
// session has MaxInflight requests in flight. ctx may end only with the session: Close
// cancels the calls, and tells their relays (see Call.Watch).
func (sess *Session) Begin(ctx context.Context, id rpc.ID) (*Call, error) {
	// Made before the lock: the call's answer ends it on another core, and a shorter hold
	// makes that core wait less for it.
	c := &Call{peer: sess, owner: sess, id: id}
	c.lazy.parent = ctx
	c.ctx = &c.lazy // made only when something waits on it (see callContext)
	limit := sess.srv.opts.MaxInflight
	sess.mu.Lock()
	_, dup := sess.inflight[id]
	full := len(sess.inflight) >= limit
	if !dup && !full {
		sess.inflight[id] = c
	}
	sess.mu.Unlock()
	switch {
	case dup:
		return nil, rpc.Errorf(mcp.CodeInvalidRequest, "invalid request: id %s is already in use by a request in flight", id)
	case full:
		return nil, rpc.Errorf(mcp.CodeInvalidRequest, "too many requests in flight: this session has %d, the limit", limit)
	}
	return c, nil
}

// Inflight is how many requests of the session are being served.
func (sess *Session) Inflight() int {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return len(sess.inflight)
}

// Drain waits until the session has no request in flight but its subscriptions, or ctx
// ends.
func (sess *Session) Drain(ctx context.Context) {
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for {
		sess.mu.Lock()
		n := 0
		for _, c := range sess.inflight {
			if !c.longLived {
				n++
			}
		}
		sess.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// HandleNotification acts on a notification from the client.
func (sess *Session) HandleNotification(method string, params json.RawMessage) {
	switch method {
	case mcp.NotifyInitialized:
		sess.update(func(st *sessionState) { st.initialized = true })
	case mcp.NotifyCancelled:
		var p mcp.CancelledParams
		var id rpc.ID
		if json.Unmarshal(params, &p) != nil || json.Unmarshal(p.RequestID, &id) != nil {
			sess.srv.opts.Logger.Debug("bad notifications/cancelled", "params", string(params))
			return
		}
		sess.mu.Lock()
		c := sess.inflight[id]
		sess.mu.Unlock()
		if c != nil {
			reason := p.Reason
			if reason == "" {
				reason = "cancelled by the client"
			}
			c.cancelByClient(errors.New(reason))
		}
	}
}

// initialize negotiates the session's revision and learns the client's capabilities.
func (sess *Session) initialize(params json.RawMessage) (any, error) {
	var p mcp.InitializeParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, invalidParams("initialize params: %v", err)
	}
	v := mcp.NegotiateVersion(p.ProtocolVersion)
	caps := p.Capabilities
	if !bytes.HasPrefix(bytes.TrimSpace(caps), []byte("{")) {
		caps = nil
	}
	strict, whole := namesFor(sess.srv.opts.Names, p.ClientInfo.Name)
	selects := selectingClient(p.ClientInfo.Name)
	sess.update(func(st *sessionState) {
		st.version, st.clientCaps, st.strict, st.whole, st.selects = v, caps, strict, whole, selects
	})
	sess.srv.opts.Logger.Debug("client initialized", "client", p.ClientInfo.Name, "client_version", p.ClientInfo.Version,
		"requested", p.ProtocolVersion, "protocol", v)
	return mcp.InitializeResult{
		ProtocolVersion: v,
		Capabilities:    sess.srv.capabilities(),
		ServerInfo:      mcp.Implementation{Name: "toolnode", Version: sess.srv.opts.Version},
	}, nil
}

// setLevel serves logging/setLevel: the session's own filter, and the bundles asked for
// what the most talkative session wants.
func (sess *Session) setLevel(ctx context.Context, params json.RawMessage) (any, error) {
	var p mcp.SetLevelParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, invalidParams("logging/setLevel params: %v", err)
	}
	rank, ok := mcp.LogLevelRank(p.Level)
	if !ok {
		return nil, invalidParams("unknown log level %q; use one of %v", p.Level, mcp.LogLevels())
	}
	sess.update(func(st *sessionState) { st.minLevel = rank })
	// Bundles that are slow to take the level must not hold up the client.
	go func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		sess.srv.node.SetLogLevel(ctx, p.Level)
	}()
	return struct{}{}, nil
}

// capabilities advertises tools and logging, which the node always serves, and the rest
// only when some bundle offers it.
func (s *Server) capabilities() mcp.ServerCapabilities {
	o := s.node.Offers()
	caps := mcp.ServerCapabilities{
		Tools:   &mcp.ListChangedCapability{ListChanged: true},
		Logging: &struct{}{},
	}
	if o.Prompts {
		caps.Prompts = &mcp.ListChangedCapability{ListChanged: true}
	}
	if o.Resources {
		caps.Resources = &mcp.ResourcesCapability{ListChanged: true, Subscribe: o.Subscribe}
	}
	if o.Completions {
		caps.Completions = &struct{}{}
	}
	caps.Extensions = tasksExtension // the node holds tasks for every bundle's tools
	return s.withSkills(caps)
}

func invalidParams(format string, args ...any) *rpc.Error {
	return rpc.Errorf(mcp.CodeInvalidParams, format, args...)
}
