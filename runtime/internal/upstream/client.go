// Package upstream is the node's client side: one MCP session with one bundle, a process
// spoken to over its stdin and stdout or a remote server reached over Streamable HTTP, in
// whichever era of MCP the bundle speaks, on the message engine of package rpc.
//
// The era is found once per process (or connection): the session asks server/discover,
// with the 2026-07-28 _meta, before anything else. A bundle that answers with 2026-07-28
// among its versions is spoken to statelessly, every request carrying the _meta and no
// initialize sent; any other outcome (an error, an answer without the version, no answer
// within DiscoverTimeout) means a bundle of the initialize era, which then gets the
// handshake. Callers see the same operations either way; Era says which it is.
package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/toolnode/toolnode/runtime/internal/proc"
	"github.com/toolnode/toolnode/runtime/internal/rpc"
	"github.com/toolnode/toolnode/sdk-go/mcp"
	"github.com/toolnode/toolnode/sdk-go/rawjson"
)

// Handler receives what a bundle sends on its own: notifications, and requests to the
// client (sampling, elicitation, roots). Its methods may be called concurrently.
type Handler interface {
	// Notify is called on the reading goroutine, so notifications keep their order with
	// respect to the answers that follow them; it must not block.
	Notify(c *Client, method string, params json.RawMessage)
	// Request answers a request from the bundle. It runs on its own goroutine.
	Request(ctx context.Context, c *Client, method string, params json.RawMessage) (json.RawMessage, error)
}

// Era is the generation of MCP a bundle speaks.
type Era uint8

// Eras.
const (
	// EraUnknown: the session has not found out yet.
	EraUnknown Era = iota
	// EraSession: an initialize handshake opens a session (2025-11-25 and earlier).
	EraSession
	// EraStateless: every request carries its revision and the client's capabilities in
	// _meta, and the bundle answers server/discover (2026-07-28).
	EraStateless
)

func (e Era) String() string {
	switch e {
	case EraSession:
		return "initialize (" + mcp.LatestVersion + " and earlier)"
	case EraStateless:
		return "stateless (" + mcp.Version20260728 + ")"
	}
	return "unknown"
}

// DefaultDiscoverTimeout bounds the wait for the answer to server/discover: a bundle of the
// initialize era may not answer a request sent before initialize at all.
const DefaultDiscoverTimeout = 5 * time.Second

// Config describes a bundle session.
type Config struct {
	// Name is the bundle's name, used in errors and logs.
	Name string
	// Process says what to run, when URL is empty.
	Process proc.Config
	// URL is the MCP endpoint of a remote bundle, reached over Streamable HTTP.
	URL string
	// Link, when set, reaches a bundle served by another node of a cluster instead of a
	// process or URL.
	Link Link
	// InMemory, when set, serves the bundle in the node's own process, on a pair of
	// in-process pipes, instead of a process, URL or link (see Serve). Stopped, it is
	// given Process.Grace to end after its stdin, and as long again after its ctx.
	InMemory Serve
	// Headers are sent with every HTTP request to URL (authorization, for example).
	Headers http.Header
	// HTTPClient makes the HTTP requests; nil for one with the timeouts of a remote bundle
	// (see newHTTPClient).
	HTTPClient *http.Client
	// Logger logs the session; a process's stderr goes to Process.Logger.
	Logger hclog.Logger
	// Handler receives the bundle's notifications and requests. Required.
	Handler Handler
	// ClientInfo is sent in initialize, or in the _meta of each request. Default
	// {"toolnode", "dev"}.
	ClientInfo mcp.Implementation
	// Capabilities are the client capabilities offered in initialize, or in the _meta of
	// each request. Default {}.
	Capabilities json.RawMessage
	// DiscoverTimeout bounds the wait for the answer to server/discover. Default
	// DefaultDiscoverTimeout.
	DiscoverTimeout time.Duration
	// MaxLine is the longest message accepted. Default rpc.DefaultMaxLine.
	MaxLine int
	// MaxQueue bounds what the node holds for a bundle that does not take it (a process's
	// unread stdin, the bodies of HTTP requests in flight); past it, calls to the bundle
	// fail at once. Default rpc.DefaultMaxQueue.
	MaxQueue int
	// Limits are the checks every message of the bundle passes.
	Limits rpc.Limits
	// OnJunk, when set, is also told of each message that is not MCP (after it is
	// logged).
	OnJunk func(line []byte, err error)
	// Batch, when set, gathers the writes to a process with those of the connections that
	// share it (see rpc.Batch).
	Batch *rpc.Batch
}

// Client is a live session with a bundle. Its methods are safe for concurrent use.
type Client struct {
	cfg            Config
	log            hclog.Logger
	t              transport
	era            atomic.Uint32
	meta           []metaMember // the _meta members of a stateless request
	discoverParams []byte       // the params of server/discover: the node's clientInfo
	listMeta       []byte       // the _meta of a stateless bundle's */list: the node's clientInfo
	merged         atomic.Pointer[mergedMeta]

	// The bundle's own requests being answered, so that it can cancel them.
	incomingMu sync.Mutex
	incoming   map[rpc.ID]context.CancelFunc

	// Init is the bundle's answer to initialize; for a stateless bundle, what its
	// server/discover answer says in the same terms (ProtocolVersion "2026-07-28").
	Init mcp.InitializeResult
}

// ErrGone is wrapped by errors of calls to a bundle that has gone away.
var ErrGone = errors.New("bundle gone")

// Start opens the session: it starts the bundle's process, or prepares the connection to a
// remote one. Initialize finds the era and runs the handshake.
func Start(cfg Config) (*Client, error) {
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.ClientInfo.Name == "" {
		cfg.ClientInfo = mcp.Implementation{Name: "toolnode", Version: "dev"}
	}
	if cfg.Capabilities == nil {
		cfg.Capabilities = json.RawMessage(`{}`)
	}
	if cfg.DiscoverTimeout <= 0 {
		cfg.DiscoverTimeout = DefaultDiscoverTimeout
	}
	if cfg.MaxLine <= 0 {
		cfg.MaxLine = rpc.DefaultMaxLine
	}
	if cfg.MaxQueue <= 0 {
		cfg.MaxQueue = rpc.DefaultMaxQueue
	}
	c := &Client{cfg: cfg, log: cfg.Logger, incoming: map[rpc.ID]context.CancelFunc{}}
	info, err := json.Marshal(cfg.ClientInfo)
	if err != nil {
		return nil, fmt.Errorf("encode client info: %w", err)
	}
	c.setMeta(info, cfg.Capabilities)
	h := hooks{handle: c.handle, invalid: c.invalid, unmatched: c.unmatched}
	switch {
	case cfg.Link != nil:
		c.t = startLink(cfg, h)
	case cfg.InMemory != nil:
		c.t = startInMemory(cfg, h)
	case cfg.URL != "":
		c.t, err = newHTTP(cfg, h)
	default:
		c.t, err = startStdio(cfg, h)
	}
	if err != nil {
		return nil, err
	}
	return c, nil
}

// Initialize finds the bundle's era and opens the session. It first asks server/discover
// (without notifications/cancelled when giving up: a bundle of the initialize era is not
// initialized yet); a bundle that answers it with 2026-07-28 among its versions is then
// spoken to statelessly. Any other bundle gets initialize, offering the latest revision of
// that era and accepting any supported one, then notifications/initialized. ctx bounds it.
func (c *Client) Initialize(ctx context.Context) error {
	ok, why, err := c.discover(ctx)
	if err != nil {
		return err
	}
	if ok {
		c.log.Info("bundle speaks MCP without sessions: no initialize, every request carries its _meta",
			"era", EraStateless.String(), "server", c.Init.ServerInfo.Name, "server_version", c.Init.ServerInfo.Version)
		c.listen()
		c.t.opened()
		return nil
	}
	c.setEra(EraSession, "")
	params := mcp.InitializeParams{
		ProtocolVersion: mcp.LatestVersion,
		Capabilities:    c.cfg.Capabilities,
		ClientInfo:      c.cfg.ClientInfo,
	}
	raw, err := c.Call(ctx, mcp.MethodInitialize, params)
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	if err := json.Unmarshal(raw, &c.Init); err != nil {
		return fmt.Errorf("initialize: bad answer: %w", err)
	}
	if !mcp.IsSupportedVersion(c.Init.ProtocolVersion) {
		return fmt.Errorf("initialize: bundle answered protocol version %q; supported: %v",
			c.Init.ProtocolVersion, mcp.SupportedVersions())
	}
	c.setEra(EraSession, c.Init.ProtocolVersion)
	if err := c.Notify(mcp.NotifyInitialized, nil); err != nil {
		return err
	}
	c.log.Info("bundle speaks MCP with sessions: initialized", "era", EraSession.String(),
		"protocol", c.Init.ProtocolVersion, "server", c.Init.ServerInfo.Name, "why_not_stateless", why)
	c.t.opened()
	return nil
}

// discover asks server/discover and reports whether the bundle serves 2026-07-28, filling
// Init when it does, and else why not. An error only when the whole start must fail (ctx
// ended, the bundle went away).
func (c *Client) discover(ctx context.Context) (bool, string, error) {
	c.setEra(EraStateless, mcp.Version20260728) // so that the probe carries the _meta, and its HTTP headers
	pctx, cancel := context.WithTimeoutCause(ctx, c.cfg.DiscoverTimeout,
		fmt.Errorf("no answer to %s within %s", mcp.MethodDiscover, c.cfg.DiscoverTimeout))
	defer cancel()
	raw, err := rpc.CallWait(pctx, clientPeer{c}, mcp.MethodDiscover, c.discoverParams, nil)
	switch {
	case ctx.Err() != nil:
		return false, "", fmt.Errorf("%s: %w", mcp.MethodDiscover, context.Cause(ctx))
	case errors.Is(err, ErrGone):
		return false, "", fmt.Errorf("%s: %w", mcp.MethodDiscover, err)
	case err != nil:
		return false, err.Error(), nil
	}
	var d mcp.DiscoverResult
	if err := json.Unmarshal(raw, &d); err != nil || !slices.Contains(d.SupportedVersions, mcp.Version20260728) {
		return false, fmt.Sprintf("%s answered without %s among its supportedVersions", mcp.MethodDiscover, mcp.Version20260728), nil
	}
	var meta struct {
		ServerInfo mcp.Implementation `json:"io.modelcontextprotocol/serverInfo"`
	}
	_ = json.Unmarshal(d.Meta, &meta)
	c.Init = mcp.InitializeResult{ProtocolVersion: mcp.Version20260728, Capabilities: d.Capabilities,
		ServerInfo: meta.ServerInfo, Instructions: d.Instructions}
	return true, "", nil
}

// listen opens subscriptions/listen for the list changes a stateless bundle says it
// announces: without one it sends none. The subscription lasts as long as the session.
func (c *Client) listen() {
	caps := c.Init.Capabilities
	filter := map[string]bool{}
	if caps.Tools != nil && caps.Tools.ListChanged {
		filter["toolsListChanged"] = true
	}
	if caps.Prompts != nil && caps.Prompts.ListChanged {
		filter["promptsListChanged"] = true
	}
	if caps.Resources != nil && caps.Resources.ListChanged {
		filter["resourcesListChanged"] = true
	}
	if len(filter) == 0 {
		return
	}
	params, _ := json.Marshal(map[string]any{"notifications": filter})
	id, err := c.Expect(func(_ json.RawMessage, err error) {
		if err != nil && !errors.Is(err, ErrGone) {
			c.log.Warn("the bundle ended its subscriptions/listen; its list changes are no longer heard", "error", err)
		}
	})
	if err == nil {
		err = c.Send(id, mcp.MethodSubscriptionsListen, params, Edit{})
	}
	if err != nil {
		c.log.Warn("subscriptions/listen", "error", err)
	}
}

func (c *Client) setEra(e Era, version string) {
	c.era.Store(uint32(e))
	c.t.setEra(e, version)
}

// Era is the era the bundle speaks, known once Initialize has succeeded. For a stateless
// bundle, results of tools/call, prompts/get and resources/read may be input_required
// results (resultType "input_required"); they are returned as the bundle sent them.
func (c *Client) Era() Era { return Era(c.era.Load()) }

// AsksClients reports whether the bundle may send requests meant for the client while a
// call runs (elicitation, sampling, roots): one of the session era may, and so may one
// reached over a cluster link, whose node relays what its own bundles ask; a stateless
// bundle asks with input_required answers instead.
func (c *Client) AsksClients() bool { return c.Era() != EraStateless || c.cfg.Link != nil }

// Ping checks that the bundle answers: ping in a session, server/discover for a stateless
// bundle (which has no ping). An error answer is still an answer.
func (c *Client) Ping(ctx context.Context) error {
	method := mcp.MethodPing
	if c.Era() == EraStateless {
		method = mcp.MethodDiscover
	}
	_, err := c.Call(ctx, method, struct{}{})
	var rpcErr *rpc.Error
	if errors.As(err, &rpcErr) {
		return nil
	}
	return err
}

// Name is the bundle's name.
func (c *Client) Name() string { return c.cfg.Name }

// Pid is the bundle's process id; 0 for a remote bundle.
func (c *Client) Pid() int { return c.t.pid() }

// URL is the endpoint of a remote bundle, or where the link to one served by another node
// leads; "" for a process.
func (c *Client) URL() string {
	if c.cfg.Link != nil {
		return c.cfg.Link.Where()
	}
	return c.cfg.URL
}

// Done is closed when the session has ended.
func (c *Client) Done() <-chan struct{} { return c.t.Done() }

// ExitStatus describes how the process ended (or why the connection to a remote bundle
// was lost), or "running".
func (c *Client) ExitStatus() string { return c.t.status() }

// Cause says why the bundle's process ended where its sandbox knows ("killed at its memory
// bound of 512 MiB"), else "" (see proc.Process.Cause).
func (c *Client) Cause() string {
	if t, ok := c.t.(*stdio); ok {
		return t.proc.Cause()
	}
	return ""
}

// StderrTail returns the last lines the bundle's process wrote on stderr (see
// proc.Process.StderrTail); nil for a remote bundle.
func (c *Client) StderrTail() []string {
	if t, ok := c.t.(*stdio); ok {
		return t.proc.StderrTail()
	}
	return nil
}

// Queued is how many bytes wait for the bundle to take them.
func (c *Client) Queued() int { return c.t.Queued() }

// Waiting is how many calls wait for the bundle's answers.
func (c *Client) Waiting() int { return c.t.Waiting() }

// Call sends a request and waits for its answer. params may be a json.RawMessage. When ctx
// ends first, the bundle is told to cancel the request and ctx's cause is returned. When
// the bundle goes away, the error names it and how it exited. A JSON-RPC error from the
// bundle is returned as an *rpc.Error.
func (c *Client) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	raw, err := rpc.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("encode %s params: %w", method, err)
	}
	var cancelled func(rpc.ID)
	if method != mcp.MethodInitialize { // the spec forbids cancelling initialize
		cancelled = func(id rpc.ID) { c.tellCancelled(id, context.Cause(ctx).Error()) }
	}
	return rpc.CallWait(ctx, clientPeer{c}, method, raw, cancelled)
}

// clientPeer lets rpc.CallWait use the client's own Expect and Send, which name the bundle in
// their errors.
type clientPeer struct{ c *Client }

func (p clientPeer) Expect(done rpc.Done) (rpc.ID, error) { return p.c.Expect(done) }
func (p clientPeer) Request(id rpc.ID, method string, params json.RawMessage) error {
	return p.c.Send(id, method, params, Edit{})
}
func (p clientPeer) Forget(id rpc.ID) bool { return p.c.t.Forget(id) }

// Expect registers done for the outcome of a request about to be sent with Send, and
// returns its id: the caller can relate what the bundle says about the call to it before
// the bundle can say anything. done runs once (see rpc.Done): with the bundle's result, its
// JSON-RPC error, or an error naming the bundle and how it exited. A caller that gives up
// calls Abandon.
func (c *Client) Expect(done rpc.Done) (rpc.ID, error) {
	return c.ExpectTo(rpc.Done(func(res json.RawMessage, err error) { done(res, c.Failure(err)) }))
}

// ExpectTo is Expect with the outcome given to a, a value the caller has made for the call
// already (a relay), which spares the function value of a Done. a is given the errors as
// the transport has them: Failure names them as Expect does.
func (c *Client) ExpectTo(a rpc.Answerer) (rpc.ID, error) {
	id, err := c.t.ExpectTo(a)
	if errors.Is(err, rpc.ErrClosed) {
		return id, c.t.gone()
	}
	return id, err
}

// Failure is err, why a call got no answer as the transport has it, as Expect gives it:
// the bundle's end for a connection closed, the bundle named for an answer that could not
// be taken. nil stays nil.
func (c *Client) Failure(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, rpc.ErrClosed):
		return c.t.gone()
	case errors.Is(err, rpc.ErrBadAnswer):
		return fmt.Errorf("bundle %q: %w", c.cfg.Name, err)
	}
	return err
}

// Edit is what the node changes in a request's params on their way to a bundle, all in one
// edit of params: a request's arguments can be of any size, and are never decoded.
type Edit struct {
	// Name, unless "", is put as params' name: the bundle's own name of the tool or
	// prompt.
	Name string
	// Token, unless "", is put as the progress token: the node's own, in place of the
	// client's.
	Token string
	// TokenTag, unless "" (and without Token), puts as the progress token TokenTag followed
	// by the request's id (see TokenID): a token unique to the call among the process's,
	// made in the line without a string of its own. It must need no escaping in JSON.
	TokenTag string
	// Caller is what a stateless bundle is told of the client of the request.
	Caller Caller
	// Meta are more members of _meta, such as the trace context.
	Meta []rawjson.Edit
	// Header, unless nil, goes with the request to a remote bundle over the bundle's own
	// headers: a caller's credentials. Only a bundle reached over HTTP can take one.
	Header http.Header

	id rpc.ID // the request's, for TokenTag: set by Send
}

// TokenID returns the id of the request a progress token made with tag (see
// Edit.TokenTag) names, and whether it is one.
func TokenID(token, tag string) (uint64, bool) {
	digits, ok := strings.CutPrefix(token, tag)
	if !ok || len(digits) == 0 || len(digits) > 19 {
		return 0, false // 19 digits and fewer fit in 64 bits
	}
	var n uint64
	for _, c := range []byte(digits) {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return n, true
}

// Send sends the request id got from Expect, its params edited as edit says and, to a
// stateless bundle, with the _meta of the 2026-07-28 revision (the revision always; the
// client's capabilities and log level as edit.Caller says, where params do not carry
// them). When it cannot be sent (the bundle is gone, or has left too much untaken) the call
// is taken back and the error says why; done is then not called.
func (c *Client) Send(id rpc.ID, method string, params json.RawMessage, edit Edit) error {
	// The edits' values are made in a buffer of the pool: every way out below has copied
	// them by the time it returns.
	scratch := editBuffers.Get().(*[]byte)
	defer putEditBuffer(scratch)
	edit.id = id
	params, edits, buf, _ := c.editParams((*scratch)[:0], params, edit)
	*scratch = buf
	var err error
	// The transport's concrete type, not an interface: the edits then stay on the stack.
	st, lines := c.t.(*stdio)
	switch {
	case edit.Header != nil:
		ht, ok := c.t.(*httpTransport)
		if !ok {
			c.t.Forget(id)
			return fmt.Errorf("bundle %q is not reached over HTTP, and the call has a header for it", c.cfg.Name)
		}
		err = ht.request(id, method, edits.apply(params), edit.Header)
	case lines:
		err = st.requestEdited(id, method, params, edits.list()...)
	default:
		err = c.t.Request(id, method, edits.apply(params))
	}
	if err != nil {
		if errors.Is(err, rpc.ErrNotReading) {
			return err
		}
		return c.t.gone()
	}
	return nil
}

// editBuffers holds buffers (*[]byte) for the values of Send's edits, made for every
// relayed call.
var editBuffers = sync.Pool{New: func() any { return new([]byte) }}

// keptEditBuffer bounds the buffers kept in editBuffers: one grown by a large _meta goes
// to the garbage collector.
const keptEditBuffer = 16 << 10

func putEditBuffer(b *[]byte) {
	if cap(*b) <= keptEditBuffer {
		editBuffers.Put(b)
	}
}

// paramEdits are the members Send sets in params: _meta and the name, at most.
type paramEdits struct {
	e [2]rawjson.Edit
	n int
}

func (p *paramEdits) add(key string, value []byte) {
	p.e[p.n] = rawjson.Edit{Key: key, Value: value}
	p.n++
}

// list returns the edits, in a slice of p.
func (p *paramEdits) list() []rawjson.Edit { return p.e[:p.n] }

// apply returns params with the edits made, in a copy of their own; params themselves
// when there are none, or when they are not an object.
func (p *paramEdits) apply(params json.RawMessage) json.RawMessage {
	if p.n == 0 {
		return params
	}
	if out, ok := rawjson.PutMembers(params, p.list()...); ok {
		return out
	}
	return params
}

// revisionMeta are the _meta members by which a 2026-07-28 request carries what a session
// holds. A bundle spoken to in a session has them from its initialize, and a server that
// knows both revisions refuses a session's request that names another revision (the
// go-sdk's answers 400), so a 2026-07-28 client's call goes to it without them.
var revisionMeta = [...]string{mcp.MetaProtocolVersion, mcp.MetaClientCapabilities, mcp.MetaClientInfo, mcp.MetaLogLevel}

// keptMeta appends params' _meta without its revisionMeta members to buf, and returns it
// and buf as it grew; nil (and buf as it was) when params have none of those members, the
// common case, found without decoding.
func keptMeta(buf []byte, params json.RawMessage) ([]byte, []byte) {
	if !bytes.Contains(params, []byte(`"io.modelcontextprotocol/`)) {
		return nil, buf
	}
	meta, ok := rawjson.Member(params, "_meta")
	if !ok || len(meta) == 0 || meta[0] != '{' {
		return nil, buf
	}
	at, dropped := len(buf), false
	buf = append(buf, '{')
	rawjson.Members(meta, func(name rawjson.Name, value []byte) {
		for _, key := range revisionMeta {
			if name.Is(key) {
				dropped = true
				return
			}
		}
		if len(buf) > at+1 {
			buf = append(buf, ',')
		}
		buf = append(append(name.Append(buf), ':'), value...)
	})
	if !dropped {
		return nil, buf[:at]
	}
	buf = append(buf, '}')
	return buf[at:], buf
}

// metaMember is one member the node puts in a stateless request's _meta.
type metaMember struct {
	key    string
	member []byte // as written after another member: `,"key":value`
}

func newMetaMember(key string, value []byte) metaMember {
	return metaMember{key, append(append(rawjson.AppendString([]byte{','}, key), ':'), value...)}
}

// versionMember opens a stateless request's _meta with the revision.
const versionMember = `{"` + mcp.MetaProtocolVersion + `":"` + mcp.Version20260728 + `"`

// setMeta sets the _meta members of a stateless request from the client's info and
// capabilities (JSON), and the log level. The info goes only with server/discover: the
// revision makes it optional, and a bundle would decode it with every call.
func (c *Client) setMeta(info, caps []byte) {
	c.discoverParams = append(append([]byte(`{"_meta":{"`+mcp.MetaClientInfo+`":`), info...), "}}"...)
	// And with the lists, rarely sent: a server may show names by who asks (a toolnode
	// fronted by another shows it the catalog's own names).
	c.listMeta = c.discoverParams[len(`{"_meta":`) : len(c.discoverParams)-1]
	c.meta = []metaMember{
		newMetaMember(mcp.MetaClientCapabilities, caps),
		// Every level, unless the client or the Caller says otherwise: the node filters log
		// messages for each client itself.
		newMetaMember(mcp.MetaLogLevel, []byte(`"debug"`)),
	}
}

// Caller is what a stateless bundle is told of the client a call is for, instead of what
// the node can relay for any client. The client's own _meta still wins.
type Caller struct {
	// Caps are the client's capabilities; nil when unknown.
	Caps json.RawMessage
	// LogLevel is the least level of log messages the client wants; "" when unknown.
	LogLevel string
	// NoLogs says the client wants no log messages: the bundle is asked for none.
	NoLogs bool
}

// prepare returns params as Send sends them, edited as edit says and, to a stateless
// bundle, with the members of its revision in their _meta: one edit of params. It also
// returns the progress token params had, nil when none.
func (c *Client) prepare(params json.RawMessage, edit Edit) (json.RawMessage, json.RawMessage) {
	params, edits, _, old := c.editParams(nil, params, edit)
	return edits.apply(params), old
}

// editParams works out the edits of params that Send makes, their values appended to buf
// (see editsOf): to a bundle spoken to in a session, _meta loses the members of the
// 2026-07-28 revision (see revisionMeta).
func (c *Client) editParams(buf []byte, params json.RawMessage, edit Edit) (json.RawMessage, paramEdits, []byte, json.RawMessage) {
	stateless := c.Era() == EraStateless
	var kept []byte // _meta without the revision's members, when it had some
	if !stateless {
		kept, buf = keptMeta(buf, params)
	}
	if kept == nil && edit.Name == "" && edit.Token == "" && edit.TokenTag == "" && edit.Meta == nil && !stateless {
		return params, paramEdits{}, buf, nil
	}
	return c.editsOf(buf, params, kept, edit)
}

// editsOf works out the edits of params that prepare makes, their values appended to buf,
// and returns params as they are to be edited ({} for none), the edits, buf as it grew,
// and the progress token params had, nil when none. meta, unless nil, is the _meta to
// start from in place of params' own. The edits' values lie in buf, or in params, or in
// what the Client keeps unchanged.
func (c *Client) editsOf(buf []byte, params json.RawMessage, meta []byte, edit Edit) (json.RawMessage, paramEdits, []byte, json.RawMessage) {
	var edits paramEdits
	// The values are appended to buf in turn, each taken as a slice once whole: a
	// slice taken before buf grows keeps the old array, and stays right.
	var name, token []byte
	if edit.Name != "" {
		at := len(buf)
		buf = rawjson.AppendString(buf, edit.Name)
		name = buf[at:]
	}
	switch {
	case edit.Token != "":
		at := len(buf)
		buf = rawjson.AppendString(buf, edit.Token)
		token = buf[at:]
	case edit.TokenTag != "":
		at := len(buf)
		buf = append(append(buf, '"'), edit.TokenTag...)
		// An id of the connection's own is a number, appended as such: its String would
		// be a string made for every call.
		if u, ok := edit.id.Uint(); ok && edit.id == rpc.Int(u) {
			buf = strconv.AppendUint(buf, u, 10)
		} else {
			buf = append(buf, strings.Trim(edit.id.String(), `"`)...)
		}
		buf = append(buf, '"')
		token = buf[at:]
	}
	stateless := c.Era() == EraStateless
	if token == nil && !stateless && edit.Meta == nil {
		if meta != nil {
			edits.add("_meta", meta)
		}
		if name != nil {
			edits.add("name", name)
		}
		return params, edits, buf, nil
	}
	if len(bytes.TrimSpace(params)) == 0 || string(params) == "null" {
		params = json.RawMessage(`{}`)
	}
	if meta == nil {
		var ok bool
		meta, ok = rawjson.Member(params, "_meta")
		if !ok || len(meta) == 0 || meta[0] != '{' {
			meta = []byte(`{}`)
		}
	}
	var old []byte
	switch {
	case stateless:
		var merged []byte
		merged, old = c.mergeMeta(meta, token != nil, edit.Caller)
		at := len(buf)
		buf = append(buf, merged...)
		if token != nil {
			buf = append(append(buf, `,"progressToken":`...), token...)
		}
		buf = append(buf, '}')
		meta = buf[at:]
	case token != nil:
		old = clientToken(rawjson.Member(meta, "progressToken"))
		meta, buf = appendEdited(buf, meta, rawjson.Edit{Key: "progressToken", Value: token})
	}
	if edit.Meta != nil {
		meta, buf = appendEdited(buf, meta, edit.Meta...)
	}
	edits.add("_meta", meta)
	if name != nil {
		edits.add("name", name)
	}
	return params, edits, buf, old
}

// appendEdited appends obj, an object, edited as rawjson.PutMembers edits it, to buf, and
// returns the edited object and buf as it grew; obj itself when it is not an object.
func appendEdited(buf, obj []byte, edits ...rawjson.Edit) ([]byte, []byte) {
	at := len(buf)
	buf, ok := rawjson.AppendPutMembers(buf, obj, edits...)
	if !ok {
		return obj, buf
	}
	return buf[at:], buf
}

// mergedMeta is a client's _meta merged with the node's members for a stateless bundle.
// A client sends the same _meta with every request, so the merge of the last one serves
// the next; it is never changed once made.
type mergedMeta struct {
	client    []byte // the client's _meta as it came
	token     []byte // the client's progress token in client; nil when none
	caller    Caller // Caps a copy
	dropToken bool   // the client's progress token left out, for one of the node's
	out       []byte // the merged _meta, open: without its closing brace
}

// clientToken is the progress token a client gave, as Member found it: nil when none.
func clientToken(v []byte, ok bool) []byte {
	if !ok || string(v) == "null" {
		return nil
	}
	return v
}

// mergeMeta merges the client's _meta with the members of the bundle's revision: the
// client's own kept (its revision replaced by the bundle's, its progress token left out
// when dropToken), the node's added where the client gave none, as caller says; open, for
// the progress token to follow. It also returns the client's progress token, nil when
// none.
func (c *Client) mergeMeta(meta []byte, dropToken bool, caller Caller) ([]byte, []byte) {
	caps := caller.Caps
	if m := c.merged.Load(); m != nil && m.dropToken == dropToken && bytes.Equal(m.client, meta) &&
		(m.caller.Caps == nil) == (caps == nil) && bytes.Equal(m.caller.Caps, caps) &&
		m.caller.LogLevel == caller.LogLevel && m.caller.NoLogs == caller.NoLogs {
		return m.out, m.token
	}
	m := &mergedMeta{client: bytes.Clone(meta), dropToken: dropToken}
	out := make([]byte, 0, len(meta)+len(caps)+160)
	out = append(out, versionMember...)
	var given uint
	rawjson.Members(m.client, func(name rawjson.Name, value []byte) {
		if name.Is("progressToken") {
			m.token = clientToken(value, true)
			if dropToken {
				return
			}
		}
		if name.Is(mcp.MetaProtocolVersion) {
			return
		}
		for i, kv := range c.meta {
			if name.Is(kv.key) {
				given |= 1 << i
			}
		}
		out = append(append(name.Append(append(out, ',')), ':'), value...)
	})
	for i, kv := range c.meta {
		switch {
		case given&(1<<i) != 0:
		case caps != nil && kv.key == mcp.MetaClientCapabilities:
			out = append(append(rawjson.AppendString(append(out, ','), kv.key), ':'), caps...)
		case kv.key == mcp.MetaLogLevel && caller.NoLogs:
			// Messages the node would drop are not made.
		case kv.key == mcp.MetaLogLevel && caller.LogLevel != "":
			out = rawjson.AppendString(append(rawjson.AppendString(append(out, ','), kv.key), ':'), caller.LogLevel)
		default:
			out = append(out, kv.member...)
		}
	}
	caller.Caps = bytes.Clone(caps)
	m.caller, m.out = caller, out
	c.merged.Store(m)
	return out, m.token
}

// Abandon gives up on a request still waiting, telling the bundle to cancel it, and
// reports whether it was still waiting (if not, its done has run or is running).
func (c *Client) Abandon(id rpc.ID, reason string) bool {
	if !c.t.Forget(id) {
		return false
	}
	c.tellCancelled(id, reason)
	return true
}

// tellCancelled sends notifications/cancelled; over HTTP in the stateless era, the
// transport has already cancelled by closing the request's stream, and sends nothing.
func (c *Client) tellCancelled(id rpc.ID, reason string) {
	_ = c.t.Notify(mcp.NotifyCancelled, mcp.CancelledNotice(id.String(), reason))
}

// Notify sends a notification to the bundle.
func (c *Client) Notify(method string, params any) error {
	raw, err := rpc.Marshal(params)
	if err != nil {
		return fmt.Errorf("encode %s params: %w", method, err)
	}
	if err := c.t.Notify(method, raw); err != nil {
		return fmt.Errorf("notify bundle %q: %w", c.cfg.Name, err)
	}
	return nil
}

// ListTools fetches every tool of the bundle, following nextCursor to the end. For a
// stateless remote bundle, the parameters its tools mark with x-mcp-header are mirrored
// into headers of each call from then on, and a tool whose marks break the rules is left
// out, with a warning, as the 2026-07-28 revision requires.
func (c *Client) ListTools(ctx context.Context) ([]json.RawMessage, error) {
	tools, err := c.ListAll(ctx, mcp.MethodToolsList, "tools")
	h, remote := c.t.(*httpTransport)
	if err != nil || !remote || c.Era() != EraStateless {
		return tools, err
	}
	kept := tools[:0]
	mirrored := map[string][]paramHeader{}
	for _, raw := range tools {
		var tool struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
		}
		_ = json.Unmarshal(raw, &tool)
		params, err := paramHeaders(tool.InputSchema)
		if err != nil {
			c.log.Warn("tool left out: its x-mcp-header marks break the rules of MCP 2026-07-28", "tool", tool.Name, "reason", err)
			continue
		}
		if len(params) > 0 {
			mirrored[tool.Name] = params
		}
		kept = append(kept, raw)
	}
	h.paramHeaders.Store(&mirrored)
	return kept, nil
}

// ListAll calls a */list method and follows nextCursor to the end, returning the items of
// the answers' field member (e.g. "tools", "prompts", "resourceTemplates").
func (c *Client) ListAll(ctx context.Context, method, field string) ([]json.RawMessage, error) {
	var all []json.RawMessage
	seen := map[string]bool{}
	cursor := ""
	for {
		var params any = struct{}{}
		if cursor != "" {
			params = mcp.PaginatedParams{Cursor: cursor}
		}
		if c.Era() == EraStateless && c.listMeta != nil {
			params = struct {
				Cursor string          `json:"cursor,omitempty"`
				Meta   json.RawMessage `json:"_meta"`
			}{cursor, c.listMeta}
		}
		raw, err := c.Call(ctx, method, params)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", method, err)
		}
		var page map[string]json.RawMessage
		if err := json.Unmarshal(raw, &page); err != nil {
			return nil, fmt.Errorf("%s: bad answer: %w", method, err)
		}
		var items []json.RawMessage
		if err := json.Unmarshal(page[field], &items); err != nil && page[field] != nil {
			return nil, fmt.Errorf("%s: bad %q: %w", method, field, err)
		}
		all = append(all, items...)
		var next string
		_ = json.Unmarshal(page["nextCursor"], &next)
		if next == "" {
			return all, nil
		}
		if seen[next] {
			return nil, fmt.Errorf("%s: cursor %q came back twice; the bundle's pagination loops", method, next)
		}
		seen[next] = true
		cursor = next
	}
}

// Close ends the session: a process is stopped (stdin closed, then SIGTERM, then SIGKILL,
// each after the grace period), a remote bundle's HTTP session deleted. Cancelling ctx
// hurries the stop. Safe to call many times.
func (c *Client) Close(ctx context.Context) error { return c.t.stop(ctx) }

// handle receives the bundle's requests and notifications on the reading goroutine.
func (c *Client) handle(m *rpc.Message) {
	if m.IsNotification() {
		if m.Method == mcp.NotifyCancelled && c.cancelIncoming(m.Params) {
			return
		}
		c.cfg.Handler.Notify(c, m.Method, m.Params)
		return
	}
	if m.Method == mcp.MethodPing {
		_ = c.t.Reply(m.ID, json.RawMessage(`{}`))
		return
	}
	// m is the connection's, for this call only (see hooks.handle): the request goes on
	// in values of its own.
	id, method, params := m.ID, m.Method, m.Params
	ctx, cancel := context.WithCancel(context.Background())
	c.incomingMu.Lock()
	if _, dup := c.incoming[id]; dup {
		c.incomingMu.Unlock()
		cancel()
		_ = c.t.ReplyError(id, rpc.Errorf(mcp.CodeInvalidRequest, "request id %s is already in use", id))
		return
	}
	c.incoming[id] = cancel
	c.incomingMu.Unlock()
	go func() {
		defer func() {
			c.incomingMu.Lock()
			delete(c.incoming, id)
			c.incomingMu.Unlock()
			cancel()
		}()
		res, err := c.cfg.Handler.Request(ctx, c, method, params)
		if ctx.Err() != nil {
			return // cancelled by the bundle: it wants no answer
		}
		if err != nil {
			_ = c.t.ReplyError(id, err)
			return
		}
		_ = c.t.Reply(id, res)
	}()
}

// invalid logs a stdout line that is not a valid MCP message; a request among them is
// answered with the error, so that the bundle does not wait for an answer.
func (c *Client) invalid(line []byte, m *rpc.Message, err *rpc.Error) {
	if c.cfg.URL != "" {
		c.log.Warn("skipped a message of the remote bundle that is not MCP", "reason", err.Message, "message", clip(line))
	} else {
		c.log.Warn("skipped a stdout line that is not MCP (bundles must write only MCP messages to stdout; log to stderr)",
			"reason", err.Message, "line", clip(line))
	}
	if m.Method != "" && !m.ID.IsZero() && !m.ID.IsNull() {
		_ = c.t.ReplyError(m.ID, err)
	}
	if c.cfg.OnJunk != nil {
		c.cfg.OnJunk(line, err)
	}
}

func (c *Client) unmatched(m *rpc.Message) {
	c.log.Debug("dropped an answer no call waits for (given up on, answered twice, or never asked)", "id", m.ID.String())
}

func clip(b []byte) string {
	const max = 200
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(b)
}

// cancelIncoming cancels the bundle's own request that a notifications/cancelled of the
// bundle names, and reports whether there was one.
func (c *Client) cancelIncoming(params json.RawMessage) bool {
	var p mcp.CancelledParams
	var id rpc.ID
	if json.Unmarshal(params, &p) != nil || json.Unmarshal(p.RequestID, &id) != nil {
		return false
	}
	c.incomingMu.Lock()
	cancel := c.incoming[id]
	c.incomingMu.Unlock()
	if cancel != nil {
		cancel()
	}
	return cancel != nil
}

// Watch asks a stateless bundle for the updates of one resource, on a subscriptions/listen
// of its own (the revision has no resources/subscribe); the updates arrive as the bundle's
// notifications/resources/updated. Abandon the returned id to stop.
func (c *Client) Watch(uri string) (rpc.ID, error) {
	params, _ := json.Marshal(map[string]any{"notifications": map[string]any{"resourceSubscriptions": []string{uri}}})
	id, err := c.Expect(func(_ json.RawMessage, err error) {
		if err != nil && !errors.Is(err, ErrGone) {
			c.log.Debug("a resource subscription ended", "uri", uri, "error", err)
		}
	})
	if err != nil {
		return rpc.ID{}, err
	}
	return id, c.Send(id, mcp.MethodSubscriptionsListen, params, Edit{})
}
