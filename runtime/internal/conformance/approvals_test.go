package conformance_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnode/toolnode/runtime/internal/testkit"
)

// approvalsAccess writes an access file: desk and ops may call everything, and a call of
// greet runs only once ops has approved it.
func approvalsAccess(t *testing.T) string {
	t.Helper()
	b, _ := json.Marshal(map[string]any{
		"clients": []map[string]any{
			{"name": "desk", "token_sha256": testkit.TokenSHA("token-desk"), "allow": []string{"*"}},
			{"name": "ops", "token_sha256": testkit.TokenSHA("token-ops"), "allow": []string{"*"}},
		},
		"approvals": []map[string]any{{"tools": []string{"greet"}, "approvers": []string{"ops"}}},
	})
	path := filepath.Join(t.TempDir(), "access.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// call calls tool and returns its text and, for an error result, its structured error.
func call(t *testing.T, s *mcp.ClientSession, tool string, args map[string]any) (string, map[string]any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	if !res.IsError {
		return textOf(res), nil
	}
	var sc struct {
		Error map[string]any `json:"error"`
	}
	b, _ := json.Marshal(res.StructuredContent)
	_ = json.Unmarshal(b, &sc)
	return textOf(res), sc.Error
}

// requestOf is the id of the request for approval a needs_approval error names.
func requestOf(t *testing.T, text string, e map[string]any) string {
	t.Helper()
	d, _ := e["details"].(map[string]any)
	id, _ := d["id"].(string)
	if e["kind"] != "needs_approval" || id == "" {
		t.Fatalf("want a needs_approval error, got %q %v", text, e)
	}
	return id
}

// Three replicas behind HAProxy share their requests for approval: a call asked for on one
// replica is listed and approved on another and runs when made again on the third; a
// changed argument needs a new approval. A client that can wait, through the balancer,
// waits for an approval given through the balancer.
func TestApprovalsHoldAcrossReplicas(t *testing.T) {
	rs := startReplicas(t, 3, "token-ops", "--access", approvalsAccess(t))
	r1, r2, r3 := rs.replicas[0].url, rs.replicas[1].url, rs.replicas[2].url
	ada := map[string]any{"name": "ada"}

	text, e := call(t, connect(t, r1, "2025-11-25", nil, "token-desk"), "greet", ada)
	id := requestOf(t, text, e)
	ops2 := connect(t, r2, "2025-11-25", nil, "token-ops")
	var listed string
	testkit.Eventually(t, 10*time.Second, func() string { // the request crosses the cluster
		if listed, _ = call(t, ops2, "toolnode.approvals", nil); !strings.Contains(listed, id) {
			return "replica r2 does not list request " + id + ": " + listed
		}
		return ""
	})
	if !strings.Contains(listed, "desk calls greet") || !strings.Contains(listed, `"ada"`) {
		t.Errorf("the approver does not see the call: %q", listed)
	}
	if text, e := call(t, ops2, "toolnode.approve", map[string]any{"id": id, "approve": true}); e != nil {
		t.Fatalf("approving on r2: %q", text)
	}
	desk3 := connect(t, r3, "2026-07-28", nil, "token-desk")
	testkit.Eventually(t, 10*time.Second, func() string { // the approval crosses the cluster
		text, e := call(t, desk3, "greet", ada)
		switch {
		case e == nil && text == "Hello, ada!":
			return ""
		case e != nil && e["kind"] == "needs_approval" && strings.Contains(text, id):
			return "the approval has not reached r3 yet"
		}
		t.Fatalf("the approved call made on r3: %q %v", text, e)
		return ""
	})
	if text, e := call(t, desk3, "greet", map[string]any{"name": "bob"}); requestOf(t, text, e) == id {
		t.Error("a changed argument was taken as approved")
	}

	before := rs.served(t)
	asked := make(chan string, 4)
	desk := connect(t, rs.url, "2026-07-28", &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			b, _ := json.Marshal(r.Params.Meta["io.toolnode/approval"])
			var ap struct{ ID string }
			_ = json.Unmarshal(b, &ap)
			asked <- ap.ID
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
	}, "token-desk")
	ran := make(chan string, 1)
	go func() {
		text, _ := call(t, desk, "greet", map[string]any{"name": "cy"})
		ran <- text
	}()
	var waiting string
	select {
	case waiting = <-asked:
	case <-time.After(30 * time.Second):
		t.Fatal("the caller was not asked to wait through the balancer")
	}
	ops := connect(t, rs.url, "2026-07-28", nil, "token-ops")
	testkit.Eventually(t, 10*time.Second, func() string {
		text, e := call(t, ops, "toolnode.approve", map[string]any{"id": waiting, "approve": true})
		if e != nil || !strings.Contains(text, "approved") {
			return "approving through the balancer: " + text
		}
		return ""
	})
	select {
	case text := <-ran:
		if text != "Hello, cy!" {
			t.Errorf("the waiting call approved through the balancer: %q", text)
		}
		rs.spread(t, before) // the call, its retry and the approval did not all reach one replica
	case <-time.After(30 * time.Second):
		t.Fatal("the waiting call did not run once approved")
	}
}
