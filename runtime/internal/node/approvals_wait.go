package node

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/toolnode/toolnode/sdk-go/mcp"
	"github.com/toolnode/toolnode/sdk-go/rawjson"
)

// Waiting for an approval. A guarded call of a client that can be asked is not answered
// with needs_approval: the client is sent an elicitation saying what the call waits for
// (which the front turns into the task's input_required status for a task, an
// input_required result for a stateless client, and a request on the session for a
// session's client), and the call waits for the decision. Approved, it runs, once; refused
// or expired, it is answered so; the client declining the elicitation withdraws the
// request. The client's answer is not the approval: accepting only says it keeps waiting,
// and a decision that comes first withdraws the question.

// ApprovalMetaKey names the request for approval in the _meta of the elicitation a waiting
// call's client is sent.
const ApprovalMetaKey = "io.toolnode/approval"

// canAsk reports whether the client of x can be asked to wait: it declared the
// elicitation capability.
func canAsk(x Exchange) bool {
	_, has := rawjson.Member(x.Caller().Caps, "elicitation")
	return has
}

// askToWait is the elicitation that tells a waiting call's client what it waits for; the
// caller holds the store's lock.
func askToWait(a *approval) json.RawMessage {
	meta, _ := json.Marshal(map[string]any{ApprovalMetaKey: a})
	b, _ := json.Marshal(mcp.ElicitParams{
		Message: fmt.Sprintf("The call of %s with %s waits for approval by %s (request %s, until %s). It runs once approved. "+
			"Accept to keep waiting; decline to withdraw the call.",
			a.Tool, a.Arguments, strings.Join(a.approvers, " or "), a.ID, a.Expires.UTC().Format(time.RFC3339)),
		RequestedSchema: json.RawMessage(`{"type":"object","properties":{}}`),
		Meta:            meta,
	})
	return b
}

// awaitApproval holds a call, whose request for approval a waits, until it may run (nil,
// nil: its approval is used up) or may not (the answer); err when the call ended first.
func (n *Node) awaitApproval(ctx context.Context, x Exchange, a *approval) (*ExecError, error) {
	s := &n.approvals
	s.mu.Lock()
	params, done, expires := askToWait(a), a.done, a.Expires
	s.mu.Unlock()
	askCtx, stopAsking := context.WithCancel(ctx)
	defer stopAsking()
	answered := make(chan askAnswer, 1)
	go func() {
		res, err := x.Ask(askCtx, mcp.MethodElicitation, params)
		answered <- askAnswer{res, err}
	}()
	timer := time.NewTimer(expires.Sub(s.clock()))
	defer timer.Stop()
	for {
		select {
		case <-done:
		case <-timer.C:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		case ans := <-answered:
			answered = nil // asked once: waiting on needs no more answers
			if ans.err != nil {
				if ctx.Err() != nil {
					return nil, context.Cause(ctx)
				}
				x := needsApprovalOf(s, a)
				x.Message = fmt.Sprintf("the client could not be asked to wait for approval (%v); %s", ans.err, x.Message)
				return x, nil
			}
			var r mcp.ElicitResult
			if json.Unmarshal(ans.res, &r) != nil || r.Action != mcp.ElicitAccept {
				return s.withdraw(a), nil
			}
			continue
		}
		if x, over := s.resolve(a); over {
			return x, nil
		}
		s.mu.Lock()
		expires = a.Expires
		s.mu.Unlock()
		timer.Reset(max(expires.Sub(s.clock()), time.Millisecond))
	}
}

type askAnswer struct {
	res json.RawMessage
	err error
}

func needsApprovalOf(s *approvals, a *approval) *ExecError {
	s.mu.Lock()
	defer s.mu.Unlock()
	return needsApproval(a, "waiting for")
}

// resolve says what became of a, the request a call waits on: nil and true when it was
// approved (the approval is used up now), the answer and true when it was refused, dropped
// or has expired, false while it waits.
func (s *approvals) resolve(a *approval) (*ExecError, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.byID[a.ID] != a:
		return &ExecError{Kind: KindRefused, Details: a.snapshot(), Message: fmt.Sprintf(
			"request %s for this call of %s was %s before the call could use it; call again to ask anew", a.ID, a.Tool, a.gone)}, true
	case !s.clock().Before(a.Expires):
		s.expire(a)
		return &ExecError{Kind: KindRefused, Details: a.snapshot(), Message: fmt.Sprintf(
			"request %s for this call of %s expired at %s without an approval in force; call again to ask anew", a.ID, a.Tool, a.Expires.UTC().Format(time.RFC3339))}, true
	case a.State == "approved":
		s.drop(a, "used by a call")
		return nil, true
	case a.State == "refused":
		s.drop(a, "refused")
		return refusal(a), true
	}
	return nil, false
}

// withdraw drops a, which its caller declined to wait for, and tells of it.
func (s *approvals) withdraw(a *approval) *ExecError {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byID[a.ID] == a {
		s.drop(a, "withdrawn")
		s.tell(ApprovalEvent{What: ApprovalWithdrawn, ID: a.ID, Caller: a.Caller, Tool: a.Tool, Arguments: a.Arguments})
	}
	return &ExecError{Kind: KindRefused, Details: a.snapshot(), Message: fmt.Sprintf(
		"the call of %s was withdrawn: its client declined to wait for approval (request %s)", a.Tool, a.ID)}
}
