package node

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// An approval stands until its ttl: past it, the call it approved is refused as expired and
// the expiry told, and the next call asks anew. Only an approver may decide, and a
// request is bound to its caller, arguments (in any order of their members) and policy.
func TestAnExpiredApprovalIsRefusedAndToldOf(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	var n Node
	var events []string
	n.approvals.now = func() time.Time { return now }
	n.approvals.notify = func(ev ApprovalEvent) { events = append(events, ev.What+" "+ev.ID) }
	guard := func(caller, version string) *Guard {
		return &Guard{Caller: caller, Version: version,
			Rule: func(tool string) ([]string, time.Duration, bool) {
				return []string{"ops"}, time.Minute, tool == "bank.pay"
			},
			Approves: func(approvers []string) bool { return caller == "ops" }}
	}
	desk, ops := guard("desk", "v1"), guard("ops", "v1")
	args := json.RawMessage(`{"to":"x","amount":5}`)
	if e := n.admit(desk, "bank.read", args); e != nil {
		t.Fatalf("an unguarded tool needs approval: %v", e)
	}
	e := n.admit(desk, "bank.pay", args)
	if e == nil || e.Kind != KindNeedsApproval {
		t.Fatalf("a guarded call ran: %v", e)
	}
	id := e.Details.(*approval).ID
	if e := n.admit(desk, "bank.pay", json.RawMessage(`{ "amount": 5, "to": "x" }`)); e == nil || e.Details.(*approval).ID != id {
		t.Errorf("the same arguments in another order are another call: %v", e)
	}
	if res, _ := n.decide(&Request{Guard: desk, Arguments: json.RawMessage(`{"id":"` + id + `","approve":true}`)}); !strings.Contains(string(res), "no request") {
		t.Errorf("a caller who is no approver decided: %s", res)
	}
	if res, _ := n.decide(&Request{Guard: ops, Arguments: json.RawMessage(`{"id":"` + id + `","approve":true}`)}); !strings.Contains(string(res), "approved") {
		t.Fatalf("approving: %s", res)
	}
	if e := n.admit(guard("desk", "v2"), "bank.pay", args); e == nil || e.Kind != KindNeedsApproval {
		t.Errorf("an approval stood under another access file: %v", e)
	}
	if e := n.admit(guard("other", "v1"), "bank.pay", args); e == nil || e.Kind != KindNeedsApproval {
		t.Errorf("an approval stood for another caller: %v", e)
	}
	now = now.Add(time.Minute)
	if e := n.admit(desk, "bank.pay", args); e == nil || e.Kind != KindRefused || !strings.Contains(e.Message, "expired") {
		t.Errorf("an expired approval ran its call: %v", e)
	}
	if !strings.Contains(strings.Join(events, ","), ApprovalExpired+" "+id) {
		t.Errorf("the expiry was not told: %v", events)
	}
	if e := n.admit(desk, "bank.pay", args); e == nil || e.Kind != KindNeedsApproval || e.Details.(*approval).ID == id {
		t.Errorf("after the expiry, the call did not ask anew: %v", e)
	}
}

// The requests a node holds are bounded: past the bound a guarded call is refused, saying
// so, until expired requests make room.
func TestRequestsForApprovalAreBounded(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	var n Node
	n.approvals.now = func() time.Time { return now }
	desk := &Guard{Caller: "desk", Version: "v1", Rule: func(string) ([]string, time.Duration, bool) { return []string{"ops"}, time.Minute, true }}
	for i := range MaxApprovals {
		if e := n.admit(desk, "bank.pay", json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))); e == nil || e.Kind != KindNeedsApproval {
			t.Fatalf("request %d: %v", i, e)
		}
	}
	if e := n.admit(desk, "bank.pay", json.RawMessage(`{"n":-1}`)); e == nil || e.Kind != KindRefused || !strings.Contains(e.Message, "approvals.held") {
		t.Fatalf("past the bound: %v", e)
	}
	now = now.Add(time.Minute)
	if e := n.admit(desk, "bank.pay", json.RawMessage(`{"n":-1}`)); e == nil || e.Kind != KindNeedsApproval || len(n.approvals.byID) != 1 {
		t.Errorf("expired requests made no room: %v, %d held", e, len(n.approvals.byID))
	}
}

// BenchmarkApprovalRoundTrip is one approval's round trip inside the node: a guarded call
// asks for approval, the approver approves it, the call made again is let through.
func BenchmarkApprovalRoundTrip(b *testing.B) {
	var n Node
	rule := func(tool string) ([]string, time.Duration, bool) { return []string{"ops"}, time.Minute, true }
	desk := &Guard{Caller: "desk", Version: "v1", Rule: rule}
	ops := &Guard{Caller: "ops", Version: "v1", Rule: rule, Approves: func([]string) bool { return true }}
	args := json.RawMessage(`{"to":"ACME","amount":500,"memo":"invoice 2026-12"}`)
	for b.Loop() {
		e := n.admit(desk, "bank.transfer", args)
		if e == nil || e.Kind != KindNeedsApproval {
			b.Fatal(e)
		}
		decision := json.RawMessage(`{"id":"` + e.Details.(*approval).ID + `","approve":true}`)
		if _, err := n.decide(&Request{Guard: ops, Arguments: decision}); err != nil {
			b.Fatal(err)
		}
		if e := n.admit(desk, "bank.transfer", args); e != nil {
			b.Fatal(e)
		}
	}
}

// What replicas tell each other of a request only moves it forward: a decision is not
// undone by a late word of the request waiting, and a request used is not brought back
// by a late word of its approval, so that it cannot run its call twice.
func TestSharedApprovalsOnlyMoveForward(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	var n Node
	n.approvals.now = func() time.Time { return now }
	var told []SharedApproval
	n.ShareApprovals(func(sa SharedApproval) { told = append(told, sa) })
	desk := &Guard{Caller: "desk", Version: "v1", Rule: func(string) ([]string, time.Duration, bool) { return []string{"ops"}, time.Minute, true }}
	args := json.RawMessage(`{"to":"x"}`)
	e, _ := n.admitCall(desk, "bank.pay", args)
	if e == nil || len(told) != 1 || told[0].State != "waiting" {
		t.Fatalf("the request was not shared: %v %+v", e, told)
	}
	waiting := told[0]
	approved := waiting
	approved.State, approved.By = "approved", "ops"
	n.ApplyApproval(approved)
	n.ApplyApproval(waiting) // late
	if e := n.admit(desk, "bank.pay", args); e != nil {
		t.Fatalf("an approval given on another replica did not let the call run: %v", e)
	}
	if last := told[len(told)-1]; !last.Dropped || last.ID != waiting.ID {
		t.Errorf("the use of the approval was not shared: %+v", last)
	}
	n.ApplyApproval(approved) // late, after its use
	if e := n.admit(desk, "bank.pay", args); e == nil || e.Kind != KindNeedsApproval {
		t.Errorf("an approval used ran its call again: %v", e)
	}

	var other Node // a replica that hears of a request and its use
	other.approvals.now = n.approvals.now
	other.ApplyApproval(approved)
	other.ApplyApproval(SharedApproval{Dropped: true, ID: approved.ID, Expires: approved.Expires})
	other.ApplyApproval(approved)
	if e := other.admit(desk, "bank.pay", args); e == nil || e.Kind != KindNeedsApproval {
		t.Errorf("a replica ran a call whose approval was used on another: %v", e)
	}
}
