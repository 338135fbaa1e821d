package front

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"sync/atomic"

	"github.com/toolnode/toolnode/runtime/internal/node"
	"github.com/toolnode/toolnode/runtime/internal/rpc"
	"github.com/toolnode/toolnode/sdk-go/mcp"
	"github.com/toolnode/toolnode/sdk-go/rawjson"
)

// Under MCP 2026-07-28 there is no session: every request says in params._meta which
// revision it speaks and what its client can do, and is served on its own. The front tells
// the eras apart per request, so that one node serves clients of both at once: a request
// whose _meta names a protocol version is stateless; anything else belongs to a session
// opened by initialize. A stateless request is served for a Stateless: its client as its
// _meta and its transport describe it, never attached to the node.

// versionMember is the revision as a request's _meta nearly always spells it.
const versionMember = `"` + mcp.Version20260728 + `"`

// Stateless is the client of a request of the 2026-07-28 revision: the revision,
// capabilities and log level its _meta names, and who its transport says it is. It is
// never changed once made, so the requests of a client that sends the same _meta share one
// (see Server.stateless).
type Stateless struct {
	client
	who      node.Caller // made once: it is asked on every call
	meta     *metaEntry
	minLevel int
	strict   bool
	whole    bool
	selects  bool
}

// stateless returns the client of a stateless request whose _meta was read into meta (see
// readMeta); its messages go out through out. Clients send the same _meta with every
// request, and the last one made is made again only for another.
func (s *Server) stateless(out node.Client, meta *metaEntry, info SessionInfo) *Stateless {
	if v := s.views.Load(); v != nil && v.meta == meta && v.id.same(info.Identity) && v.out == out && v.transport == info.Transport {
		return v
	}
	v := &Stateless{client: client{srv: s, out: out, id: info.Identity, transport: info.Transport}, meta: meta, minLevel: noLogs}
	if rank, ok := mcp.LogLevelRank(meta.meta.logLevel); ok {
		v.minLevel = rank
	}
	v.strict, v.whole = namesFor(s.opts.Names, meta.meta.clientName)
	v.selects = selectingClient(meta.meta.clientName)
	// An anonymous client is "": no request can be told to share with another. A
	// stateless client never ends: what it holds ends with its requests.
	level, wants := mcp.LogLevelName(v.minLevel)
	v.who = node.Caller{Subject: info.Identity.Subject, Client: info.Identity.Client, Key: info.Identity.key(), Bound: info.Identity.Bound(),
		Caps: meta.meta.caps, LogLevel: level, NoLogs: !wants}
	s.views.Store(v)
	return v
}

// Streams reports whether the client's request may have messages before its answer: its
// _meta asked for log messages or progress. What a bundle asks of the client comes back
// in the answer itself.
func (v *Stateless) Streams() bool { return v.meta.streams() }

// noLogs is a log level above every level: a stateless request that names none gets none.
const noLogs = math.MaxInt

// Begin makes the call of a stateless request. Nothing can name it to cancel it but the end
// of ctx (the HTTP request's), which needs no context of its own.
func (v *Stateless) Begin(ctx context.Context, id rpc.ID) *Call {
	return &Call{peer: v, id: id, ctx: ctx}
}

// caller is the client as its requests' _meta and its transport describe it.
func (v *Stateless) caller() *node.Caller { return &v.who }

// notify sends the progress of the request c, and the log messages at the level its _meta
// names, on the request's way back (its stream).
func (v *Stateless) notify(c *Call, method string, params any) {
	if m, ok := params.(mcp.LoggingMessageParams); ok {
		if rank, _ := mcp.LogLevelRank(m.Level); rank < v.minLevel {
			return
		}
	}
	_ = c.outbound().Notify(c.ctx, method, params)
}

// ask refuses: a client without a session takes no requests; the revision asks with
// input_required results instead (see mrtrCall).
func (v *Stateless) ask(context.Context, *Call, string, json.RawMessage) (json.RawMessage, error) {
	return nil, errNoRequests()
}

// asksInline is false: what a bundle asks goes to the client in the answer.
func (v *Stateless) asksInline() bool { return false }

// CanonicalName maps a tool name as the client may have rendered it (see Options.Names)
// back to the catalog's.
func (v *Stateless) CanonicalName(name string) string { return canonicalName(v, name) }

func (v *Stateless) protocol() string         { return v.meta.meta.version }
func (v *Stateless) strictNames() bool        { return v.strict }
func (v *Stateless) listsWhole() bool         { return v.whole }
func (v *Stateless) selectsTools() bool       { return v.selects }
func (v *Stateless) capable(need string) bool { return capabilityIn(v.meta.meta.caps, need) }

// errNoRequests answers a bundle's request to a client that has no session.
func errNoRequests() *rpc.Error {
	return rpc.Errorf(mcp.CodeInternalError, "a client without a session takes no requests (2026-07-28 asks with input_required results)")
}

// requestMeta is what a 2026-07-28 request says about itself.
type requestMeta struct {
	version    string
	caps       json.RawMessage // an object: the client's capabilities by name
	clientName string
	logLevel   string
}

// statelessVersion returns the revision a request's _meta names, as it is written; nil
// when it names none (a request of a session). A _meta the server read last is not read
// again.
func (s *Server) statelessVersion(meta json.RawMessage) json.RawMessage {
	if meta == nil {
		return nil
	}
	if e := s.metas.last.Load(); e != nil && bytes.Equal(e.raw, meta) {
		return e.version
	}
	v, _ := rawjson.Member(meta, mcp.MetaProtocolVersion)
	return v
}

// readMeta reads and checks the _meta of a stateless request: -32602 when it lacks the
// members every request carries, -32022 when it asks for a revision the node does not
// serve. Clients send the same _meta with every request, so the reading of the last one
// serves the next.
func (s *Server) readMeta(meta json.RawMessage) (*metaEntry, *rpc.Error) {
	if e := s.metas.last.Load(); e != nil && meta != nil && bytes.Equal(e.raw, meta) {
		return e, nil
	}
	own := bytes.Clone(meta) // not the request's bytes, which it would keep alive
	m, err := parseMeta(own)
	if err != nil {
		return nil, err
	}
	e := &metaEntry{raw: own, meta: m}
	e.version, _ = rawjson.Member(own, mcp.MetaProtocolVersion)
	token, ok := rawjson.Member(own, "progressToken")
	e.progress = ok && string(token) != "null"
	s.metas.last.Store(e)
	return e, nil
}

// parseMeta reads and checks the _meta of a stateless request (nil when it has none). Only
// _meta is read, member by member: the arguments, of any size, are the bundle's business.
func parseMeta(raw json.RawMessage) (requestMeta, *rpc.Error) {
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

// metaEntry is one _meta read: a copy of its text, and what it says. It is never changed
// once made, so requests share it.
type metaEntry struct {
	raw      json.RawMessage
	version  json.RawMessage // the revision member of raw, as it is written
	progress bool            // raw holds a progress token: the request asks for progress
	meta     requestMeta
}

// streams reports whether a request with this _meta may have messages before its answer:
// it asked for log messages or progress. What a bundle asks of the client comes back in
// the answer itself.
func (e *metaEntry) streams() bool { return e.meta.logLevel != "" || e.progress }

// unsupportedVersion is the -32022 error naming the revisions the node serves.
func unsupportedVersion(requested string) *rpc.Error {
	data, _ := json.Marshal(mcp.UnsupportedVersionData{Supported: mcp.AllVersions(), Requested: requested})
	return rpc.Errorf(mcp.CodeUnsupportedVersion, "unsupported protocol version %q", requested).WithData(data)
}

// removedIn2026 reports whether the stateless revision no longer has method.
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
func (s *Server) discover() (json.RawMessage, error) {
	info, _ := json.Marshal(map[string]any{mcp.MetaServerInfo: mcp.Implementation{Name: "toolnode", Version: s.opts.Version}})
	return json.Marshal(mcp.DiscoverResult{
		ResultType:        mcp.ResultTypeComplete,
		SupportedVersions: mcp.AllVersions(),
		Capabilities:      s.capabilities(),
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
	case mcp.MethodToolsList, mcp.MethodPromptsList, mcp.MethodResourcesList, mcp.MethodResourceTemplates,
		mcp.MethodSkillsList, mcp.MethodSkillsGet:
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

// answer answers a stateless request of method that ended as o says: errors in the
// revision's terms, results with what the revision requires, and input asked for by a 2026
// bundle passed on only when the client declared the capabilities it needs.
func (v *Stateless) answer(method string, o node.Outcome) node.Outcome {
	if o.Err != nil {
		return o.Translated(nil, statelessError(o.RPCError()))
	}
	if o.InputRequired() {
		var ir mcp.InputRequiredResult
		_ = json.Unmarshal(o.Result, &ir)
		for _, r := range ir.InputRequests {
			if need := capabilityFor(r.Method); need != "" && !v.capable(need) {
				return o.Translated(nil, missingCapability(need, r.Method))
			}
		}
	}
	return o.Translated(decorate(method, o.Result, o.ResultType != ""), nil)
}
