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
// A call without its approval is not sent: it is answered at once with an error result
// (kind needs_approval) naming the request, which waits for a decision until the rule's
// ttl. The approver lists the requests it may decide with toolnode.approvals, and decides
// with toolnode.approve; the caller then calls again with the same arguments.

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
)

// MaxApprovals bounds the requests for approval a node holds at once, waiting or decided:
// past it, a guarded call is refused rather than asking, so that a caller cannot fill the
// node's memory with requests nobody decides.
const MaxApprovals = 4096

// approval is one request for approval, waiting, approved or refused.
type approval struct {
	ID        string          `json:"id"`
	Caller    string          `json:"caller"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	Digest    string          `json:"arguments_digest"`
	Version   string          `json:"policy_version"`
	State     string          `json:"state"` // waiting, approved, refused
	By        string          `json:"by,omitempty"`
	Reason    string          `json:"reason,omitempty"`
	Expires   time.Time       `json:"expires"`
	approvers []string
	ttl       time.Duration
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
	if g == nil || g.Rule == nil {
		return nil
	}
	approvers, ttl, ok := g.Rule(tool)
	if !ok {
		return nil
	}
	s := &n.approvals
	call := &approval{Caller: g.Caller, Tool: tool, Arguments: args, Digest: argumentsDigest(args), Version: g.Version,
		State: "waiting", approvers: approvers, ttl: ttl}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byID == nil {
		s.byID, s.byCall = map[string]*approval{}, map[string]*approval{}
	}
	now := s.clock()
	a := s.byCall[call.key()]
	if a != nil && !now.Before(a.Expires) {
		s.drop(a)
		s.tell(ApprovalEvent{What: ApprovalExpired, ID: a.ID, Caller: a.Caller, Tool: a.Tool, Arguments: a.Arguments})
		if a.State == "approved" {
			return &ExecError{Kind: KindRefused, Message: fmt.Sprintf("the approval %s of this call of %s expired at %s; call again to ask for a new one",
				a.ID, tool, a.Expires.UTC().Format(time.RFC3339))}
		}
		a = nil
	}
	if a == nil && len(s.byID) >= MaxApprovals {
		s.sweep(now)
	}
	switch {
	case a == nil && len(s.byID) >= MaxApprovals:
		return &ExecError{Kind: KindRefused, Message: fmt.Sprintf(
			"this call of %s needs approval, and %d requests for approval wait already, the most the node holds (bound approvals.held); call again once some are decided or expired", tool, MaxApprovals)}
	case a == nil:
		var id [9]byte
		_, _ = rand.Read(id[:])
		call.ID, call.Expires = "ap-"+base64.RawURLEncoding.EncodeToString(id[:]), now.Add(ttl)
		s.byID[call.ID], s.byCall[call.key()] = call, call
		s.tell(ApprovalEvent{What: ApprovalRequested, ID: call.ID, Caller: call.Caller, Tool: tool, Arguments: args})
		return needsApproval(call, "asked for")
	case a.State == "approved":
		s.drop(a) // an approval runs its call once
		return nil
	case a.State == "refused":
		s.drop(a)
		msg := fmt.Sprintf("%s refused this call of %s (request %s)", a.By, tool, a.ID)
		if a.Reason != "" {
			msg += ": " + a.Reason
		}
		return &ExecError{Kind: KindRefused, Message: msg, Details: a}
	}
	return needsApproval(a, "still waiting for")
}

func needsApproval(a *approval, state string) *ExecError {
	return &ExecError{Kind: KindNeedsApproval, Details: a, Message: fmt.Sprintf(
		"this call of %s needs approval by %s: request %s is %s a decision until %s (toolnode.approve); once it is approved, call again with the same arguments",
		a.Tool, strings.Join(a.approvers, " or "), a.ID, state, a.Expires.UTC().Format(time.RFC3339))}
}

// sweep forgets the requests expired at now, telling of each; the caller holds s.mu.
func (s *approvals) sweep(now time.Time) {
	for _, a := range s.byID {
		if !now.Before(a.Expires) {
			s.drop(a)
			s.tell(ApprovalEvent{What: ApprovalExpired, ID: a.ID, Caller: a.Caller, Tool: a.Tool, Arguments: a.Arguments})
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

// drop forgets a; the caller holds s.mu.
func (s *approvals) drop(a *approval) {
	delete(s.byID, a.ID)
	if s.byCall[a.key()] == a {
		delete(s.byCall, a.key())
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

// listApprovals serves toolnode.approvals: the waiting requests the caller may decide.
func (n *Node) listApprovals(req *Request) (json.RawMessage, error) {
	s := &n.approvals
	s.mu.Lock()
	now := s.clock()
	waiting := []*approval{}
	for _, a := range s.byID {
		if a.State == "waiting" && now.Before(a.Expires) && req.Guard != nil && req.Guard.Approves != nil && req.Guard.Approves(a.approvers) {
			waiting = append(waiting, a)
		}
	}
	sort.Slice(waiting, func(i, j int) bool { return waiting[i].Expires.Before(waiting[j].Expires) })
	structured, err := json.Marshal(map[string]any{"requests": waiting})
	s.mu.Unlock()
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
	s := &n.approvals
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.byID[args.ID]
	switch {
	case a == nil || req.Guard == nil || req.Guard.Approves == nil || !req.Guard.Approves(a.approvers):
		return json.Marshal(mcp.ErrorResult(fmt.Sprintf("no request %q waits for your approval; toolnode.approvals lists those that do", args.ID)))
	case !s.clock().Before(a.Expires):
		s.drop(a)
		s.tell(ApprovalEvent{What: ApprovalExpired, ID: a.ID, Caller: a.Caller, Tool: a.Tool, Arguments: a.Arguments})
		return json.Marshal(mcp.ErrorResult(fmt.Sprintf("request %s expired at %s", a.ID, a.Expires.UTC().Format(time.RFC3339))))
	case a.State != "waiting":
		return json.Marshal(mcp.ErrorResult(fmt.Sprintf("request %s was %s by %s already", a.ID, a.State, a.By)))
	}
	a.By, a.Reason = req.Guard.Caller, args.Reason
	what := ApprovalRefused
	if *args.Approve {
		a.State, what = "approved", ApprovalApproved
		a.Expires = s.clock().Add(a.ttl)
	} else {
		a.State = "refused"
	}
	s.tell(ApprovalEvent{What: what, ID: a.ID, Caller: a.Caller, Tool: a.Tool, By: a.By, Arguments: a.Arguments})
	return json.Marshal(mcp.TextResult(fmt.Sprintf("%s: %s's call of %s is %s", a.ID, a.Caller, a.Tool, a.State)))
}

// callApprovals serves the approvers' tools.
func (n *Node) callApprovals(_ context.Context, req *Request, tool string) (json.RawMessage, error) {
	if tool == ApprovalsToolName {
		return n.listApprovals(req)
	}
	return n.decide(req)
}
