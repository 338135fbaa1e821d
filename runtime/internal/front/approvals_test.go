package front_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolnode/toolnode/runtime/internal/testkit"
)

// A guarded call of a client with the tasks extension waits as a task in input_required,
// asking the client to wait for the approval; approved by another client, the task goes
// on to the tool's result without the client answering.
func TestAGuardedCallWaitsAsATaskInInputRequired(t *testing.T) {
	g := startGuarded(t, nil)
	b, _ := json.Marshal(map[string]any{
		"clients": []map[string]any{
			{"name": "a", "token_sha256": testkit.TokenSHA("token-a"), "allow": []string{"pub.*"}},
			{"name": "b", "token_sha256": testkit.TokenSHA("token-b"), "allow": []string{"sec.*"}},
		},
		"approvals": []map[string]any{{"tools": []string{"pub.echo"}, "approvers": []string{"b"}}},
	})
	if err := os.WriteFile(filepath.Join(g.dir, "access.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := g.access.Reload(); err != nil {
		t.Fatal(err)
	}
	g.srv.Node().SetApprovals(true, nil)

	a := &taskClient{t: t, url: g.url, token: "token-a"}
	id := a.create("pub.echo", `{"text":"pay 5"}`)
	asked := a.until(id, "input_required", func(r taskAnswer) bool { return r.Result.Status == "input_required" })
	var request string
	for _, r := range asked.Result.InputRequests {
		var ir struct {
			Method string `json:"method"`
			Params struct {
				Message string `json:"message"`
				Meta    map[string]struct {
					ID string `json:"id"`
				} `json:"_meta"`
			} `json:"params"`
		}
		_ = json.Unmarshal(r, &ir)
		request = ir.Params.Meta["io.toolnode/approval"].ID
		if ir.Method != "elicitation/create" || request == "" || !strings.Contains(ir.Params.Message, "approval by b") {
			t.Fatalf("the task asks %s", r)
		}
	}
	approver := &taskClient{t: t, url: g.url, token: "token-b", plain: true}
	if got := readAnswer(t, approver.post("tools/call", `{"name":"toolnode.approve","arguments":{"id":"`+request+`","approve":true}}`)); got.Result.Result != nil && got.Result.Result.IsError || !strings.Contains(got.Result.Content[0].Text, "approved") {
		t.Fatalf("approving: %+v", got)
	}
	done := a.until(id, "completed", terminal)
	if done.Result.Status != "completed" || done.Result.Result == nil || done.Result.Result.IsError ||
		done.Result.Result.Content[0].Text != "pub:pay 5" {
		t.Errorf("the approved task ended as %+v", done)
	}
}
