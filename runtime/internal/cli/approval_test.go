package cli_test

import (
	"encoding/json"
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

// approvalAccess is an access file: desk calls bank's tools, bank.echo only once ops has
// approved the call; more are more approval rules.
func approvalAccess(t testing.TB, more ...map[string]any) string {
	file := map[string]any{
		"clients": []map[string]any{
			{"name": "desk", "token_sha256": testkit.TokenSHA("token-desk"), "allow": []string{"bank.*"}},
			{"name": "ops", "token_sha256": testkit.TokenSHA("token-ops"), "allow": []string{"bank.pid"}},
		},
		"approvals": append([]map[string]any{{"tools": []string{"bank.echo"}, "approvers": []string{"ops"}, "ttl": "1h"}}, more...),
	}
	b, _ := json.Marshal(file)
	path := filepath.Join(t.TempDir(), "access.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// callError calls tool and returns its error result's structured error (nil when the call
// succeeded) and its text.
func callError(t *testing.T, s *mcp.ClientSession, tool string, args map[string]any) (map[string]any, string) {
	t.Helper()
	res, err := nodekit.CallWithin(t, s, 30*time.Second, tool, args)
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	if !res.IsError {
		return nil, nodekit.ResultText(res)
	}
	var sc struct {
		Error map[string]any `json:"error"`
	}
	b, _ := json.Marshal(res.StructuredContent)
	_ = json.Unmarshal(b, &sc)
	return sc.Error, nodekit.ResultText(res)
}

// requestID is the id of the request for approval an error names.
func requestID(t *testing.T, e map[string]any) string {
	t.Helper()
	d, _ := e["details"].(map[string]any)
	id, _ := d["id"].(string)
	if e["kind"] != "needs_approval" || id == "" {
		t.Fatalf("want a needs_approval error naming its request, got %v", e)
	}
	return id
}

// A guarded call runs only with an approval of that exact call: the approver sees the
// caller, the tool and the arguments through the node, the call runs once, a changed
// argument needs an approval of its own, a refusal reaches the caller with its reason, and
// every request and decision is an audit line.
func TestAGuardedCallRunsOnceWithTheApprovalOfThoseExactArguments(t *testing.T) {
	auditFile := filepath.Join(t.TempDir(), "audit.jsonl")
	n := nodekit.StartFakes(t, serve.Config{Source: reload.Source{}, AccessFile: approvalAccess(t), AuditFile: auditFile, AuditArgs: true,
		HTTP: nodekit.Loopback}, testkit.Fake{Name: "bank"})
	n.Ready(t)
	desk := nodekit.ConnectWithToken(t, n.URL, "token-desk")
	ops := nodekit.ConnectWithToken(t, n.URL, "token-ops")

	e, text := callError(t, desk, "bank.echo", map[string]any{"text": "pay 5"})
	first := requestID(t, e)
	if !strings.Contains(text, "needs approval by ops") {
		t.Errorf("the caller is not told who approves: %q", text)
	}
	if e, _ := callError(t, desk, "bank.echo", map[string]any{"text": "pay 5"}); requestID(t, e) != first {
		t.Errorf("the same call asked again made another request: %v", e)
	}
	if _, text := callError(t, ops, "toolnode.approvals", nil); !strings.Contains(text, first) || !strings.Contains(text, "desk calls bank.echo") || !strings.Contains(text, `"pay 5"`) {
		t.Errorf("the approver does not see the call: %q", text)
	}
	if e, text := callError(t, desk, "toolnode.approve", map[string]any{"id": first, "approve": true}); e == nil && !strings.Contains(text, "no request") {
		t.Errorf("the caller approved its own call: %q", text)
	}
	if e, text := callError(t, ops, "toolnode.approve", map[string]any{"id": first, "approve": true}); e != nil || !strings.Contains(text, "approved") {
		t.Fatalf("approving: %v %q", e, text)
	}

	e, _ = callError(t, desk, "bank.echo", map[string]any{"text": "pay 6"})
	changed := requestID(t, e)
	if changed == first {
		t.Error("a changed argument was taken as approved")
	}
	if e, text := callError(t, desk, "bank.echo", map[string]any{"text": "pay 5"}); e != nil || !strings.Contains(text, "pay 5") {
		t.Errorf("the approved call did not run: %v %q", e, text)
	}
	if e, _ := callError(t, desk, "bank.echo", map[string]any{"text": "pay 5"}); requestID(t, e) == first {
		t.Error("an approval ran its call twice")
	}

	if e, _ := callError(t, desk, "toolnode.execute", map[string]any{"name": "bank.echo", "arguments": map[string]any{"text": "pay 5"}}); requestID(t, e) == "" {
		t.Error("toolnode.execute went round the approval")
	}
	if e, _ := callError(t, ops, "toolnode.approve", map[string]any{"id": changed, "approve": false, "reason": "over the limit"}); e != nil {
		t.Fatalf("refusing: %v", e)
	}
	if e, text := callError(t, desk, "bank.echo", map[string]any{"text": "pay 6"}); e == nil || e["kind"] != "refused" || !strings.Contains(text, "over the limit") {
		t.Errorf("the refusal did not reach the caller: %v %q", e, text)
	}

	testkit.Eventually(t, 30*time.Second, func() string {
		b, _ := os.ReadFile(auditFile)
		for _, want := range []string{`"outcome":"approval_requested"`, `"outcome":"approved"`, `"approver":"ops"`, `"outcome":"approval_refused"`,
			`"outcome":"needs_approval"`, `"outcome":"refused"`, `"approval":"` + first + `"`} {
			if !strings.Contains(string(b), want) {
				return "the audit log has no " + want + ":\n" + string(b)
			}
		}
		return ""
	})
}
