package node

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/pin"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// Approvals. An access file may say that calls to some tools run only once an approver has
// approved that exact call. The approval is bound to the caller, the tool, the digest of
// the arguments, the version of the access file and an expiry: the same call approved
// runs once; a call with one argument changed, from another caller, or under a changed
// access file needs an approval of its own; an expired one is refused.
//
// A call without its approval is not sent. A client that can be asked (it declared the
// elicitation capability: a session's client, a task's, a stateless client's) is asked to
// wait, and the call waits for the decision (approvals_wait.go): it runs once approved. A
// client that cannot is answered at once with an error result (kind needs_approval) naming
// the request, which waits for a decision until the rule's ttl; it calls again with the
// same arguments once approved. The approver lists the requests it may decide with
// toolnode.approvals (or the HTTP front's approvals page) and decides with toolnode.approve.
//
// The replicas of a cluster share their requests and decisions (approvals_share.go): a
// call asked for on one replica may be approved on another and resumed on a third.

// The node's tools for approvers, listed only when the access file has approval rules.
const (
	ApprovalsToolName = "toolnode.approvals"
	ApproveToolName   = "toolnode.approve"
)

// Kinds of the errors of calls that need approval.
const (
	KindNeedsApproval = "needs_approval"
	KindRefused       = "refused"
)

// Guard is what the access file says of approvals, for one caller. The front sets it on
// each request from the caller's identity.
type Guard struct {
	// Caller names the caller: the access file's client, or "sub:<subject>" for an OAuth
	// subject with no client.
	Caller string
	// Version is the access file's version (access.Policy.Version).
	Version string
	// Rule returns who approves the calls of tool and how long a request and an approval
	// stand; false when the tool's calls need no approval.
	Rule func(tool string) (approvers []string, ttl time.Duration, ok bool)
	// Approves reports whether the caller is one of approvers.
	Approves func(approvers []string) bool
}

// ApprovalEvent is something that happened to a request for approval: the audit log
// records each.
type ApprovalEvent struct {
	// What is one of the Approval* outcomes.
	What string
	// ID names the request.
	ID string
	// Caller, Tool and Arguments are the call's; By is the approver, when one decided.
	Caller, Tool, By string
	Arguments        json.RawMessage
}

// What happened to a request for approval.
const (
	ApprovalRequested = "approval_requested"
	ApprovalApproved  = "approved"
	ApprovalRefused   = "approval_refused"
	ApprovalExpired   = "approval_expired"
	// ApprovalWithdrawn is a request its caller withdrew (it declined to wait).
	ApprovalWithdrawn = "approval_withdrawn"
)

// MaxApprovals bounds the requests for approval a node holds at once, waiting or decided:
// past it, a guarded call is refused rather than asking, so that a caller cannot fill the
// node's memory with requests nobody decides.
const MaxApprovals = 4096

// approval is one request for approval, waiting, approved or refused.
type approval struct {
	PendingApproval
	State     string `json:"state"` // waiting, approved, refused
	By        string `json:"by,omitempty"`
	Reason    string `json:"reason,omitempty"`
	approvers []string
	ttl       time.Duration
	// done is closed once the request leaves "waiting", or is dropped: the calls waiting
	// on it look again.
	done chan struct{}
	// gone says why the request was dropped ("" while held), for a call that waited on it.
	gone string
}

// settled closes a.done, once; the caller holds the store's lock.
func (a *approval) settled() {
	select {
	case <-a.done:
	default:
		close(a.done)
	}
}

// snapshot is a copy of a for an answer, read outside the store's lock.
func (a *approval) snapshot() *approval {
	c := *a
	c.done = nil
	return &c
}

// key binds an approval to one call.
func (a *approval) key() string {
	return a.Caller + "\x00" + a.Tool + "\x00" + a.Digest + "\x00" + a.Version
}

// approvals holds the requests for approval of one node.
type approvals struct {
	mu     sync.Mutex
	byID   map[string]*approval
	byCall map[string]*approval
	on     bool                // some rule exists: the approvers' tools are listed
	notify func(ApprovalEvent) // nil: nobody is told
	now    func() time.Time
	// share tells the other replicas of a cluster of every change; nil outside one.
	share func(SharedApproval)
	// dropped are the ids of requests dropped here, until their expiry: a replica's late
	// or repeated word of one does not bring it back (an approval used is used).
	dropped map[string]time.Time
}

// SetApprovals lists the approvers' tools (on: the access file has approval rules) and
// says whom to tell of every request, approval, refusal and expiry.
func (n *Node) SetApprovals(on bool, notify func(ApprovalEvent)) {
	n.approvals.mu.Lock()
	changed := n.approvals.on != on
	n.approvals.on, n.approvals.notify = on, notify
	n.approvals.mu.Unlock()
	if changed {
		n.rebuild()
	}
}

func (s *approvals) tell(ev ApprovalEvent) {
	if s.notify != nil {
		s.notify(ev)
	}
}

func (s *approvals) clock() time.Time {
	if s.now != nil {
		return s.now()
	}
	return time.Now()
}

// argumentsDigest is the SHA-256 of the arguments as canonical JSON: the same arguments in
// another order or spacing are the same call.
func argumentsDigest(args json.RawMessage) string {
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	if c, err := pin.Canonical(args); err == nil {
		args = c
	}
	sum := sha256.Sum256(args)
	return hex.EncodeToString(sum[:])
}

// admit decides whether the call of tool with args under g may run now: nil when it needs
// no approval or has one, which it uses up; otherwise the error that answers the call.
func (n *Node) admit(g *Guard, tool string, args json.RawMessage) *ExecError {
	x, _ := n.admitCall(g, tool, args)
	return x
}

// admitCall is admit, and when the call needs an approval not given yet, the request for
// it, which a call that can wait waits on (approvals_wait.go).
func (n *Node) admitCall(g *Guard, tool string, args json.RawMessage) (*ExecError, *approval) {
	if g == nil || g.Rule == nil {
		return nil, nil
	}
	approvers, ttl, ok := g.Rule(tool)
	if !ok {
		return nil, nil
	}
	s := &n.approvals
	call := &approval{PendingApproval: PendingApproval{Caller: g.Caller, Tool: tool, Arguments: args, Digest: argumentsDigest(args), Version: g.Version},
		State: "waiting", approvers: approvers, ttl: ttl, done: make(chan struct{})}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	now := s.clock()
	a := s.byCall[call.key()]
	if a != nil && !now.Before(a.Expires) {
		s.expire(a)
		if a.State == "approved" {
			return &ExecError{Kind: KindRefused, Message: fmt.Sprintf("the approval %s of this call of %s expired at %s; call again to ask for a new one",
				a.ID, tool, a.Expires.UTC().Format(time.RFC3339))}, nil
		}
		a = nil
	}
	if a == nil && len(s.byID) >= MaxApprovals {
		s.sweep(now)
	}
	switch {
	case a == nil && len(s.byID) >= MaxApprovals:
		return &ExecError{Kind: KindRefused, Message: fmt.Sprintf(
			"this call of %s needs approval, and %d requests for approval wait already, the most the node holds (bound approvals.held); call again once some are decided or expired", tool, MaxApprovals)}, nil
	case a == nil:
		var id [9]byte
		_, _ = rand.Read(id[:])
		call.ID, call.Expires = "ap-"+base64.RawURLEncoding.EncodeToString(id[:]), now.Add(ttl)
		s.byID[call.ID], s.byCall[call.key()] = call, call
		s.tell(ApprovalEvent{What: ApprovalRequested, ID: call.ID, Caller: call.Caller, Tool: tool, Arguments: args})
		s.put(call)
		return needsApproval(call, "asked for"), call
	case a.State == "approved":
		s.drop(a, "used by a call") // an approval runs its call once
		return nil, nil
	case a.State == "refused":
		s.drop(a, "refused")
		return refusal(a), nil
	}
	return needsApproval(a, "still waiting for"), a
}

// refusal is the answer to a call its approver refused.
func refusal(a *approval) *ExecError {
	msg := fmt.Sprintf("%s refused this call of %s (request %s)", a.By, a.Tool, a.ID)
	if a.Reason != "" {
		msg += ": " + a.Reason
	}
	return &ExecError{Kind: KindRefused, Message: msg, Details: a.snapshot()}
}

// needsApproval is the answer to a call waiting for a; the caller holds the store's lock.
// A call that can wait (approvals_wait.go) waits on a itself.
func needsApproval(a *approval, state string) *ExecError {
	return &ExecError{Kind: KindNeedsApproval, Details: a.snapshot(), Message: fmt.Sprintf(
		"this call of %s needs approval by %s: request %s is %s a decision until %s (toolnode.approve); once it is approved, call again with the same arguments",
		a.Tool, strings.Join(a.approvers, " or "), a.ID, state, a.Expires.UTC().Format(time.RFC3339))}
}

// init makes the store's maps; the caller holds s.mu.
func (s *approvals) init() {
	if s.byID == nil {
		s.byID, s.byCall, s.dropped = map[string]*approval{}, map[string]*approval{}, map[string]time.Time{}
	}
}

// expire drops a, expired, and tells of it; the caller holds s.mu.
func (s *approvals) expire(a *approval) {
	s.drop(a, "expired")
	s.tell(ApprovalEvent{What: ApprovalExpired, ID: a.ID, Caller: a.Caller, Tool: a.Tool, Arguments: a.Arguments})
}

// sweep forgets the requests expired at now, telling of each; the caller holds s.mu.
func (s *approvals) sweep(now time.Time) {
	for _, a := range s.byID {
		if !now.Before(a.Expires) {
			s.expire(a)
		}
	}
	for id, until := range s.dropped {
		if !now.Before(until) {
			delete(s.dropped, id)
		}
	}
}

// approvalBounds reports the requests for approval held against MaxApprovals.
func (n *Node) approvalBounds() []Bound {
	n.approvals.mu.Lock()
	defer n.approvals.mu.Unlock()
	if !n.approvals.on {
		return nil
	}
	return []Bound{{Name: "approvals.held", Limit: MaxApprovals, Used: int64(len(n.approvals.byID))}}
}

// drop forgets a, why it went kept for the calls waiting on it, and tells the other
// replicas; the caller holds s.mu.
func (s *approvals) drop(a *approval, why string) {
	delete(s.byID, a.ID)
	if s.byCall[a.key()] == a {
		delete(s.byCall, a.key())
	}
	a.gone = why
	a.settled()
	if s.share != nil {
		s.dropped[a.ID] = a.Expires
		s.share(SharedApproval{Dropped: true, ID: a.ID, Expires: a.Expires})
	}
}

// approvalTools are the approvers' tools' entries in tools/list.
func approvalTools() []json.RawMessage {
	return []json.RawMessage{
		json.RawMessage(`{"name":"` + ApprovalsToolName + `","title":"Calls waiting for approval",` +
			`"description":"Lists the calls waiting for your approval: each request's id, the caller, the tool, its arguments and when the request expires. Decide with toolnode.approve.",` +
			`"inputSchema":{"type":"object","properties":{},"additionalProperties":false},` +
			`"annotations":{"readOnlyHint":true,"openWorldHint":false}}`),
		json.RawMessage(`{"name":"` + ApproveToolName + `","title":"Approve or refuse a call",` +
			`"description":"Approves or refuses one call waiting for approval, by its request id (toolnode.approvals lists them). An approval lets the caller make that exact call, with those arguments, once, until the rule's ttl passes.",` +
			`"inputSchema":{"type":"object","properties":{` +
			`"id":{"type":"string","maxLength":64,"description":"The request's id."},` +
			`"approve":{"type":"boolean","description":"true approves, false refuses."},` +
			`"reason":{"type":"string","maxLength":1000,"description":"Why, told to the caller."}},` +
			`"required":["id","approve"],"additionalProperties":false},` +
			`"annotations":{"readOnlyHint":false,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false}}`),
	}
}

// PendingApproval is a call waiting for approval, as its approver is shown it.
type PendingApproval struct {
	// ID names the request.
	ID string `json:"id"`
	// Caller, Tool and Arguments are the call's.
	Caller    string          `json:"caller"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	// Digest is the SHA-256 of the arguments as canonical JSON.
	Digest string `json:"arguments_digest"`
	// Version is the access file's version the request was made under.
	Version string `json:"policy_version"`
	// Expires is when the request lapses without a decision.
	Expires time.Time `json:"expires"`
}

// Pending lists the calls waiting for a decision the caller of g may give, the soonest to
// expire first.
func (n *Node) Pending(g *Guard) []PendingApproval {
	s := &n.approvals
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock()
	out := []PendingApproval{}
	for _, a := range s.byID {
		if a.State == "waiting" && now.Before(a.Expires) && g != nil && g.Approves != nil && g.Approves(a.approvers) {
			out = append(out, a.PendingApproval)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Expires.Before(out[j].Expires) })
	return out
}

// listApprovals serves toolnode.approvals: the waiting requests the caller may decide.
func (n *Node) listApprovals(req *Request) (json.RawMessage, error) {
	waiting := n.Pending(req.Guard)
	structured, err := json.Marshal(map[string]any{"requests": waiting})
	if err != nil {
		return nil, fmt.Errorf("encode approvals: %w", err)
	}
	var sb strings.Builder
	if len(waiting) == 0 {
		sb.WriteString("no call waits for your approval\n")
	}
	for _, a := range waiting {
		fmt.Fprintf(&sb, "%s: %s calls %s with %s (until %s)\n", a.ID, a.Caller, a.Tool, a.Arguments, a.Expires.UTC().Format(time.RFC3339))
	}
	res := mcp.TextResult(sb.String())
	res.StructuredContent = structured
	return json.Marshal(res)
}

// decide serves toolnode.approve.
func (n *Node) decide(req *Request) (json.RawMessage, error) {
	var args struct {
		ID      string `json:"id"`
		Approve *bool  `json:"approve"`
		Reason  string `json:"reason"`
	}
	if err := json.Unmarshal(req.Arguments, &args); err != nil || args.ID == "" || args.Approve == nil {
		return json.Marshal(mcp.ErrorResult("toolnode.approve takes {\"id\": \"ap-...\", \"approve\": true or false, \"reason\": \"...\"}"))
	}
	said, err := n.Decide(req.Guard, args.ID, *args.Approve, args.Reason)
	if err != nil {
		return json.Marshal(mcp.ErrorResult(err.Error()))
	}
	return json.Marshal(mcp.TextResult(said))
}

// Decide approves or refuses the request id, for the caller of g, and says what it did;
// the error says why it could not (no such request waits for this approver, it expired,
// it was decided already).
func (n *Node) Decide(g *Guard, id string, approve bool, reason string) (string, error) {
	s := &n.approvals
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.byID[id]
	switch {
	case a == nil || g == nil || g.Approves == nil || !g.Approves(a.approvers):
		return "", fmt.Errorf("no request %q waits for your approval; toolnode.approvals lists those that do", id)
	case !s.clock().Before(a.Expires):
		s.expire(a)
		return "", fmt.Errorf("request %s expired at %s", a.ID, a.Expires.UTC().Format(time.RFC3339))
	case a.State != "waiting":
		return "", fmt.Errorf("request %s was %s by %s already", a.ID, a.State, a.By)
	}
	s.decideLocked(a, g.Caller, approve, reason)
	return fmt.Sprintf("%s: %s's call of %s is %s", a.ID, a.Caller, a.Tool, a.State), nil
}

// decideLocked approves or refuses a, a waiting request, by the approver by: the calls
// waiting on it look again, the decision is told and shared. The caller holds s.mu.
func (s *approvals) decideLocked(a *approval, by string, approve bool, reason string) {
	a.By, a.Reason = by, reason
	what := ApprovalRefused
	if approve {
		a.State, what = "approved", ApprovalApproved
		a.Expires = s.clock().Add(a.ttl)
	} else {
		a.State = "refused"
	}
	a.settled()
	s.tell(ApprovalEvent{What: what, ID: a.ID, Caller: a.Caller, Tool: a.Tool, By: a.By, Arguments: a.Arguments})
	s.put(a)
}

// callApprovals serves the approvers' tools.
func (n *Node) callApprovals(_ context.Context, req *Request, tool string) (json.RawMessage, error) {
	if tool == ApprovalsToolName {
		return n.listApprovals(req)
	}
	return n.decide(req)
}
