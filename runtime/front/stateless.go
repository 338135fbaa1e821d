package front

import (
	"context"
	"encoding/json"
	"math"

	"github.com/toolnode/toolnode/runtime/rpc"
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

// isStateless reports whether a request speaks a stateless revision: its _meta names one.
func isStateless(params json.RawMessage) bool {
	_, ok := statelessMeta(params)
	return ok
}

// statelessMeta returns the _meta of a request that speaks a stateless revision.
func statelessMeta(params json.RawMessage) (json.RawMessage, bool) {
	meta, ok := rawjson.Member(params, "_meta")
	if !ok {
		return nil, false
	}
	_, ok = rawjson.Member(meta, mcp.MetaProtocolVersion)
	return meta, ok
}

// readMeta reads and checks the _meta of a stateless request: -32602 when it lacks the
// members every request carries, -32022 when it asks for a revision the node does not
// serve. Only _meta is read, member by member: the arguments, of any size, are the
// bundle's business, and a decoder would cost more than the call's routing.
func readMeta(params json.RawMessage) (requestMeta, *rpc.Error) {
	raw, ok := rawjson.Member(params, "_meta")
	return readMetaValue(raw, ok)
}

// readMetaValue is readMeta for a request's _meta found already (ok false: it has none).
func readMetaValue(raw json.RawMessage, ok bool) (requestMeta, *rpc.Error) {
	if !ok || string(raw) == "null" {
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
	mode := s.opts.Names
	sess.strict = mode == NamesStrict || mode != NamesCanonical && strictClient(m.clientName)
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

// streamOutbound sends a stateless request's notifications on the stream of the request ctx
// belongs to; nothing else goes to a client without a session.
type streamOutbound struct {
	send func(ctx context.Context, m *rpc.Message) error
}

func (o streamOutbound) Notify(ctx context.Context, method string, params any) error {
	raw, err := rpc.Marshal(params)
	if err != nil {
		return err
	}
	return o.send(ctx, rpc.Notification(method, raw))
}

func (o streamOutbound) Request(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return nil, errNoRequests()
}

// errNoRequests answers a bundle's request to a client that has no session.
func errNoRequests() *rpc.Error {
	return rpc.Errorf(mcp.CodeInternalError, "a client without a session takes no requests (2026-07-28 asks with input_required results)")
}
