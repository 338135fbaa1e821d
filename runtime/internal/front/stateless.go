package front

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sync/atomic"

	"github.com/toolnode/toolnode/runtime/internal/rpc"
	"github.com/toolnode/toolnode/sdk-go/mcp"
	"github.com/toolnode/toolnode/sdk-go/rawjson"
)

// Under MCP 2026-07-28 there is no session: every request says in params._meta which
// revision it speaks and what its client can do, and is served on its own. The front tells
// the eras apart per request, so that one node serves clients of both at once: a request
// whose _meta names a protocol version is stateless; anything else belongs to a session
// opened by initialize. Each stateless request gets a Session of its own, never attached to
// the node, whose version, capabilities and log level are the request's.

// versionMember is the revision as a request's _meta nearly always spells it.
const versionMember = `"` + mcp.Version20260728 + `"`

// requestMeta is what a 2026-07-28 request says about itself.
type requestMeta struct {
	version    string
	caps       json.RawMessage // an object: the client's capabilities by name
	clientName string
	logLevel   string
}

// fields are the members of a request's params the front reads, found in one pass: the
// arguments can be large, and besides the node's own reading of the name the front looks
// at several members (whether _meta names a revision, the target, a retry's state).
type fields struct {
	meta      json.RawMessage // _meta; nil when the request has none
	name, uri json.RawMessage // the target of tools/call and prompts/get, and of resources/read
	state     json.RawMessage // requestState, which a retry carries
	responses json.RawMessage // inputResponses, which a retry carries
	version   json.RawMessage // the protocol version _meta names, raw; nil when it names none
	known     *metaEntry      // the reading of _meta when it is the last one read; nil otherwise
}

// stateless reports whether the request speaks a stateless revision: its _meta names one.
func (f *fields) stateless() bool { return f.version != nil }

// fieldsOf reads the fields of a request's params (valid JSON, checked by rpc.Parse). A
// _meta the cache read last is not read again.
func (c *metaCache) fieldsOf(params json.RawMessage) fields {
	var f fields
	if len(params) == 0 || params[0] != '{' {
		return f
	}
	rawjson.Members(params, func(name rawjson.Name, value []byte) {
		switch {
		case name.Is("_meta"):
			f.meta = value
		case name.Is("name"):
			f.name = value
		case name.Is("uri"):
			f.uri = value
		case name.Is("requestState"):
			f.state = value
		case name.Is("inputResponses"):
			f.responses = value
		}
	})
	if f.meta != nil {
		if e := c.last.Load(); e != nil && bytes.Equal(e.raw, f.meta) {
			f.version, f.known = e.version, e
		} else {
			f.version, _ = rawjson.Member(f.meta, mcp.MetaProtocolVersion)
		}
	}
	return f
}

// target is the raw name of what a method that may answer input_required acts on: the
// tool, the prompt or the resource (see mrtrMethod); nil for other methods.
func (f *fields) target(method string) json.RawMessage {
	switch t, _ := mrtrMethod(method); t {
	case "name":
		return f.name
	case "uri":
		return f.uri
	}
	return nil
}

// retry returns the requestState and inputResponses of a retried request ("" and nil for
// a first request).
func (f *fields) retry() (state string, responses json.RawMessage) {
	if f.state != nil {
		_ = json.Unmarshal(f.state, &state)
	}
	return state, f.responses
}

// readMeta reads and checks the _meta of a stateless request (nil when it has none):
// -32602 when it lacks the members every request carries, -32022 when it asks for a
// revision the node does not serve. Only _meta is read, member by member: the arguments,
// of any size, are the bundle's business, and a decoder would cost more than the call's
// routing.
func readMeta(raw json.RawMessage) (requestMeta, *rpc.Error) {
	if raw == nil || string(raw) == "null" {
		return requestMeta{}, rpc.Errorf(mcp.CodeInvalidParams, "invalid params: a request without a session carries _meta with %q and %q",
			mcp.MetaProtocolVersion, mcp.MetaClientCapabilities)
	}
	if raw[0] != '{' {
		return requestMeta{}, rpc.Errorf(mcp.CodeInvalidParams, "invalid params: _meta must be an object")
	}
	var m requestMeta
	var caps, info []byte
	var bad string
	rawjson.Members(raw, func(name rawjson.Name, value []byte) {
		ok := true
		switch {
		case name.Is(mcp.MetaProtocolVersion):
			if string(value) == versionMember { // the usual one, without a copy
				m.version = mcp.Version20260728
				break
			}
			m.version, ok = rawjson.String(value)
		case name.Is(mcp.MetaLogLevel):
			m.logLevel, ok = rawjson.String(value)
		case name.Is(mcp.MetaClientCapabilities):
			caps = value
		case name.Is(mcp.MetaClientInfo):
			info = value
		}
		if !ok && bad == "" {
			bad = name.String()
		}
	})
	switch {
	case bad != "":
		return requestMeta{}, rpc.Errorf(mcp.CodeInvalidParams, "invalid params: _meta %q must be a string", bad)
	case m.version == "":
		return requestMeta{}, rpc.Errorf(mcp.CodeInvalidParams, "invalid params: _meta lacks %q", mcp.MetaProtocolVersion)
	case len(caps) == 0 || caps[0] != '{':
		return requestMeta{}, rpc.Errorf(mcp.CodeInvalidParams, "invalid params: _meta lacks the object %q", mcp.MetaClientCapabilities)
	}
	if !mcp.IsStatelessVersion(m.version) {
		return requestMeta{}, unsupportedVersion(m.version)
	}
	m.caps = caps
	if name, ok := rawjson.Member(info, "name"); ok {
		m.clientName, _ = rawjson.String(name)
	}
	return m, nil
}

// metaCache keeps the _meta of the last stateless request read: a client of the stateless
// revision sends the same _meta with every request (and several such clients mostly the
// same too), so one reading serves them all.
type metaCache struct {
	last atomic.Pointer[metaEntry]
}

// metaEntry is one _meta read: a copy of its text (not the request's, which it would keep
// alive whatever its size), and what it says. It is never changed once made, so requests
// share it.
type metaEntry struct {
	raw      json.RawMessage
	version  json.RawMessage // the revision member of raw, as fields has it
	progress bool            // raw holds a progress token: the request asks for progress
	meta     requestMeta
}

// streams reports whether a request with this _meta may have messages before its answer:
// it asked for log messages or progress. What a bundle asks of the client comes back in
// the answer itself.
func (e *metaEntry) streams() bool { return e.meta.logLevel != "" || e.progress }

// read is readMeta through the cache, for the _meta of f (which fieldsOf gave: when it is
// the last one read, f knows its reading).
func (c *metaCache) read(f *fields) (*metaEntry, *rpc.Error) {
	if f.known != nil {
		return f.known, nil
	}
	own := bytes.Clone(f.meta)
	m, err := readMeta(own)
	if err != nil {
		return nil, err
	}
	e := &metaEntry{raw: own, meta: m}
	e.version, _ = rawjson.Member(own, mcp.MetaProtocolVersion)
	token, ok := rawjson.Member(own, "progressToken")
	e.progress = ok && string(token) != "null"
	c.last.Store(e)
	return e, nil
}

// viewCache keeps the Session that served the last stateless request of a front. A client
// sends the same _meta with every request, and such a Session is never changed once made
// (over HTTP its messages find their stream in the call's context), so requests in flight
// share it.
type viewCache struct {
	last atomic.Pointer[cachedView]
}

type cachedView struct {
	meta   *metaEntry
	client string
	sess   *Session
}

// get returns the Session that serves a stateless request of client with meta, its
// messages going out through out.
func (c *viewCache) get(s *Server, out Outbound, meta *metaEntry, client, transport string) *Session {
	if v := c.last.Load(); v != nil && v.meta == meta && v.client == client {
		return v.sess
	}
	sess := s.statelessSession(out, meta.meta)
	sess.clientName, sess.transport = client, transport
	c.last.Store(&cachedView{meta: meta, client: client, sess: sess})
	return sess
}

// unsupportedVersion is the -32022 error naming the revisions the node serves.
func unsupportedVersion(requested string) *rpc.Error {
	data, _ := json.Marshal(mcp.UnsupportedVersionData{Supported: mcp.AllVersions(), Requested: requested})
	return rpc.Errorf(mcp.CodeUnsupportedVersion, "unsupported protocol version %q", requested).WithData(data)
}

// noLogs is a log level above every level: a stateless request that names none gets none.
const noLogs = math.MaxInt

// statelessSession returns the Session that serves one stateless request: the request's
// revision, capabilities and log level; messages go out through out.
func (s *Server) statelessSession(out Outbound, m requestMeta) *Session {
	sess := &Session{srv: s, out: out, stateless: true, initialized: true,
		version: m.version, clientCaps: m.caps, minLevel: noLogs}
	if rank, ok := mcp.LogLevelRank(m.logLevel); ok {
		sess.minLevel = rank
	}
	sess.strict, sess.whole = namesFor(s.opts.Names, m.clientName)
	return sess
}

// removedIn2026 are the methods the stateless revision no longer has.
func removedIn2026(method string) bool {
	switch method {
	case mcp.MethodInitialize, mcp.MethodPing, mcp.MethodLoggingSetLevel, mcp.MethodResourcesSub, mcp.MethodResourcesUnsub,
		mcp.NotifyInitialized:
		return true
	}
	return false
}

// discover answers server/discover: every revision the node speaks and the capabilities of
// its bundles together.
func (sess *Session) discover() (json.RawMessage, error) {
	info, _ := json.Marshal(map[string]any{mcp.MetaServerInfo: mcp.Implementation{Name: "toolnode", Version: sess.srv.opts.Version}})
	return json.Marshal(mcp.DiscoverResult{
		ResultType:        mcp.ResultTypeComplete,
		SupportedVersions: mcp.AllVersions(),
		Capabilities:      sess.capabilities(),
		Meta:              info,
		CacheHint:         mcp.CacheHint{TTLMs: discoverTTL, CacheScope: mcp.CacheScopePublic},
	})
}

// Cache hints the node gives when a bundle gives none. Lists change only when bundles do,
// and every change is announced on subscriptions/listen; what a resource holds is the
// bundle's business, so reads are not to be reused.
const (
	discoverTTL = 60_000
	listTTL     = 30_000
)

// decorate gives a result for a stateless client what the revision requires: resultType
// always (typed says the result has one already), and cache hints on lists and reads.
func decorate(method string, res json.RawMessage, typed bool) json.RawMessage {
	if len(res) == 0 || res[0] != '{' {
		return res
	}
	if !typed {
		res, _ = rawjson.PutMember(res, "resultType", []byte(`"complete"`))
	}
	ttl, scope := -1, ""
	switch method {
	case mcp.MethodToolsList, mcp.MethodPromptsList, mcp.MethodResourcesList, mcp.MethodResourceTemplates:
		ttl, scope = listTTL, mcp.CacheScopePublic
	case mcp.MethodResourcesRead:
		ttl, scope = 0, mcp.CacheScopePrivate
	}
	if ttl >= 0 {
		if _, ok := rawjson.Member(res, "ttlMs"); !ok {
			res, _ = rawjson.PutMember(res, "ttlMs", []byte(itoa(ttl)))
		}
		if _, ok := rawjson.Member(res, "cacheScope"); !ok {
			res, _ = rawjson.PutMember(res, "cacheScope", []byte(`"`+scope+`"`))
		}
	}
	return res
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// statelessError turns an error for a stateless client into the revision's: an unknown
// resource is -32602 there.
func statelessError(err *rpc.Error) *rpc.Error {
	if err != nil && err.Code == mcp.CodeResourceNotFound {
		c := *err
		c.Code = mcp.CodeInvalidParams
		return &c
	}
	return err
}

// missingCapability is the -32021 error of a request that needs a capability its client did
// not declare.
func missingCapability(capability, method string) *rpc.Error {
	data, _ := json.Marshal(map[string]any{"requiredCapabilities": map[string]any{capability: struct{}{}}})
	return rpc.Errorf(mcp.CodeMissingClientCapability, "%s needs the %q capability, which the request's clientCapabilities do not declare",
		method, capability).WithData(data)
}

// capabilityFor names the client capability a server-to-client request needs.
func capabilityFor(method string) string {
	switch method {
	case mcp.MethodSampling:
		return "sampling"
	case mcp.MethodElicitation:
		return "elicitation"
	case mcp.MethodRootsList:
		return "roots"
	}
	return ""
}

// streamOutbound sends a stateless request's notifications on the event stream of the
// request ctx belongs to (see streamKey); nothing else goes to a client without a session.
type streamOutbound struct{}

func (streamOutbound) Notify(ctx context.Context, method string, params any) error {
	st, ok := ctx.Value(streamKey{}).(*stream)
	if !ok {
		return fmt.Errorf("send %s: the request has no stream", method)
	}
	raw, err := rpc.Marshal(params)
	if err != nil {
		return err
	}
	return st.send(ctx, rpc.Notification(method, raw))
}

func (streamOutbound) Request(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return nil, errNoRequests()
}

// errNoRequests answers a bundle's request to a client that has no session.
func errNoRequests() *rpc.Error {
	return rpc.Errorf(mcp.CodeInternalError, "a client without a session takes no requests (2026-07-28 asks with input_required results)")
}
