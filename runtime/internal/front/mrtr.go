package front

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/node"
	"github.com/toolnode/toolnode/runtime/internal/rpc"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// Multi round-trip requests across eras (SEP-2322). A bundle of the 2025 era asks for input
// by sending elicitation/create, sampling/createMessage or roots/list while serving a call;
// a 2026 client cannot be sent requests. So the node answers the client's call with an
// input_required result naming what the bundle asked, keeps the bundle's call (and its
// request) waiting, and when the client calls again with inputResponses and the
// requestState, hands the answers to the bundle and goes on with the same call, on
// whatever connection the retry arrives.
//
// The requestState the node gives out names the waiting call, the method and name it
// serves, the caller it belongs to and when it expires, signed with a key of the node: a
// tampered, foreign or stale state is refused, and so is another caller's. A state serves
// one request at a time: a second retry while the first waits for the call is told so. The
// caller's filter is applied again on every retry. States that are not the node's (a 2026
// bundle's own) pass through to the bundle untouched.

// stateTTL bounds how long a call waits for a client to come back with its input.
const stateTTL = 10 * time.Minute

// maxWaiting bounds the calls waiting for input at once.
const maxWaiting = 10_000

// statePrefix marks the node's own request states.
const statePrefix = "tn1."

// waitingCalls holds the calls waiting for a client's input, by id.
type waitingCalls struct {
	key  []byte // signs the requestStates; the replicas of a cluster share it
	node string // the node holding the calls, named in their states ("" outside a cluster)
	mu   sync.Mutex
	byID map[string]*mrtrCall
}

// newWaitingCalls holds calls whose states are signed with key (a random one when nil) and
// name node as the node that holds them.
func newWaitingCalls(key []byte, node string) *waitingCalls {
	if key == nil {
		key = make([]byte, 32)
		_, _ = rand.Read(key)
	}
	return &waitingCalls{key: key, node: node, byID: map[string]*mrtrCall{}}
}

// sign returns the requestState of a waiting call of the caller owner.
func (w *waitingCalls) sign(id, method, name, owner string, expires time.Time) string {
	payload := make([]byte, 8, 8+len(id)+len(method)+len(name)+len(owner)+len(w.node)+4)
	binary.BigEndian.PutUint64(payload, uint64(expires.Unix()))
	for i, field := range []string{id, method, name, owner, w.node} {
		if i > 0 {
			payload = append(payload, 0)
		}
		payload = append(payload, field...)
	}
	mac := hmac.New(sha256.New, w.key)
	mac.Write(payload)
	return statePrefix + base64.RawURLEncoding.EncodeToString(payload) + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// stateFields are the fields of a requestState: the waiting call's id, its method and
// name, its caller and the node holding it.
const stateFields = 5

// verify checks a requestState's signature and returns its fields and when it expires.
func (w *waitingCalls) verify(state string) ([][]byte, time.Time, *rpc.Error) {
	body, sig, ok := strings.Cut(strings.TrimPrefix(state, statePrefix), ".")
	payload, err1 := base64.RawURLEncoding.DecodeString(body)
	got, err2 := base64.RawURLEncoding.DecodeString(sig)
	mac := hmac.New(sha256.New, w.key)
	mac.Write(payload)
	bad := rpc.Errorf(mcp.CodeInvalidParams, "invalid params: requestState failed its integrity check (it was changed, or is not this cluster's)")
	if !ok || err1 != nil || err2 != nil || !hmac.Equal(got, mac.Sum(nil)) || len(payload) < 8 {
		return nil, time.Time{}, bad
	}
	parts := bytes.SplitN(payload[8:], []byte{0}, stateFields)
	if len(parts) != stateFields {
		return nil, time.Time{}, bad
	}
	return parts, time.Unix(int64(binary.BigEndian.Uint64(payload)), 0), nil
}

// StateNode names the node of the cluster holding the call a requestState of this node's
// continues, once its signature checks out; "" for a state this node holds, or one not of
// the node's making (a bundle's own), which it serves itself.
func (s *Server) StateNode(state string) string {
	if !strings.HasPrefix(state, statePrefix) {
		return ""
	}
	parts, _, err := s.waiting.verify(state)
	if err != nil || string(parts[4]) == s.waiting.node {
		return ""
	}
	return string(parts[4])
}

// open checks a requestState against the request it comes with and the caller owner who
// sends it, and returns the waiting call.
func (w *waitingCalls) open(state, method, name, owner string) (*mrtrCall, *rpc.Error) {
	parts, expires, err := w.verify(state)
	if err != nil {
		return nil, err
	}
	if string(parts[1]) != method || string(parts[2]) != name {
		return nil, rpc.Errorf(mcp.CodeInvalidParams, "invalid params: requestState belongs to another request than %s %q", method, name)
	}
	if string(parts[3]) != owner {
		return nil, rpc.Errorf(mcp.CodeInvalidParams, "invalid params: requestState belongs to another client; call again without it")
	}
	if string(parts[4]) != w.node {
		return nil, rpc.Errorf(mcp.CodeInvalidParams, "invalid params: the call this requestState continues is held by node %q, not this one; call again without it", parts[4])
	}
	if time.Now().After(expires) {
		return nil, rpc.Errorf(mcp.CodeInvalidParams, "invalid params: requestState has expired; call again without it")
	}
	w.mu.Lock()
	c := w.byID[string(parts[0])]
	w.mu.Unlock()
	if c == nil {
		return nil, rpc.Errorf(mcp.CodeInvalidParams, "invalid params: the call this requestState continues has ended; call again without it")
	}
	return c, nil
}

// mrtrCall is one call of a stateless client that may need the client's input. It is the
// node.Exchange of the call: what the bundle sends goes to the client request attached now,
// and what it asks turns into an input_required answer to that request.
type mrtrCall struct {
	w      *waitingCalls
	req    *node.Request           // the request the call began with
	id     Identity                // its caller
	start  time.Time               // for the audit log
	cancel context.CancelCauseFunc // ends the call at the bundle

	mu        sync.Mutex
	stateID   string // set once the call waits for input
	view      *Stateless
	viewCtx   context.Context
	reply     *Call // the attached request's call; nil while none is
	stopWatch func() bool
	asks      map[string]*ask
	seq       int
	final     *node.Outcome // the call ended while no client request was attached
	ended     bool
	audited   bool
	expiry    *time.Timer
}

type ask struct {
	method string
	params json.RawMessage
	answer chan json.RawMessage
}

// callAsking serves c, a stateless request whose bundle may ask the client for input.
func (v *Stateless) callAsking(c *Call) {
	req, n := c.req, v.srv.node
	// The call outlives this request (it may wait for the client's input), but keeps its
	// values: the trace it belongs to.
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(c.ctx))
	m := &mrtrCall{w: v.srv.waiting, req: req, id: v.id, start: c.start, cancel: cancel}
	m.mu.Lock()
	m.attach(v, c)
	m.mu.Unlock()
	switch req.Method {
	case mcp.MethodToolsCall:
		n.CallIn(&c.rec, ctx, m, req, c.tool) // the request's Call is its only one
	case mcp.MethodPromptsGet:
		go func() { m.CallDone(n.GetPrompt(ctx, m, req)) }()
	default:
		go func() { m.CallDone(n.ReadResource(ctx, m, req)) }()
	}
}

// resume serves a retry that carries the requestState of a call the node keeps waiting,
// and reports whether the request was one; a state of the bundle's own is not.
func (v *Stateless) resume(c *Call) bool {
	req := c.req
	var state string
	_ = json.Unmarshal(req.State, &state)
	if !strings.HasPrefix(state, statePrefix) {
		return false
	}
	name := req.Name
	if req.Method == mcp.MethodResourcesRead {
		name = req.URI
	}
	m, err := v.srv.waiting.open(state, req.Method, name, v.id.key())
	if err == nil && !v.srv.allowed(req) {
		err = rpc.Errorf(mcp.CodeInvalidParams, "invalid params: this client may no longer use %q; call again without the requestState", name)
	}
	if err != nil {
		c.finish(node.Answer(req.Method, nil, err))
		return true
	}
	m.resume(v, c, req.Responses)
	return true
}

// allowed reports whether req's caller may still reach what req names.
func (s *Server) allowed(req *node.Request) bool {
	switch req.Method {
	case mcp.MethodResourcesRead:
		return s.node.MayRead(req)
	case mcp.MethodToolsCall:
		return s.node.MayCall(req.Target(), req.Allow)
	default:
		return req.Allow == nil || req.Allow(req.Target())
	}
}

// attach makes c, a client request, the one the call answers; the caller holds m.mu. A
// client that goes away (an HTTP stream closed, a stdio cancellation) cancels the call.
func (m *mrtrCall) attach(view *Stateless, c *Call) {
	ctx := c.ctx
	m.view, m.viewCtx, m.reply = view, ctx, c
	if m.expiry != nil {
		m.expiry.Stop()
	}
	m.stopWatch = context.AfterFunc(ctx, func() {
		m.mu.Lock()
		r := m.reply
		gone := m.viewCtx == ctx && r != nil
		if gone {
			m.detach()
			m.end()
		}
		m.mu.Unlock()
		if gone {
			m.cancel(errors.New("the client cancelled the call"))
			r.finish(node.Answer(r.Method(), nil, context.Cause(ctx))) // the request's own end: its span and its answer, if any can go
		}
	})
}

// detach lets go of the attached request; the caller holds m.mu and answers it.
func (m *mrtrCall) detach() *Call {
	r := m.reply
	m.reply = nil
	if m.stopWatch != nil {
		m.stopWatch()
		m.stopWatch = nil
	}
	if !m.ended && m.stateID != "" {
		m.expiry = time.AfterFunc(stateTTL, func() {
			m.mu.Lock()
			m.end()
			m.mu.Unlock()
			m.cancel(errors.New("the client did not come back with the input asked for"))
		})
	}
	return r
}

// end forgets the call; the caller holds m.mu.
func (m *mrtrCall) end() {
	m.ended = true
	if m.expiry != nil {
		m.expiry.Stop()
	}
	if m.stateID != "" {
		m.w.mu.Lock()
		delete(m.w.byID, m.stateID)
		m.w.mu.Unlock()
	}
	for _, a := range m.asks {
		close(a.answer)
	}
	m.asks = nil
	m.final = nil
}

// CallDone receives the call's Outcome from the node, once (it implements node.Exchange): it
// is audited, and goes to the request attached now, or waits for the client's next retry.
func (m *mrtrCall) CallDone(o node.Outcome) {
	// The call is over at the bundle: what it holds for the call (a process of an
	// isolated bundle for an anonymous caller) may go.
	defer m.cancel(errors.New("the call has ended"))
	m.mu.Lock()
	if !m.audited {
		m.audited = true
		m.view.srv.audit(m.req, m.id, m.start, o, m.ended) // ended first: cancelled or expired
	}
	if m.ended {
		m.mu.Unlock()
		return
	}
	r := m.detach()
	if r == nil {
		final := o
		m.final = &final // for the client's next retry
		m.mu.Unlock()
		return
	}
	view := m.view
	m.end()
	m.mu.Unlock()
	r.finish(view.answer(m.req.Method, o))
}

// Caller implements node.Exchange: the client of the request attached now, else of the
// last one (a retry of the call comes from the client the call began with: see open).
func (m *mrtrCall) Caller() node.Caller {
	m.mu.Lock()
	defer m.mu.Unlock()
	return *m.view.caller()
}

// Progress implements node.Exchange: it goes to the request attached now; while none is,
// it is dropped.
func (m *mrtrCall) Progress(p mcp.ProgressParams) { m.notify(mcp.NotifyProgress, p) }

// Log implements node.Exchange: the message goes to the request attached now, under its
// log level; while none is, it is dropped.
func (m *mrtrCall) Log(msg mcp.LoggingMessageParams) { m.notify(mcp.NotifyMessage, msg) }

func (m *mrtrCall) notify(method string, params any) {
	m.mu.Lock()
	view, r := m.view, m.reply
	m.mu.Unlock()
	if r != nil {
		view.notify(r, method, params)
	}
}

// Watch implements node.Exchange: the call outlives the requests that carry it, and ends
// with its own context.
func (m *mrtrCall) Watch(node.Abandoner) bool { return false }

// Ask implements node.Exchange: what the bundle asks becomes an input request of the
// client, answered when it calls again.
func (m *mrtrCall) Ask(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	need := capabilityFor(method)
	if need == "" {
		return nil, rpc.Errorf(mcp.CodeMethodNotFound, "method %q not found", method)
	}
	m.mu.Lock()
	if m.ended {
		m.mu.Unlock()
		return nil, errors.New("the call has ended")
	}
	if !m.view.capable(need) {
		err := missingCapability(need, method)
		r := m.detach()
		m.end()
		m.mu.Unlock()
		m.cancel(err)
		if r != nil {
			r.finish(node.Answer(r.Method(), nil, err))
		}
		return nil, err
	}
	if m.stateID == "" {
		m.w.mu.Lock()
		if len(m.w.byID) >= maxWaiting {
			m.w.mu.Unlock()
			m.mu.Unlock()
			return nil, errors.New("too many calls wait for their clients' input")
		}
		var b [12]byte
		_, _ = rand.Read(b[:])
		m.stateID = base64.RawURLEncoding.EncodeToString(b[:])
		m.w.byID[m.stateID] = m
		m.w.mu.Unlock()
	}
	m.seq++
	key := fmt.Sprintf("%s-%d", need, m.seq)
	a := &ask{method: method, params: params, answer: make(chan json.RawMessage, 1)}
	if m.asks == nil {
		m.asks = map[string]*ask{}
	}
	m.asks[key] = a
	var r *Call
	var res json.RawMessage
	if m.reply != nil {
		res = m.inputRequired()
		r = m.detach()
	}
	m.mu.Unlock()
	if r != nil {
		r.finish(node.Answer(r.Method(), res, nil))
	}
	select {
	case v, ok := <-a.answer:
		if !ok {
			return nil, errors.New("the call ended before the client answered")
		}
		return v, nil
	case <-ctx.Done():
		m.mu.Lock()
		delete(m.asks, key)
		m.mu.Unlock()
		return nil, context.Cause(ctx)
	}
}

// inputRequired is the answer asking the client for every input outstanding; the caller
// holds m.mu.
func (m *mrtrCall) inputRequired() json.RawMessage {
	reqs := make(mcp.InputRequests, len(m.asks))
	for k, a := range m.asks {
		reqs[k] = mcp.InputRequest{Method: a.method, Params: a.params}
	}
	name := m.req.Name
	if m.req.Method == mcp.MethodResourcesRead {
		name = m.req.URI
	}
	b, _ := json.Marshal(mcp.InputRequiredResult{ResultType: mcp.ResultTypeInputRequired, InputRequests: reqs,
		RequestState: m.w.sign(m.stateID, m.req.Method, name, m.id.key(), time.Now().Add(stateTTL))})
	return b
}

// resume takes a retry: the answers go to what the bundle waits for, and the call goes on
// answering the new request. Input still missing is asked for again. A retry while another
// request of the same state is attached is refused: one request at a time answers a call.
func (m *mrtrCall) resume(view *Stateless, c *Call, responses json.RawMessage) {
	var got map[string]json.RawMessage
	if len(responses) > 0 && string(responses) != "null" {
		if err := json.Unmarshal(responses, &got); err != nil {
			c.finish(node.Answer(c.Method(), nil, rpc.Errorf(mcp.CodeInvalidParams, "invalid params: inputResponses must be an object of results by key: %v", err)))
			return
		}
	}
	m.mu.Lock()
	if m.reply != nil {
		m.mu.Unlock()
		c.finish(node.Answer(c.Method(), nil, rpc.Errorf(mcp.CodeInvalidParams, "invalid params: requestState is in use by another request of this call, which will get its answer; do not send it twice at once")))
		return
	}
	if m.final != nil {
		f := m.final
		m.end()
		m.mu.Unlock()
		c.finish(view.answer(m.req.Method, *f))
		return
	}
	keys := make([]string, 0, len(m.asks))
	for k := range m.asks {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if v, ok := got[k]; ok && len(v) > 0 && v[0] == '{' {
			m.asks[k].answer <- v
			delete(m.asks, k)
		}
	}
	m.attach(view, c)
	if len(m.asks) > 0 {
		res := m.inputRequired()
		r := m.detach()
		m.mu.Unlock()
		r.finish(node.Answer(r.Method(), res, nil))
		return
	}
	m.mu.Unlock()
}

// mrtrMethod reports whether method may answer input_required, and what names its target.
func mrtrMethod(method string) (string, bool) {
	switch method {
	case mcp.MethodToolsCall, mcp.MethodPromptsGet:
		return "name", true
	case mcp.MethodResourcesRead:
		return "uri", true
	}
	return "", false
}
