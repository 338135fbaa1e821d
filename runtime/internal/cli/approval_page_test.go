package cli_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/toolnode/toolnode/runtime/internal/reload"
	"github.com/toolnode/toolnode/runtime/internal/serve"
	"github.com/toolnode/toolnode/runtime/internal/testkit"
	"github.com/toolnode/toolnode/runtime/internal/testkit/nodekit"
)

// The HTTP front's approvals page shows the approver the calls waiting for it, every value
// escaped, behind the same guard as MCP (credentials, Origin); a decision posted there
// lets the call run.
func TestTheApprovalsPageShowsAndDecidesWaitingCalls(t *testing.T) {
	n := nodekit.StartFakes(t, serve.Config{Source: reload.Source{}, AccessFile: approvalAccess(t), HTTP: nodekit.Loopback}, testkit.Fake{Name: "bank"})
	n.Ready(t)
	page := strings.TrimSuffix(n.URL, "/mcp") + "/approvals"
	desk := nodekit.ConnectWithToken(t, n.URL, "token-desk")
	hostile := `<script>alert("x")</script>`
	e, _ := callError(t, desk, "bank.echo", map[string]any{"text": hostile})
	id := requestID(t, e)

	fetch := func(method, token, origin string, form url.Values) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, page, strings.NewReader(form.Encode()))
		if form != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := fetch("GET", "", "", nil); code != http.StatusUnauthorized {
		t.Errorf("the page without credentials: %d, want 401", code)
	}
	if code, _ := fetch("GET", "token-ops", "http://evil.example", nil); code != http.StatusForbidden {
		t.Errorf("the page from a foreign origin: %d, want 403", code)
	}
	if _, body := fetch("GET", "token-desk", "", nil); strings.Contains(body, id) {
		t.Error("the page shows a request to a caller who is not its approver")
	}
	code, body := fetch("GET", "token-ops", "", nil)
	if code != http.StatusOK || !strings.Contains(body, id) || !strings.Contains(body, "desk") || !strings.Contains(body, "bank.echo") {
		t.Fatalf("the approver's page: %d\n%s", code, body)
	}
	if strings.Contains(body, "<script>") || !strings.Contains(body, "&lt;script&gt;") {
		t.Errorf("the arguments are not escaped:\n%s", body)
	}
	if code, body := fetch("POST", "token-ops", "", url.Values{"id": {id}, "decision": {"approve"}}); code != http.StatusOK || !strings.Contains(body, "approved") {
		t.Fatalf("approving on the page: %d\n%s", code, body)
	}
	if e, text := callError(t, desk, "bank.echo", map[string]any{"text": hostile}); e != nil || text != "bank:"+hostile {
		t.Errorf("the call approved on the page did not run: %v %q", e, text)
	}
}
