package cli_test

import (
	"github.com/toolnode/toolnode/runtime/internal/testkit"

	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// bearer adds a bearer token to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func connectWithToken(t *testing.T, url, token string) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "token-client", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{token}}}, nil)
	if err != nil {
		t.Fatalf("connect with a token: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func listed(t *testing.T, s *mcp.ClientSession) []string {
	t.Helper()
	var names []string
	for name := range toolNames(t, s) {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// execError reads the structured error of a failed toolnode.execute.
func execError(t *testing.T, res *mcp.CallToolResult) (kind string, dispatched bool) {
	t.Helper()
	b, _ := json.Marshal(res.StructuredContent)
	var v struct {
		Error struct {
			Kind       string `json:"kind"`
			Dispatched bool   `json:"dispatched"`
		} `json:"error"`
	}
	if err := json.Unmarshal(b, &v); err != nil || !res.IsError {
		t.Fatalf("not an execute error: %s (isError %v)", b, res.IsError)
	}
	return v.Error.Kind, v.Error.Dispatched
}

// Two clients of one node, each with its token, patterns and view, see, find and call only
// their tools; a forbidden tool never reaches its bundle; the audit log names the client and
// holds no arguments.
func TestClientsSeeFindAndCallOnlyTheirTools(t *testing.T) {
	dir := t.TempDir()
	record := filepath.Join(t.TempDir(), "beta-received")
	testkit.Write(t, dir, testkit.Fake{Name: "alpha", Extra: `"timeouts": {"call": "500ms"}`})
	testkit.Write(t, dir, testkit.Fake{Name: "beta", Env: map[string]string{"FAKE_RECORD": record}})
	accessFile := filepath.Join(t.TempDir(), "access.json")
	auditFile := filepath.Join(t.TempDir(), "audit.jsonl")
	os.WriteFile(accessFile, []byte(fmt.Sprintf(`{"clients": [
		{"name": "analyst", "token_sha256": %q, "allow": ["alpha.*"]},
		{"name": "ops", "token_sha256": %q, "allow": ["beta.echo", "beta.pid"], "view": "search"}]}`,
		sha("analyst-token"), sha("ops-token"))), 0o600)
	url := startHTTPNode(t, "--bundles", dir, "--access", accessFile, "--audit", auditFile)

	analyst := connectWithToken(t, url, "analyst-token")
	ops := connectWithToken(t, url, "ops-token")

	for _, name := range listed(t, analyst) {
		if !strings.HasPrefix(name, "alpha.") && name != "toolnode.search" && name != "toolnode.execute" {
			t.Errorf("the analyst sees %s", name)
		}
	}
	if got := strings.Join(listed(t, ops), " "); got != "toolnode.execute toolnode.search" {
		t.Errorf("ops, in the search view, lists %s", got)
	}

	// A forbidden tool is unknown to a direct call and never reaches its bundle.
	if _, err := analyst.CallTool(context.Background(), &mcp.CallToolParams{Name: "beta.echo", Arguments: map[string]any{"text": "FORBIDDEN"}}); err == nil ||
		!strings.Contains(err.Error(), "unknown tool") {
		t.Errorf("the analyst called beta.echo: %v", err)
	}

	res, err := ops.CallTool(context.Background(), &mcp.CallToolParams{Name: "toolnode.search", Arguments: map[string]any{"query": "echo text"}})
	if err != nil {
		t.Fatal(err)
	}
	found, _ := json.Marshal(res.StructuredContent)
	if !strings.Contains(string(found), `"beta.echo"`) || strings.Contains(string(found), `"alpha.`) {
		t.Errorf("ops found %s", found)
	}

	execute := func(s *mcp.ClientSession, args map[string]any) *mcp.CallToolResult {
		t.Helper()
		res, err := callWithin(t, s, 20*time.Second, "toolnode.execute", args)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	for _, c := range []struct {
		who        *mcp.ClientSession
		args       map[string]any
		kind       string
		dispatched bool
	}{
		{ops, map[string]any{"name": "alpha.echo", "arguments": map[string]any{"text": "FORBIDDEN"}}, "forbidden", false},
		{ops, map[string]any{"name": "beta.nope"}, "unknown_tool", false},
		{ops, map[string]any{"name": "beta.echo", "arguments": map[string]any{"text": 5}}, "invalid_arguments", false},
		{analyst, map[string]any{"name": "alpha.sleep", "arguments": map[string]any{"ms": 3000}}, "timeout", true},
	} {
		kind, dispatched := execError(t, execute(c.who, c.args))
		if kind != c.kind || dispatched != c.dispatched {
			t.Errorf("execute %v: kind %s dispatched %v, want %s %v", c.args, kind, dispatched, c.kind, c.dispatched)
		}
	}
	if got := resultText(execute(ops, map[string]any{"name": "beta.echo", "arguments": map[string]any{"text": "SECRET-ARG"}})); got != "beta:SECRET-ARG" {
		t.Errorf("execute beta.echo answered %q", got)
	}

	received, _ := os.ReadFile(record)
	if strings.Contains(string(received), "FORBIDDEN") {
		t.Error("a forbidden call reached the bundle")
	}

	// An unknown token is refused.
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Authorization", "Bearer nobody")
	req.Header.Set("Content-Type", "application/json")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("an unknown token got %v %v", resp.StatusCode, err)
	}

	eventually(t, 15*time.Second, func() string {
		b, _ := os.ReadFile(auditFile)
		if !strings.Contains(string(b), `"client":"ops"`) || !strings.Contains(string(b), `"outcome":"forbidden"`) {
			return "the audit log lacks the calls: " + string(b)
		}
		return ""
	})
	f, _ := os.Open(auditFile)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var rec map[string]any
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		if rec["client"] == nil || rec["tool"] == nil || rec["outcome"] == nil || rec["duration_ms"] == nil {
			t.Errorf("audit line lacks a field: %s", sc.Text())
		}
		if strings.Contains(sc.Text(), "SECRET-ARG") || rec["arguments"] != nil {
			t.Errorf("the audit log holds arguments: %s", sc.Text())
		}
	}
}

// The stdio front serves the access file's client named with --client, and follows the file
// as it changes.
func TestStdioClientFollowsTheAccessFile(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "alpha"})
	accessFile := filepath.Join(t.TempDir(), "access.json")
	write := func(allow string) {
		os.WriteFile(accessFile, []byte(`{"clients": [{"name": "desk", "allow": [`+allow+`]}]}`), 0o600)
	}
	write(`"alpha.echo"`)
	// A client that follows list changes (a 2026 client listens for them, and caches lists
	// until told).
	changes := &listChanges{}
	run := startNode(t, changes.options(), nil, "--bundles", dir, "--access", accessFile, "--client", "desk")
	if got := strings.Join(listed(t, run.session), " "); got != "alpha.echo toolnode.execute toolnode.search" {
		t.Fatalf("desk lists %s", got)
	}
	if _, err := run.session.CallTool(context.Background(), &mcp.CallToolParams{Name: "alpha.pid"}); err == nil {
		t.Error("desk called alpha.pid")
	}
	write(`"alpha.*"`)
	eventually(t, 10*time.Second, func() string {
		if changes.count() == 0 {
			return "no list_changed yet"
		}
		if got := len(listed(t, run.session)); got < 5 {
			return fmt.Sprintf("desk lists %d tools", got)
		}
		return ""
	})
	if text, _ := callText(t, run.session, "alpha.echo", map[string]any{"text": "ok"}); text != "alpha:ok" {
		t.Errorf("alpha.echo answered %q", text)
	}
}

// --client names a client of the access file: a name the file does not hold stops the
// node at start, naming the ones it has, rather than serving a client that may do nothing.
func TestAnUnknownStdioClientIsRefused(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "alpha"})
	accessFile := filepath.Join(t.TempDir(), "access.json")
	os.WriteFile(accessFile, []byte(`{"clients": [{"name": "desk", "allow": ["*"]}]}`), 0o600)
	code, _, stderr := runCLI("serve", "--bundles", dir, "--access", accessFile, "--client", "dsek")
	if code == 0 || !strings.Contains(stderr, `--client dsek`) || !strings.Contains(stderr, "desk") {
		t.Errorf("serve with an unknown --client: exit %d, stderr %q; want a failure naming it and the file's clients", code, stderr)
	}
}
