// Package front is the node's MCP server side: the methods a client calls, shared by every
// transport, and the stdio transport itself.
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

	"github.com/hashicorp/go-hclog"

	"github.com/toolnode/toolnode/runtime/internal/access"
	"github.com/toolnode/toolnode/runtime/internal/audit"
	"github.com/toolnode/toolnode/runtime/internal/catalog"
	"github.com/toolnode/toolnode/runtime/internal/node"
	"github.com/toolnode/toolnode/runtime/internal/rpc"
	"github.com/toolnode/toolnode/runtime/internal/telemetry"
	"github.com/toolnode/toolnode/sdk-go/mcp"
	"github.com/toolnode/toolnode/sdk-go/rawjson"
)

// Options configures a Server.
type Options struct {
	// Version is the node's version in serverInfo. Default "dev".
	Version string
	// PageSize is the number of tools per tools/list page; 0 or less lists all at once.
	PageSize int
	// Logger logs sessions. Default: discard.
	Logger hclog.Logger
	// Names says how tool names are shown: NamesCanonical, NamesStrict, or NamesAuto
	// (strict for clients known to need it). Default NamesAuto.
	Names string
	// MaxMessage is the largest message a client may send, in bytes. Default 16 MiB.
	MaxMessage int
	// MaxQueue bounds what the node holds for a client that does not read; past it the
	// client is disconnected. Default rpc.DefaultMaxQueue.
	MaxQueue int
	// MaxInflight bounds the requests of one session being served at once; past it
	// requests are refused. Default DefaultMaxInflight.
	MaxInflight int
	// Limits are the checks every client message passes.
	Limits rpc.Limits
	// View is how tools/list shows the catalog to clients the access file leaves it to:
	// access.ViewFull (every allowed tool; the default) or access.ViewSearch (the node's
	// own tools and those matching Pins; the rest are found with toolnode.search).
	View access.View
	// Pins are the tools the search view lists besides the node's own.
	Pins []access.Pattern
	// Access, when set, is the access file: the clients and what each may see and call.
	Access *access.Holder
	// Audit, when set, records every tools/call.
	Audit *audit.Log
	// Client is the access file's client the stdio front serves.
	Client string
	// Telemetry records a span and a duration per request, and sessions. Default: none.
	Telemetry telemetry.Recorder
}

// DefaultMaxInflight is how many requests one session may have in flight by default: far
// more than an agent runs at once, far fewer than would let one client hold the node.
const DefaultMaxInflight = 256

// DefaultMaxMessage is the largest client message accepted by default.
const DefaultMaxMessage = 16 << 20

// How tool names are shown to clients.
const (
	// NamesCanonical shows names as the catalog has them: seat.verb, bundle.tool.
	NamesCanonical = "canonical"
	// NamesStrict shows them as ^[a-zA-Z0-9_-]{1,64}$ (seat_verb), mapped back on calls.
	NamesStrict = "underscore"
	// NamesAuto is strict for clients that refuse dots (GitHub Copilot, Windsurf).
	NamesAuto = "auto"
)

// strictClient reports whether a client, by the name it gives in initialize, is one known to
// refuse tool names outside ^[a-zA-Z0-9_-]{1,64}$.
func strictClient(name string) bool {
	name = strings.ToLower(name)
	return strings.Contains(name, "copilot") || strings.Contains(name, "windsurf")
}

// Server answers MCP clients from a node. One Server serves any number of sessions.
type Server struct {
	node    *node.Node
	opts    Options
	waiting *waitingCalls // stateless calls waiting for their client's input
	metas   metaCache     // the _meta of stateless requests, read once for many
}

// NewServer returns a server fronting n.
func NewServer(n *node.Node, opts Options) *Server {
	if opts.Version == "" {
		opts.Version = "dev"
	}
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	if opts.MaxMessage <= 0 {
		opts.MaxMessage = DefaultMaxMessage
	}
	if opts.MaxInflight <= 0 {
		opts.MaxInflight = DefaultMaxInflight
	}
	return &Server{node: n, opts: opts, waiting: newWaitingCalls()}
}

// Outbound sends to one client. Implementations are safe for concurrent use. ctx is that of
// the client's call a message relates to, when there is one.
type Outbound interface {
	Notify(ctx context.Context, method string, params any) error
	Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
}

// Session is one client's state: the negotiated version, its log level and its calls in
// flight. It is registered with the node for broadcasts until Close.
type Session struct {
	srv *Server
	out Outbound

	stateless  bool   // serves one request of a 2026-07-28 client, and is never attached
	key        string // ClientKey of a session, made once: it is asked on every call
	clientName string // the access file's client; "" without one
	sessionID  string // for telemetry: the HTTP session id, or "stdio"
	transport  string // for telemetry: "tcp" or "pipe"
	opened     time.Time
	ended      chan struct{} // closed by Close; nil for a stateless request
	closeOnce  sync.Once

	mu          sync.Mutex
	strict      bool // tool names rendered for a strict client
	whole       bool // tools/list answered in one page (see thin.go)
	version     string
	clientCaps  json.RawMessage // an object: the client's capabilities by name; looked up rarely
	initialized bool
	minLevel    int
	inflight    map[rpc.ID]*Call
}

// NewSession starts a session that sends through out.
func (s *Server) NewSession(out Outbound) *Session {
	sess := &Session{srv: s, out: out, inflight: map[rpc.ID]*Call{}, opened: time.Now(), ended: make(chan struct{})}
	sess.key = fmt.Sprintf("session:%p", sess)
	s.node.Attach(sess)
	s.recorder().SessionOpened()
	return sess
}

// Close detaches the session and cancels its calls in flight.
func (sess *Session) Close() {
	sess.closeOnce.Do(func() { close(sess.ended) })
	sess.srv.node.Detach(sess)
	sess.srv.recorder().SessionClosed(sess.Version(), time.Since(sess.opened))
	sess.mu.Lock()
	for _, c := range sess.inflight {
		c.cancelByClient(errors.New("client session closed"))
	}
	sess.mu.Unlock()
}

// ClientKey implements node.Keyed: a session is its own client; stateless requests of one
// access-file client share one, and anonymous ones have none ("").
func (sess *Session) ClientKey() string {
	if sess.stateless {
		if sess.clientName == "" {
			return ""
		}
		return "client:" + sess.clientName
	}
	return sess.key
}

// ClientCapabilities implements node.Capable: what the client declared in initialize, or
// in a stateless request's _meta.
func (sess *Session) ClientCapabilities() json.RawMessage {
	if sess.stateless {
		return sess.clientCaps // never changed once made
	}
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return sess.clientCaps
}

// ClientLogLevel implements node.Leveled: the level a session's client set (every level
// until it sets one), or a stateless request's _meta names (none when it names none).
func (sess *Session) ClientLogLevel() (string, bool) {
	if sess.stateless {
		return mcp.LogLevelName(sess.minLevel) // never changed once made
	}
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return mcp.LogLevelName(sess.minLevel)
}

// Ended implements node.Keyed.
func (sess *Session) Ended() <-chan struct{} { return sess.ended }

// Notify sends a notification to the client, dropping log messages below the level the
// client set. It implements node.Session.
func (sess *Session) Notify(ctx context.Context, method string, params any) error {
	sess.mu.Lock()
	initialized := sess.initialized
	sess.mu.Unlock()
	if strings.HasSuffix(method, "/list_changed") && !initialized {
		// The client lists tools after initialized anyway; telling it earlier breaks the
		// lifecycle.
		return nil
	}
	if method == mcp.NotifyMessage {
		if m, ok := params.(mcp.LoggingMessageParams); ok {
			rank, _ := mcp.LogLevelRank(m.Level)
			sess.mu.Lock()
			drop := rank < sess.minLevel
			sess.mu.Unlock()
			if drop {
				return nil
			}
		}
	}
	return sess.out.Notify(ctx, method, params)
}

// capable reports whether the client declared the capability need.
func (sess *Session) capable(need string) bool {
	sess.mu.Lock()
	caps := sess.clientCaps
	sess.mu.Unlock()
	_, has := rawjson.Member(caps, need)
	return has
}

// Request sends a bundle's request to the client, when the client declared the capability
// it needs. It implements node.Session.
func (sess *Session) Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	if sess.stateless {
		return nil, errNoRequests()
	}
	need := capabilityFor(method)
	if need != "" && !sess.capable(need) {
		return nil, rpc.Errorf(mcp.CodeMethodNotFound, "the client did not declare the %q capability that %s needs", need, method)
	}
	return sess.out.Request(ctx, method, params)
}

// Call is one client request being served.
type Call struct {
	sess      *Session // whose version, capabilities and names serve the request
	owner     *Session // whose requests in flight it counts among
	id        rpc.ID
	ctx       context.Context
	cancel    context.CancelCauseFunc
	cancelled atomic.Bool // by the client, as opposed to the end of Handle
	longLived bool        // a subscription, which ends only when the client cancels it
	fields    fields      // the members of a stateless request's params, as the front read them
}

// Begin registers the request id for cancellation. It must be called in the order requests
// arrive, before a later notifications/cancelled can be handled; Handle may then run on
// its own goroutine. A request is refused when its id is already in flight or the session
// has MaxInflight requests in flight.
func (sess *Session) Begin(ctx context.Context, id rpc.ID) (*Call, error) {
	if sess.stateless {
		// Its one request: nothing can name it to cancel it but the end of ctx (the HTTP
		// request's), which needs no context of its own.
		return &Call{sess: sess, owner: sess, id: id, ctx: ctx, cancel: endsWithRequest}, nil
	}
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if _, dup := sess.inflight[id]; dup {
		return nil, rpc.Errorf(mcp.CodeInvalidRequest, "invalid request: id %s is already in use by a request in flight", id)
	}
	if limit := sess.srv.opts.MaxInflight; len(sess.inflight) >= limit {
		return nil, rpc.Errorf(mcp.CodeInvalidRequest, "too many requests in flight: this session has %d, the limit", limit)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	c := &Call{sess: sess, owner: sess, id: id, ctx: ctx, cancel: cancel}
	sess.inflight[id] = c
	return c, nil
}

// endsWithRequest is the cancel of a stateless call: its context is its request's, which
// ends with it.
func endsWithRequest(error) {}

// As serves the call as a stateless request described by view, while the session it began
// in keeps it among its requests in flight (so that a stdio cancellation finds it).
func (c *Call) As(view *Session) *Call {
	c.sess = view
	return c
}

func (sess *Session) inflightCount() int {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return len(sess.inflight)
}

// maxQueue is MaxQueue with its default.
func (o Options) maxQueue() int {
	if o.MaxQueue <= 0 {
		return rpc.DefaultMaxQueue
	}
	return o.MaxQueue
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

// Cancelled reports whether the client cancelled the call, in which case no answer is sent.
func (c *Call) Cancelled() bool { return c.cancelled.Load() }

func (c *Call) cancelByClient(reason error) {
	c.cancelled.Store(true)
	c.cancel(reason)
}

// Handle serves the request and ends the call, waiting for the outcome.
func (c *Call) Handle(method string, params json.RawMessage) (json.RawMessage, *rpc.Error) {
	type outcome struct {
		res json.RawMessage
		err *rpc.Error
	}
	ch := make(chan outcome, 1)
	c.HandleAsync(method, params, func(res json.RawMessage, err *rpc.Error) { ch <- outcome{res, err} })
	o := <-ch
	return o.res, o.err
}

// handleSync serves a request that is not a tools/call, on the caller's goroutine.
func (c *Call) handleSync(method string, params json.RawMessage) (json.RawMessage, *rpc.Error) {
	res, err := c.sess.dispatch(c.ctx, method, params)
	return c.end(res, err)
}

// HandleAsync serves the request and calls reply with the outcome, once. A tools/call is
// answered from the goroutine that reads the bundle's answer, without a hand-off to this
// one: for a relay, hand-offs between goroutines are most of a call's cost. For a tools/call
// HandleAsync never blocks; other methods may, and callers give them a goroutine. reply
// must not block for long.
func (c *Call) HandleAsync(method string, params json.RawMessage, reply func(json.RawMessage, *rpc.Error)) {
	n := c.sess.srv.node
	select {
	case <-n.Ready():
	default:
		go func() { // waits for the bundles' first start
			if err := c.sess.waitReady(c.ctx); err != nil {
				reply(c.end(nil, err))
				return
			}
			c.HandleAsync(method, params, reply)
		}()
		return
	}
	reply = c.traced(method, params, reply)
	if c.sess.stateless {
		c.handleStateless(method, params, reply)
		return
	}
	if method != mcp.MethodToolsCall {
		reply(c.handleSync(method, params))
		return
	}
	c.sess.callTool(c.ctx, c.sess, c.sess.canonicalCall(params), func(res json.RawMessage, err error) {
		if err == nil && isInputRequired(res) {
			go func() {
				reply(c.end(c.sess.fulfil(c.ctx, method, params, res, func(p json.RawMessage) (json.RawMessage, error) {
					return rpc.Await(func(done rpc.Done) { c.sess.callTool(c.ctx, c.sess, c.sess.canonicalCall(p), done) })
				})))
			}()
			return
		}
		reply(c.end(res, err))
	})
}

// handleStateless serves a request of a 2026-07-28 client. Calls that may need the
// client's input run as an mrtrCall, which answers input_required for what a bundle asks.
func (c *Call) handleStateless(method string, params json.RawMessage, reply func(json.RawMessage, *rpc.Error)) {
	sess, n := c.sess, c.sess.srv.node
	if _, ok := mrtrMethod(method); !ok {
		go func() {
			res, err := sess.dispatchStateless(c.ctx, method, params)
			raw, rerr := rpc.Marshal(res)
			if err == nil && rerr != nil {
				err = rerr
			}
			sess.finishStateless(method, raw, err, func(res json.RawMessage, err *rpc.Error) { reply(c.end(res, errOrNil(err))) })
		}()
		return
	}
	if c.fields.state != nil && c.resume(method, reply) {
		return
	}
	if method == mcp.MethodToolsCall && !sess.asksClients(c.fields.name) {
		sess.callDirect(c, params, reply)
		return
	}
	name, _ := rawjson.String(c.fields.target(method))
	// The call outlives this request (it may wait for the client's input), but keeps its
	// values: the trace it belongs to.
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(c.ctx))
	m := &mrtrCall{w: sess.srv.waiting, method: method, name: name, cancel: cancel, key: sess.ClientKey()}
	m.mu.Lock()
	m.attach(sess, c.ctx, func(res json.RawMessage, err *rpc.Error) { reply(c.end(res, errOrNil(err))) })
	m.mu.Unlock()
	switch method {
	case mcp.MethodToolsCall:
		sess.callTool(ctx, m, sess.canonicalCall(params), m.done)
	case mcp.MethodPromptsGet:
		go func() { m.done(n.GetPrompt(ctx, m, params)) }()
	default:
		go func() { m.done(n.ReadResource(ctx, m, params)) }()
	}
}

// resume serves a retry that carries the requestState of a call the node keeps waiting,
// and reports whether the request was one; a state of the bundle's own is not.
func (c *Call) resume(method string, reply func(json.RawMessage, *rpc.Error)) bool {
	state, responses := c.fields.retry()
	if !strings.HasPrefix(state, statePrefix) {
		return false
	}
	name, _ := rawjson.String(c.fields.target(method))
	m, err := c.sess.srv.waiting.open(state, method, name)
	if err != nil {
		reply(c.end(nil, err))
		return true
	}
	m.resume(c.sess, c.ctx, responses, func(res json.RawMessage, err *rpc.Error) { reply(c.end(res, errOrNil(err))) })
	return true
}

// callDirect serves a stateless tools/call whose bundle asks for input with an
// input_required answer of its own, which goes to the client as it is: nothing waits for
// the client's input here.
func (sess *Session) callDirect(c *Call, params json.RawMessage, reply func(json.RawMessage, *rpc.Error)) {
	sess.callTool(c.ctx, sess, sess.canonicalCall(params), func(res json.RawMessage, err error) {
		sess.finishStateless(mcp.MethodToolsCall, res, err, func(res json.RawMessage, err *rpc.Error) { reply(c.end(res, errOrNil(err))) })
	})
}

// asksClients is Node.AsksClients for the raw name of a tool as a call gives it. A name
// without escapes, nearly every one, is looked up without a copy of its own: this runs for
// every call of a stateless client.
func (sess *Session) asksClients(raw json.RawMessage) bool {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' || bytes.IndexByte(raw, '\\') >= 0 {
		name, _ := rawjson.String(raw)
		return sess.srv.node.AsksClients(sess.canonicalName(name))
	}
	return sess.srv.node.AsksClients(sess.canonicalName(string(raw[1 : len(raw)-1])))
}

// errOrNil keeps a nil *rpc.Error from becoming a non-nil error.
func errOrNil(err *rpc.Error) error {
	if err == nil {
		return nil
	}
	return err
}

// dispatchStateless serves the methods of a stateless request that cannot ask for input.
func (sess *Session) dispatchStateless(ctx context.Context, method string, params json.RawMessage) (any, error) {
	switch {
	case method == mcp.MethodDiscover:
		return sess.discover()
	case removedIn2026(method):
		return nil, rpc.Errorf(mcp.CodeMethodNotFound, "method %q not found: protocol version %s has no %s", method, sess.version, method)
	}
	return sess.dispatch(ctx, method, params)
}

// finishStateless answers a stateless request: errors in the revision's terms, results
// with what the revision requires, and input asked for by a 2026 bundle passed on only
// when the client declared the capabilities it needs.
func (sess *Session) finishStateless(method string, res json.RawMessage, err error, reply func(json.RawMessage, *rpc.Error)) {
	if err != nil {
		reply(nil, statelessError(rpc.AsError(err)))
		return
	}
	// One look at resultType serves both the check and decorate: a result may be large.
	rt, typed := rawjson.Member(res, "resultType")
	if typed && string(rt) == `"`+mcp.ResultTypeInputRequired+`"` {
		var ir mcp.InputRequiredResult
		_ = json.Unmarshal(res, &ir)
		for _, r := range ir.InputRequests {
			need := capabilityFor(r.Method)
			if need != "" && !sess.capable(need) {
				reply(nil, missingCapability(need, r.Method))
				return
			}
		}
	}
	reply(decorate(method, res, typed), nil)
}

// end removes the call from the session and encodes its outcome.
func (c *Call) end(res any, err error) (json.RawMessage, *rpc.Error) {
	c.owner.mu.Lock()
	delete(c.owner.inflight, c.id)
	c.owner.mu.Unlock()
	c.cancel(nil)
	if err != nil {
		return nil, rpc.AsError(err)
	}
	raw, err := rpc.Marshal(res)
	if err != nil {
		return nil, rpc.AsError(fmt.Errorf("encode result: %w", err))
	}
	return raw, nil
}

func (sess *Session) dispatch(ctx context.Context, method string, params json.RawMessage) (any, error) {
	if method == mcp.MethodPing {
		return struct{}{}, nil
	}
	// Everything else needs the bundles: hold it until their first start is over, so that
	// a client never sees capabilities or lists missing bundles still starting.
	if err := sess.waitReady(ctx); err != nil {
		return nil, err
	}
	n := sess.srv.node
	switch method {
	case mcp.MethodInitialize:
		return sess.initialize(params)
	case mcp.MethodToolsList:
		return listPage(params, func(cursor string) ([]json.RawMessage, string, error) {
			cat := n.Catalog()
			size := sess.srv.opts.PageSize
			if sess.listsWhole() {
				size = 0
			}
			tools, next, err := cat.PageWhere(cursor, size, sess.listFilter())
			if err == nil && sess.isStrict() {
				tools = renderStrict(cat.Strict(), tools)
			}
			return tools, next, err
		}, "tools")
	case mcp.MethodToolsCall:
		return rpc.Await(func(done rpc.Done) { sess.callTool(ctx, sess, sess.canonicalCall(params), done) })
	case mcp.MethodPromptsList:
		return listPage(params, func(cursor string) ([]json.RawMessage, string, error) {
			var keep func(catalog.Entry) bool
			if c := sess.client(); c != nil {
				keep = func(e catalog.Entry) bool { return c.Allowed(e.Name) }
			}
			return n.Prompts().PageWhere(cursor, sess.srv.opts.PageSize, keep)
		}, "prompts")
	case mcp.MethodPromptsGet:
		if c := sess.client(); c != nil {
			var p struct{ Name string }
			if json.Unmarshal(params, &p) == nil && !c.Allowed(p.Name) {
				return nil, invalidParams("unknown prompt %q", p.Name)
			}
		}
		return sess.withInput(ctx, method, params, func(p json.RawMessage) (json.RawMessage, error) { return n.GetPrompt(ctx, sess, p) })
	case mcp.MethodResourcesList:
		return listPage(params, func(cursor string) ([]json.RawMessage, string, error) {
			return n.Resources().Resources(cursor, sess.srv.opts.PageSize)
		}, "resources")
	case mcp.MethodResourceTemplates:
		return listPage(params, func(cursor string) ([]json.RawMessage, string, error) {
			return n.Resources().Templates(cursor, sess.srv.opts.PageSize)
		}, "resourceTemplates")
	case mcp.MethodResourcesRead:
		return sess.withInput(ctx, method, params, func(p json.RawMessage) (json.RawMessage, error) { return n.ReadResource(ctx, sess, p) })
	case mcp.MethodResourcesSub:
		return n.Subscribe(ctx, sess, params)
	case mcp.MethodResourcesUnsub:
		return n.Unsubscribe(ctx, sess, params)
	case mcp.MethodComplete:
		return n.Complete(ctx, sess, params)
	case mcp.MethodLoggingSetLevel:
		return sess.setLevel(ctx, params)
	}
	return nil, rpc.Errorf(mcp.CodeMethodNotFound, "method %q not found", method)
}

// withInput makes a call for a session client, serving the input a 2026 bundle asks for.
func (sess *Session) withInput(ctx context.Context, method string, params json.RawMessage, call func(json.RawMessage) (json.RawMessage, error)) (json.RawMessage, error) {
	res, err := call(params)
	if err != nil || sess.stateless || !isInputRequired(res) {
		return res, err
	}
	return sess.fulfil(ctx, method, params, res, call)
}

func (sess *Session) isStrict() bool {
	if sess.stateless {
		return sess.strict // never changed once made
	}
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return sess.strict
}

func (sess *Session) listsWhole() bool {
	if sess.stateless {
		return sess.whole
	}
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return sess.whole
}

// renderStrict rewrites the names of tools for a strict client.
func renderStrict(m *catalog.NameMap, tools []json.RawMessage) []json.RawMessage {
	out := make([]json.RawMessage, len(tools))
	for i, t := range tools {
		out[i] = t
		var name string
		if raw, ok := rawjson.Member(t, "name"); ok && json.Unmarshal(raw, &name) == nil {
			quoted, _ := json.Marshal(m.Render(name))
			if renamed, ok := rawjson.SetMember(t, "name", quoted); ok {
				out[i] = renamed
			}
		}
	}
	return out
}

// canonicalName maps a tool name in its strict form back to the catalog's, for every
// client: a client shown canonical names may still call by the strict form (it mapped the
// names itself, or was shown them before), and one shown strict names by the canonical
// form. No strict form is another tool's canonical name (the rule hashes both then).
func (sess *Session) canonicalName(name string) string {
	if strings.Contains(name, ".") { // no strict form has a dot: spare the map
		return name
	}
	if canonical, ok := sess.srv.node.Catalog().Strict().Canonical(name); ok {
		return canonical
	}
	return name
}

// canonicalCall maps the tool name of a tools/call given in its strict form back to the
// catalog's; other calls are returned as they are.
func (sess *Session) canonicalCall(params json.RawMessage) json.RawMessage {
	var name string
	raw, ok := rawjson.Member(params, "name")
	if !ok || json.Unmarshal(raw, &name) != nil {
		return params
	}
	canonical := sess.canonicalName(name)
	if canonical == name {
		return params
	}
	quoted, _ := json.Marshal(canonical)
	if out, ok := rawjson.SetMember(params, "name", quoted); ok {
		return out
	}
	return params
}

// listPage answers a */list request with one page of items under field.
func listPage(params json.RawMessage, page func(cursor string) ([]json.RawMessage, string, error), field string) (any, error) {
	var p mcp.PaginatedParams
	if len(params) > 0 && string(params) != "null" {
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, invalidParams("list params: %v", err)
		}
	}
	items, next, err := page(p.Cursor)
	if err != nil {
		return nil, invalidParams("%v", err)
	}
	// Written out by hand: the items are JSON already (checked when they arrived), and a
	// catalog of thousands of tools is megabytes that the encoder would check again.
	size := len(field) + len(next) + 32
	for _, it := range items {
		size += len(it) + 1
	}
	b := make([]byte, 0, size)
	b = append(append(append(b, `{"`...), field...), `":[`...)
	for i, it := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, it...)
	}
	b = append(b, ']')
	if next != "" {
		quoted, _ := json.Marshal(next)
		b = append(append(b, `,"nextCursor":`...), quoted...)
	}
	return json.RawMessage(append(b, '}')), nil
}

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
	sess.mu.Lock()
	sess.version, sess.clientCaps, sess.strict, sess.whole = v, caps, strict, whole
	sess.mu.Unlock()
	sess.srv.opts.Logger.Debug("client initialized", "client", p.ClientInfo.Name, "client_version", p.ClientInfo.Version,
		"requested", p.ProtocolVersion, "protocol", v)
	return mcp.InitializeResult{
		ProtocolVersion: v,
		Capabilities:    sess.capabilities(),
		ServerInfo:      mcp.Implementation{Name: "toolnode", Version: sess.srv.opts.Version},
	}, nil
}

// capabilities advertises tools and logging, which the node always serves, and the rest
// only when some bundle offers it.
func (sess *Session) capabilities() mcp.ServerCapabilities {
	o := sess.srv.node.Offers()
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
	return caps
}

// Version is the protocol revision negotiated with the client, or "" before initialize.
func (sess *Session) Version() string {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return sess.version
}

// waitReady holds requests that need the merged catalog until the first start of the
// bundles is over, so that a client never sees a list missing bundles still starting.
func (sess *Session) waitReady(ctx context.Context) error {
	select {
	case <-sess.srv.node.Ready():
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

func (sess *Session) setLevel(ctx context.Context, params json.RawMessage) (any, error) {
	var p mcp.SetLevelParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, invalidParams("logging/setLevel params: %v", err)
	}
	rank, ok := mcp.LogLevelRank(p.Level)
	if !ok {
		return nil, invalidParams("unknown log level %q; use one of %v", p.Level, mcp.LogLevels())
	}
	sess.mu.Lock()
	sess.minLevel = rank
	sess.mu.Unlock()
	// Bundles that are slow to take the level must not hold up the client.
	go func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		sess.srv.node.SetLogLevel(ctx, p.Level)
	}()
	return struct{}{}, nil
}

// HandleNotification acts on a notification from the client.
func (sess *Session) HandleNotification(method string, params json.RawMessage) {
	switch method {
	case mcp.NotifyInitialized:
		sess.mu.Lock()
		sess.initialized = true
		sess.mu.Unlock()
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

func invalidParams(format string, args ...any) *rpc.Error {
	return rpc.Errorf(mcp.CodeInvalidParams, format, args...)
}
