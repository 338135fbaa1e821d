package bundle

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// StateKeyEnv names the environment variable holding the key that seals the requestState
// of input_required results, when Options.StateKey is not set. toolnode sets it, the same
// for every process of a bundle, so that any of them accepts the state another one sealed.
const StateKeyEnv = "TOOLNODE_STATE_KEY"

// stateTTL bounds how long a requestState is accepted: long enough for a person to answer
// an elicitation, short enough to bound replays.
const stateTTL = 15 * time.Minute

// era says how one request is served: after initialize, or on its own under 2026-07-28,
// where everything the server may know about the client travels in the request's _meta.
type era struct {
	stateless    bool
	capabilities json.RawMessage // the client's, for this request alone (2026-07-28)
	logMin       int32           // 2026-07-28: rank of the least severe level sent; math.MaxInt32: none
}

// rounds is what a 2026-07-28 request retried after input_required carries: the answers
// of this round and the sealed ones of earlier rounds.
type rounds struct {
	InputResponses json.RawMessage `json:"inputResponses"`
	RequestState   *string         `json:"requestState"`
}

// given reports whether the request carries either, cheaply.
func (r *rounds) given() bool { return r.RequestState != nil || len(r.InputResponses) > 0 }

// roundsOf reads the rounds of a request whose params are not decoded otherwise.
func roundsOf(params json.RawMessage) (rounds, *RPCError) {
	var r rounds
	if !bytes.Contains(params, []byte(`"requestState"`)) && !bytes.Contains(params, []byte(`"inputResponses"`)) {
		return r, nil
	}
	return r, decodeParams(params, &r)
}

// eraOf reads which era a request belongs to. A request without a protocol version in its
// _meta, or with one negotiated by initialize, is served in the session; one naming a
// version nobody speaks is refused with -32022.
func (ss *session) eraOf(params json.RawMessage) (era, *RPCError) {
	// Most requests of a session carry no such key: spare them a second decoding.
	if !bytes.Contains(params, []byte(mcp.MetaProtocolVersion)) {
		return era{}, nil
	}
	var p struct {
		Meta *mcp.StatelessMeta `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil {
		return era{}, nil
	}
	return eraFrom(p.Meta)
}

// eraFrom is eraOf for a request whose _meta is decoded already (nil when it had none).
func eraFrom(meta *mcp.StatelessMeta) (era, *RPCError) {
	if meta == nil || meta.ProtocolVersion == "" || mcp.IsSupportedVersion(meta.ProtocolVersion) {
		return era{}, nil
	}
	v := meta.ProtocolVersion
	if !mcp.IsStatelessVersion(v) {
		data, _ := json.Marshal(mcp.UnsupportedVersionData{Supported: mcp.AllVersions(), Requested: v})
		return era{}, &RPCError{Code: mcp.CodeUnsupportedVersion, Message: fmt.Sprintf("unsupported protocol version %.64q", v), Data: data}
	}
	e := era{stateless: true, capabilities: meta.ClientCapabilities, logMin: math.MaxInt32}
	if rank, ok := mcp.LogLevelRank(meta.LogLevel); ok {
		e.logMin = int32(rank)
	}
	return e, nil
}

// discover answers server/discover, in either era.
func (ss *session) discover() any {
	o := ss.s.opts
	info, _ := json.Marshal(map[string]mcp.Implementation{mcp.MetaServerInfo: {Name: o.Name, Title: o.Title, Version: o.Version}})
	return struct {
		SupportedVersions []string        `json:"supportedVersions"`
		Capabilities      any             `json:"capabilities"`
		Instructions      string          `json:"instructions,omitempty"`
		Meta              json.RawMessage `json:"_meta"`
	}{mcp.AllVersions(), ss.s.capabilities(), o.Instructions, info}
}

// cacheable lists the methods whose results carry ttlMs and cacheScope.
var cacheable = map[string]bool{
	mcp.MethodDiscover: true, mcp.MethodToolsList: true, mcp.MethodPromptsList: true,
	mcp.MethodResourcesList: true, mcp.MethodResourceTemplates: true, mcp.MethodResourcesRead: true,
	mcp.MethodSkillsList: true, mcp.MethodSkillsGet: true,
}

// statelessAnswer adds what a 2026-07-28 result carries: resultType (unless the result is
// an input_required one already) and, for lists, reads and discover, the cache hint. A
// missing resource is -32602 in that revision.
func (ss *session) statelessAnswer(method string, result any, rerr *RPCError) (any, *RPCError) {
	if rerr != nil {
		if rerr.Code == mcp.CodeResourceNotFound {
			e := *rerr
			e.Code = mcp.CodeInvalidParams
			return nil, &e
		}
		return nil, rerr
	}
	if _, ok := result.(*mcp.InputRequiredResult); ok {
		return result, nil
	}
	extra := `"resultType":"complete"`
	if cacheable[method] {
		extra += fmt.Sprintf(`,"ttlMs":%d,"cacheScope":%q`, ss.s.opts.CacheTTL.Milliseconds(), mcp.CacheScopePublic)
	}
	b, err := json.Marshal(result)
	if err != nil || len(b) < 2 || b[0] != '{' {
		return nil, errorf(mcp.CodeInternalError, "internal error: the answer is not a JSON object")
	}
	if len(bytes.TrimSpace(b[1:len(b)-1])) > 0 {
		extra = "," + extra
	}
	return encoded(append(append(b[:len(b)-1], extra...), '}')), nil
}

// Input asks the client for input on behalf of the request being served: a tool call, a
// prompts/get or a resources/read. Under 2025-11-25 and older each question is a request
// to the client. Under 2026-07-28 the request ends with an input_required result and is
// served again, from the start, once the client has the answers: a handler must ask the
// same questions in the same order, and do nothing it cannot repeat before its last
// question. The answers of earlier rounds travel sealed in requestState, bound to the
// request, so a handler never sees that state.
//
// Its methods may be called from any goroutine while the handler runs.
type Input struct {
	ss      *session
	id      json.RawMessage // of the request served, as received
	era     era
	answers map[string]json.RawMessage // given so far, 2026-07-28 only; nil when none
	asked   int                        // questions so far, for keys not given

	// What a state is bound to: the request's method, target and arguments.
	method, target string
	args           json.RawMessage

	// Set when the request cannot finish: the questions to send, or why not.
	need *mcp.InputRequiredResult
	fail *RPCError
}

// errInputRequired ends a handler's round; the handler should return it (or any error).
var errInputRequired = errors.New("bundle: the client must answer questions first")

// meta relates a message to the request being served, for a node that serves several
// clients with one bundle process.
func (in *Input) meta() map[string]json.RawMessage {
	return map[string]json.RawMessage{mcp.MetaRelatedRequest: in.id}
}

// Ask asks the client several questions at once, by keys of the handler's choosing, and
// returns the client's result for each. Methods are mcp.MethodElicitation,
// mcp.MethodSampling and mcp.MethodRootsList. It fails with an *RPCError when the client
// did not declare the capability a question needs under 2026-07-28 (the request then
// answers -32021).
func (in *Input) Ask(ctx context.Context, questions mcp.InputRequests) (map[string]json.RawMessage, error) {
	for key, q := range questions {
		if err := in.require(q.Method); err != nil {
			return nil, fmt.Errorf("bundle: input %q: %w", key, err)
		}
	}
	answers := map[string]json.RawMessage{}
	if !in.era.stateless {
		for key, q := range questions {
			params := q.Params
			if len(params) == 0 {
				params = json.RawMessage("{}")
			}
			raw, err := withMeta(params, in.meta())
			if err != nil {
				return nil, fmt.Errorf("bundle: %s params: %w", q.Method, err)
			}
			if answers[key], err = in.ss.send(ctx, q.Method, raw, in.meta()); err != nil {
				return nil, err
			}
		}
		return answers, nil
	}
	missing := mcp.InputRequests{}
	for key, q := range questions {
		if a, ok := in.answers[key]; ok {
			answers[key] = a
		} else {
			missing[key] = q
		}
	}
	if len(missing) == 0 {
		return answers, nil
	}
	in.ss.mu.Lock()
	in.need = &mcp.InputRequiredResult{ResultType: mcp.ResultTypeInputRequired, InputRequests: missing}
	in.ss.mu.Unlock()
	return nil, errInputRequired
}

// Request asks the client one question (see Ask) and returns its result. Under 2026-07-28
// its key is the method's last word and the count of questions asked so far.
func (in *Input) Request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	b, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("bundle: %s params: %w", method, err)
	}
	if string(b) == "null" {
		b = []byte("{}")
	}
	in.ss.mu.Lock()
	in.asked++
	key := fmt.Sprintf("%s-%d", method[strings.LastIndexByte(method, '/')+1:], in.asked)
	in.ss.mu.Unlock()
	answers, err := in.Ask(ctx, mcp.InputRequests{key: {Method: method, Params: b}})
	if err != nil {
		return nil, err
	}
	return answers[key], nil
}

// CreateMessage asks the client's model for a completion (sampling/createMessage).
func (in *Input) CreateMessage(ctx context.Context, p mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	return requestAs[mcp.CreateMessageResult](ctx, in, mcp.MethodSampling, p)
}

// Elicit asks the user for input shaped by p.RequestedSchema (elicitation/create).
func (in *Input) Elicit(ctx context.Context, p mcp.ElicitParams) (*mcp.ElicitResult, error) {
	return requestAs[mcp.ElicitResult](ctx, in, mcp.MethodElicitation, p)
}

func requestAs[T any](ctx context.Context, in *Input, method string, params any) (*T, error) {
	raw, err := in.Request(ctx, method, params)
	if err != nil {
		return nil, err
	}
	res := new(T)
	if err := json.Unmarshal(raw, res); err != nil {
		return nil, fmt.Errorf("bundle: %s: unreadable answer: %w", method, err)
	}
	return res, nil
}

// Capable reports whether the client declared capability (such as "sampling" or
// "elicitation") for this request: under 2026-07-28 a handler asks only what the client
// can answer. In a session it reports true: the client refuses what it cannot do.
func (in *Input) Capable(capability string) bool {
	if !in.era.stateless {
		return true
	}
	var caps map[string]json.RawMessage
	_ = json.Unmarshal(in.era.capabilities, &caps)
	c := caps[capability]
	return len(c) > 0 && c[0] == '{'
}

// inputCapability names the client capability each kind of question needs.
var inputCapability = map[string]string{
	mcp.MethodElicitation: "elicitation",
	mcp.MethodSampling:    "sampling",
	mcp.MethodRootsList:   "roots",
}

// require fails when a 2026-07-28 request did not declare the capability method needs.
// Sessions are not checked: the client answers a request it cannot serve with an error,
// and a node in between may declare less than its clients can do.
func (in *Input) require(method string) error {
	name, ok := inputCapability[method]
	if !ok {
		return fmt.Errorf("%s is not a question for the client", method)
	}
	if in.Capable(name) {
		return nil
	}
	data, _ := json.Marshal(map[string]any{"requiredCapabilities": map[string]any{name: struct{}{}}})
	e := &RPCError{Code: mcp.CodeMissingClientCapability, Message: fmt.Sprintf("%s needs the client capability %q", method, name), Data: data}
	in.ss.mu.Lock()
	in.fail = e
	in.ss.mu.Unlock()
	return e
}

// newInput prepares the questions of one request. Under 2026-07-28 it opens the answers
// the client gives back (r): those sealed in requestState by an earlier round and those of
// this round. Malformed or tampered answers are -32602. method, target and args say what
// a state is bound to; they are hashed only when a state is opened or sealed, which costs
// more than a small call.
func (ss *session) newInput(id json.RawMessage, e era, r rounds, method, target string, args json.RawMessage) (*Input, *RPCError) {
	in := &Input{ss: ss, id: id, era: e}
	if !e.stateless {
		return in, nil
	}
	in.method, in.target, in.args = method, target, args
	if !r.given() {
		return in, nil
	}
	in.answers = map[string]json.RawMessage{}
	if r.RequestState != nil {
		sealed, err := ss.s.openState(*r.RequestState, in.digest())
		if err != nil {
			return nil, errorf(mcp.CodeInvalidParams, "invalid requestState: %v", err)
		}
		in.answers = sealed
	}
	if len(r.InputResponses) > 0 && string(r.InputResponses) != "null" {
		var given map[string]json.RawMessage
		if json.Unmarshal(r.InputResponses, &given) != nil {
			return nil, errorf(mcp.CodeInvalidParams, "inputResponses must map each key to a result object")
		}
		for k, v := range given {
			if len(v) == 0 || v[0] != '{' {
				return nil, errorf(mcp.CodeInvalidParams, "inputResponses[%q] must be a result object", k)
			}
			in.answers[k] = v
		}
	}
	return in, nil
}

// inputFor is newInput for a request whose params are not decoded otherwise.
func (ss *session) inputFor(id json.RawMessage, e era, params json.RawMessage, method, target string, args json.RawMessage) (*Input, *RPCError) {
	var r rounds
	if e.stateless {
		var rerr *RPCError
		if r, rerr = roundsOf(params); rerr != nil {
			return nil, rerr
		}
	}
	return ss.newInput(id, e, r, method, target, args)
}

// finish turns the end of a round into its answer: the questions still open (with the
// answers so far sealed), a failure, or the handler's own result.
func (in *Input) finish(res any, rerr *RPCError) (any, *RPCError) {
	in.ss.mu.Lock()
	need, fail := in.need, in.fail
	in.ss.mu.Unlock()
	switch {
	case fail != nil:
		return nil, fail
	case need != nil && in.era.stateless:
		need.RequestState = in.ss.s.sealState(in.digest(), in.answers)
		return need, nil
	}
	return res, rerr
}

// digest binds a requestState to one request: its method, target and arguments.
func (in *Input) digest() string {
	var v any
	_ = json.Unmarshal(in.args, &v)
	b, _ := json.Marshal([]any{in.method, in.target, v}) // maps marshal with sorted keys
	sum := sha256.Sum256(b)
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

type sealedState struct {
	Digest  string                     `json:"d"`
	Expires int64                      `json:"x"`
	Answers map[string]json.RawMessage `json:"r"`
}

func (s *Server) stateMAC(body string) string {
	m := hmac.New(sha256.New, s.stateKey)
	m.Write([]byte(body))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func (s *Server) sealState(digest string, answers map[string]json.RawMessage) string {
	b, _ := json.Marshal(sealedState{Digest: digest, Expires: time.Now().Add(stateTTL).Unix(), Answers: answers})
	body := base64.RawURLEncoding.EncodeToString(b)
	return body + "." + s.stateMAC(body)
}

func (s *Server) openState(state, digest string) (map[string]json.RawMessage, error) {
	body, mac, _ := strings.Cut(state, ".")
	if !hmac.Equal([]byte(mac), []byte(s.stateMAC(body))) {
		return nil, errors.New("it failed its integrity check")
	}
	b, err := base64.RawURLEncoding.DecodeString(body)
	var st sealedState
	if err != nil || json.Unmarshal(b, &st) != nil {
		return nil, errors.New("it is unreadable")
	}
	if st.Digest != digest {
		return nil, errors.New("it belongs to another request")
	}
	if time.Now().Unix() > st.Expires {
		return nil, errors.New("it has expired")
	}
	if st.Answers == nil {
		st.Answers = map[string]json.RawMessage{}
	}
	return st.Answers, nil
}

// newStateKey returns the key of Options.StateKey, else of StateKeyEnv, else a random one.
func newStateKey(given []byte, env string) []byte {
	switch {
	case len(given) > 0:
		return given
	case env != "":
		return []byte(env)
	}
	k := make([]byte, 32)
	_, _ = rand.Read(k)
	return k
}
