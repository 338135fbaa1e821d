package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnode/toolnode/runtime/internal/reload"
	"github.com/toolnode/toolnode/runtime/internal/serve"
	"github.com/toolnode/toolnode/runtime/internal/testkit"
	"github.com/toolnode/toolnode/runtime/internal/testkit/nodekit"
)

// waitingAccess is approvalAccess with bank.pid guarded too, under a ttl of one second.
func waitingAccess(t testing.TB) string {
	return approvalAccess(t, map[string]any{"tools": []string{"bank.pid"}, "approvers": []string{"ops"}, "ttl": "1s"})
}

// asker is a client that can be asked to wait: each elicitation it is sent goes to asked,
// and it keeps waiting (accept).
type asker struct{ asked chan *mcp.ElicitParams }

func newAsker() *asker { return &asker{asked: make(chan *mcp.ElicitParams, 8)} }

func (a *asker) options() *mcp.ClientOptions {
	return &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		a.asked <- r.Params
		return &mcp.ElicitResult{Action: "accept"}, nil
	}}
}

// next is the request for approval the client is asked to wait for next.
func (a *asker) next(t *testing.T) (string, string) {
	t.Helper()
	select {
	case p := <-a.asked:
		var ap struct {
			ID string `json:"id"`
		}
		b, _ := json.Marshal(p.Meta["io.toolnode/approval"])
		if json.Unmarshal(b, &ap) != nil || ap.ID == "" {
			t.Fatalf("the elicitation names no request for approval: %s", b)
		}
		return ap.ID, p.Message
	case <-time.After(30 * time.Second):
		t.Fatal("the caller was not asked to wait for the approval")
	}
	return "", ""
}

// callAsync calls tool in the background; its result comes on the channel.
func callAsync(s *mcp.ClientSession, tool string, args map[string]any) <-chan *mcp.CallToolResult {
	out := make(chan *mcp.CallToolResult, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			res = &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "call failed: " + err.Error()}}}
		}
		out <- res
	}()
	return out
}

func await(t *testing.T, results <-chan *mcp.CallToolResult) *mcp.CallToolResult {
	t.Helper()
	select {
	case res := <-results:
		return res
	case <-time.After(60 * time.Second):
		t.Fatal("the call did not end")
	}
	return nil
}

// A client that can be asked is asked to wait, and its call waits for the decision: in
// the 2025 era by an elicitation on its session, in the 2026 era by an input_required
// answer it calls again with. Approved, the call runs with the arguments approved, once;
// another argument asks anew; a refusal and an expiry end the waiting call, saying so.
func TestAGuardedCallWaitsForItsApproval(t *testing.T) {
	auditFile := filepath.Join(t.TempDir(), "audit.jsonl")
	n := nodekit.StartFakes(t, serve.Config{Source: reload.Source{}, AccessFile: waitingAccess(t), AuditFile: auditFile,
		HTTP: nodekit.Loopback}, testkit.Fake{Name: "bank"})
	n.Ready(t)
	ops := nodekit.ConnectWithToken(t, n.URL, "token-ops")
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			a := newAsker()
			desk := nodekit.ConnectAs(t, n.URL, "token-desk", version, a.options())

			ran := callAsync(desk, "bank.echo", map[string]any{"text": "pay 5"})
			first, message := a.next(t)
			if !strings.Contains(message, "approval by ops") || !strings.Contains(message, `"pay 5"`) {
				t.Errorf("the caller is not told what its call waits for: %q", message)
			}
			if _, text := callError(t, ops, "toolnode.approvals", nil); !strings.Contains(text, first+": desk calls bank.echo") {
				t.Errorf("the approver does not see the waiting call: %q", text)
			}
			if e, text := callError(t, ops, "toolnode.approve", map[string]any{"id": first, "approve": true}); e != nil {
				t.Fatalf("approving: %v %q", e, text)
			}
			if res := await(t, ran); res.IsError || nodekit.ResultText(res) != "bank:pay 5" {
				t.Fatalf("the approved call did not run with its arguments: %q", nodekit.ResultText(res))
			}

			refused := callAsync(desk, "bank.echo", map[string]any{"text": "pay 5"})
			again, _ := a.next(t)
			if again == first {
				t.Error("an approval ran its call twice")
			}
			if e, text := callError(t, ops, "toolnode.approve", map[string]any{"id": again, "approve": false, "reason": "over the limit"}); e != nil {
				t.Fatalf("refusing: %v %q", e, text)
			}
			if res := await(t, refused); !res.IsError || !strings.Contains(nodekit.ResultText(res), "over the limit") {
				t.Errorf("the refusal did not reach the waiting caller: %q", nodekit.ResultText(res))
			}

			changed := callAsync(desk, "bank.echo", map[string]any{"text": "pay 6"})
			id, _ := a.next(t)
			if id == first || id == again {
				t.Error("a changed argument was taken as approved")
			}
			if _, text := callError(t, ops, "toolnode.approvals", nil); !strings.Contains(text, `"pay 6"`) {
				t.Errorf("the changed call waits for no approval: %q", text)
			}
			callError(t, ops, "toolnode.approve", map[string]any{"id": id, "approve": false})
			if res := await(t, changed); !res.IsError {
				t.Errorf("a refused call ran: %q", nodekit.ResultText(res))
			}

			expired := callAsync(desk, "bank.pid", nil)
			a.next(t)
			if res := await(t, expired); !res.IsError || !strings.Contains(nodekit.ResultText(res), "expired") {
				t.Errorf("a call whose request expired was not refused as expired: %q", nodekit.ResultText(res))
			}
		})
	}
	// A client that declines to wait withdraws its request.
	decliner := nodekit.ConnectAs(t, n.URL, "token-desk", "2025-11-25", &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "decline"}, nil
		}})
	if res := await(t, callAsync(decliner, "bank.echo", map[string]any{"text": "pay 7"})); !res.IsError || !strings.Contains(nodekit.ResultText(res), "withdrawn") {
		t.Errorf("a call whose client declined to wait: %q", nodekit.ResultText(res))
	}
	if _, text := callError(t, ops, "toolnode.approvals", nil); strings.Contains(text, "pay 7") {
		t.Errorf("a withdrawn request still waits: %q", text)
	}
	testkit.Eventually(t, 30*time.Second, func() string {
		b, _ := os.ReadFile(auditFile)
		for _, want := range []string{`"outcome":"approval_requested"`, `"outcome":"approved"`, `"outcome":"approval_refused"`,
			`"outcome":"approval_expired"`, `"outcome":"approval_withdrawn"`, `"outcome":"ok"`} {
			if !strings.Contains(string(b), want) {
				return "the audit log has no " + want + ":\n" + string(b)
			}
		}
		return ""
	})
}

// BenchmarkWaitingApprovalRoundTrip is an approval's round trip as two clients over HTTP
// see it: a 2026-07-28 client's guarded call is answered input_required, the client calls
// again to wait, the approver approves with toolnode.approve, and the call runs and
// answers. The round trip ends when the caller has its result.
func BenchmarkWaitingApprovalRoundTrip(b *testing.B) {
	n := nodekit.StartFakes(b, serve.Config{Source: reload.Source{}, AccessFile: waitingAccess(b), HTTP: nodekit.Loopback},
		testkit.Fake{Name: "bank"})
	n.Ready(b)
	ops := nodekit.ConnectWithToken(b, n.URL, "token-ops")
	asked := make(chan string, 1)
	desk := nodekit.ConnectAs(b, n.URL, "token-desk", "2026-07-28", &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			m, _ := r.Params.Meta["io.toolnode/approval"].(map[string]any)
			id, _ := m["id"].(string)
			asked <- id
			return &mcp.ElicitResult{Action: "accept"}, nil
		}})
	ctx := context.Background()
	for i := 0; b.Loop(); i++ {
		done := make(chan error, 1)
		go func() {
			res, err := desk.CallTool(ctx, &mcp.CallToolParams{Name: "bank.echo", Arguments: map[string]any{"text": fmt.Sprint("pay ", i)}})
			if err == nil && res.IsError {
				err = fmt.Errorf("%s", nodekit.ResultText(res))
			}
			done <- err
		}()
		id := <-asked
		res, err := ops.CallTool(ctx, &mcp.CallToolParams{Name: "toolnode.approve", Arguments: map[string]any{"id": id, "approve": true}})
		if err != nil || res.IsError {
			b.Fatalf("approving: %v %v", err, res)
		}
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	}
}
