package mcp

import (
	"encoding/json"
	"slices"
)

// The 2026-07-28 revision drops the initialize handshake: every request says in its _meta
// which revision it speaks and what the client can do, and a server answers it alone.
// SupportedVersions and NegotiateVersion keep meaning the revisions negotiated by
// initialize; the ones below are served per request.

// Version20260728 is the first revision served without a session.
const Version20260728 = "2026-07-28"

// StatelessVersions lists the revisions served per request, without initialize, oldest
// first.
func StatelessVersions() []string { return []string{Version20260728} }

// IsStatelessVersion reports whether v is a revision served per request.
func IsStatelessVersion(v string) bool { return slices.Contains(StatelessVersions(), v) }

// AllVersions lists every revision this code speaks in either era, oldest first: what a
// server/discover result names as supportedVersions.
func AllVersions() []string { return append(SupportedVersions(), StatelessVersions()...) }

// Methods and notifications new in 2026-07-28.
const (
	MethodDiscover                  = "server/discover"
	MethodSubscriptionsListen       = "subscriptions/listen"
	NotifySubscriptionsAcknowledged = "notifications/subscriptions/acknowledged"
)

// _meta keys of the 2026-07-28 revision.
const (
	// MetaProtocolVersion, on every request, names the revision it speaks.
	MetaProtocolVersion = "io.modelcontextprotocol/protocolVersion"
	// MetaClientCapabilities, on every request, holds the client's capabilities for that
	// request alone.
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	// MetaClientInfo, optional on a request, names the client software.
	MetaClientInfo = "io.modelcontextprotocol/clientInfo"
	// MetaServerInfo, optional on a result, names the server software.
	MetaServerInfo = "io.modelcontextprotocol/serverInfo"
	// MetaLogLevel, optional on a request, asks for log messages of that level and above
	// while the request runs; without it a server sends none.
	MetaLogLevel = "io.modelcontextprotocol/logLevel"
	// MetaSubscriptionID marks the notifications of one subscriptions/listen stream.
	MetaSubscriptionID = "io.modelcontextprotocol/subscriptionId"
)

// Values of a result's resultType.
const (
	ResultTypeComplete      = "complete"
	ResultTypeInputRequired = "input_required"
)

// Error codes of the 2026-07-28 revision.
const (
	// CodeHeaderMismatch: HTTP headers disagree with the body, or required ones are
	// missing.
	CodeHeaderMismatch = -32020
	// CodeMissingClientCapability: the request needs a capability its _meta did not
	// declare.
	CodeMissingClientCapability = -32021
	// CodeUnsupportedVersion: the request's protocol version is not served; the error's
	// data is an UnsupportedVersionData.
	CodeUnsupportedVersion = -32022
)

// Values of a cacheable result's cacheScope.
const (
	CacheScopePublic  = "public"
	CacheScopePrivate = "private"
)

// StatelessMeta is the part of a 2026-07-28 request's _meta that says who asks and in
// which revision. Capabilities and client info stay raw so that members this code does
// not know pass through.
type StatelessMeta struct {
	ProtocolVersion    string          `json:"io.modelcontextprotocol/protocolVersion"`
	ClientCapabilities json.RawMessage `json:"io.modelcontextprotocol/clientCapabilities,omitempty"`
	ClientInfo         json.RawMessage `json:"io.modelcontextprotocol/clientInfo,omitempty"`
	LogLevel           string          `json:"io.modelcontextprotocol/logLevel,omitempty"`
	ProgressToken      json.RawMessage `json:"progressToken,omitempty"`

	// Traceparent and Tracestate are the caller's W3C Trace Context, as in RequestMeta.
	Traceparent json.RawMessage `json:"traceparent,omitempty"`
	Tracestate  json.RawMessage `json:"tracestate,omitempty"`
}

// CacheHint is how long (ttlMs, in milliseconds) and for whom (cacheScope) a client may
// keep a list, read or discover result.
type CacheHint struct {
	TTLMs      int64  `json:"ttlMs"`
	CacheScope string `json:"cacheScope"`
}

// DiscoverResult answers server/discover.
type DiscoverResult struct {
	ResultType        string             `json:"resultType"`
	SupportedVersions []string           `json:"supportedVersions"`
	Capabilities      ServerCapabilities `json:"capabilities"`
	Instructions      string             `json:"instructions,omitempty"`
	Meta              json.RawMessage    `json:"_meta,omitempty"`
	CacheHint
}

// InputRequest is one request a server needs the client to fulfil before it can finish:
// an elicitation/create, sampling/createMessage or roots/list, without id.
type InputRequest struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
}

// MarshalJSON writes params always, {} when there are none: clients decode the params of
// what they are asked (the official Go SDK fails the call on a roots/list without them).
func (r InputRequest) MarshalJSON() ([]byte, error) {
	params := r.Params
	if len(params) == 0 || string(params) == "null" {
		params = json.RawMessage(`{}`)
	}
	return json.Marshal(struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}{r.Method, params})
}

// InputRequests maps server-chosen keys to the requests of an input_required result.
type InputRequests map[string]InputRequest

// InputResponses maps the keys of InputRequests to the client's results for them.
type InputResponses map[string]json.RawMessage

// InputRequiredResult is a result of tools/call, prompts/get or resources/read saying the
// server needs input first. At least one of InputRequests and RequestState is set; the
// client retries the request with the responses and RequestState unchanged.
type InputRequiredResult struct {
	ResultType    string          `json:"resultType"`
	InputRequests InputRequests   `json:"inputRequests,omitempty"`
	RequestState  string          `json:"requestState,omitempty"`
	Meta          json.RawMessage `json:"_meta,omitempty"`
}

// InputResponseParams is the part of a retried request's params that answers an
// input_required result.
type InputResponseParams struct {
	InputResponses InputResponses `json:"inputResponses,omitempty"`
	RequestState   string         `json:"requestState,omitempty"`
}

// UnsupportedVersionData is the data of a CodeUnsupportedVersion error.
type UnsupportedVersionData struct {
	Supported []string `json:"supported"`
	Requested string   `json:"requested"`
}
