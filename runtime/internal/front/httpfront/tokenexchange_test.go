package httpfront_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/protobuf/encoding/prototext"

	"github.com/toolnode/toolnode/runtime/internal/oauth"
	"github.com/toolnode/toolnode/runtime/internal/oauth/optest"
	"github.com/toolnode/toolnode/runtime/internal/reload"
	"github.com/toolnode/toolnode/runtime/internal/serve"
	"github.com/toolnode/toolnode/runtime/internal/telemetry/otlptest"
	"github.com/toolnode/toolnode/runtime/internal/testkit"
	"github.com/toolnode/toolnode/runtime/internal/testkit/nodekit"
)

// Each user's own credentials upstream: a url bundle with token_exchange gets, with each
// call, a token of the caller for its own audience, which the node exchanged at a real
// OpenID provider (zitadel/oidc's, over a storage of ours) from the caller's token.

const (
	nodeAudience = "https://node.test/mcp"
	apiAudience  = "https://api.test"
)

// service is an MCP server behind a url bundle that serves each call as the user its
// token names: "whoami" checks the call's bearer token (signature, issuer, audience
// apiAudience) and answers with its subject. It keeps every token it was given, by the
// subject it names.
type service struct {
	URL string

	mu     sync.Mutex
	tokens map[string]map[string]bool // subject → raw tokens
}

func startService(t *testing.T, issuer string, stateless bool) *service {
	t.Helper()
	rs, err := oauth.New(context.Background(), oauth.Config{Issuer: issuer, ResourceURL: apiAudience + "/mcp", Audience: apiAudience})
	if err != nil {
		t.Fatal(err)
	}
	svc := &service{tokens: map[string]map[string]bool{}}
	s := mcp.NewServer(&mcp.Implementation{Name: "service", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "whoami", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest, _ map[string]any) (*mcp.CallToolResult, any, error) {
			raw, ok := strings.CutPrefix(req.Extra.Header.Get("Authorization"), "Bearer ")
			if !ok {
				return nil, nil, fmt.Errorf("no bearer token")
			}
			tok, err := rs.Verify(ctx, raw)
			if err != nil {
				return nil, nil, fmt.Errorf("token refused: %w", err)
			}
			svc.mu.Lock()
			if svc.tokens[tok.Subject] == nil {
				svc.tokens[tok.Subject] = map[string]bool{}
			}
			svc.tokens[tok.Subject][raw] = true
			svc.mu.Unlock()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{
				Text: fmt.Sprintf("sub=%s scope=%s token=%s", tok.Subject, strings.Join(tok.Scopes, ","), digest(raw))}}}, nil, nil
		})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: stateless}))
	t.Cleanup(srv.Close)
	svc.URL = srv.URL
	return svc
}

// seen returns the tokens the service was given, by subject.
func (s *service) seen() map[string]map[string]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]map[string]bool{}
	for sub, toks := range s.tokens {
		out[sub] = map[string]bool{}
		for k := range toks {
			out[sub][k] = true
		}
	}
	return out
}

// documentedRefusal is the refusal docs/governance.md shows, for bundle name and audience
// instead of its example's: the indented block after "When there is no token", its lines
// joined.
func documentedRefusal(t *testing.T, name, audience string) string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(nodekit.Root(t), "docs", "governance.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(doc), "### When there is no token")
	var lines []string
	for _, l := range strings.Split(section, "\n") {
		if strings.HasPrefix(l, "    ") {
			lines = append(lines, strings.TrimSpace(l))
		} else if len(lines) > 0 {
			break
		}
	}
	if len(lines) == 0 {
		t.Fatal("docs/governance.md shows no refusal under \"When there is no token\"")
	}
	text := strings.Join(lines, " ")
	return strings.NewReplacer(`bundle "jira"`, `bundle "`+name+`"`, "https://jira.example.com", audience).Replace(text)
}

func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:6])
}

// writeBundle writes a bundle.json into dir/name.
func writeBundle(t *testing.T, dir, name, manifest string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name, "bundle.json"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Over either era of the service: per call (2026-07-28), or within the node's one session
// with it, which every caller's calls share; the callers speak either era to the node.
func TestEachUserReachesAUrlBundleWithATokenOfTheirOwn(t *testing.T) {
	t.Run("stateless service", func(t *testing.T) { eachUserOwnToken(t, true, "") })
	t.Run("session service", func(t *testing.T) { eachUserOwnToken(t, false, "") })
	t.Run("session service, session clients", func(t *testing.T) { eachUserOwnToken(t, false, "2025-11-25") })
}

func eachUserOwnToken(t *testing.T, stateless bool, version string) {
	users := []string{"alice", "bob", "carol"}
	idp := optest.Start(t, optest.Config{Users: users, Audience: nodeAudience, Exchanger: "toolnode", ExchangerSecret: "node-secret",
		Audiences: []string{apiAudience}})
	svc := startService(t, idp.Issuer, stateless)
	traces := otlptest.New()
	t.Cleanup(traces.Close)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", traces.URL)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50") // ms: the node's spans need not wait for its end
	dir := t.TempDir()
	writeBundle(t, dir, "svc", fmt.Sprintf(`{"name": "svc", "url": %q, "token_exchange": {"audience": %q, "scopes": ["repo:read"]}}`, svc.URL+"/mcp", apiAudience))
	writeBundle(t, dir, "denied", fmt.Sprintf(`{"name": "denied", "url": %q, "token_exchange": {"audience": "https://other.test"}}`, svc.URL+"/mcp"))
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	n := nodekit.Start(t, serve.Config{HTTP: nodekit.Loopback, OAuthIssuer: idp.Issuer, OAuthAudience: nodeAudience,
		OAuthClientID: "toolnode", OAuthClientSecret: "node-secret", AuditFile: audit, AuditArgs: true,
		Source: reload.Source{Dirs: []string{dir}}})
	n.Ready(t)

	own := map[string]string{}
	sessions := map[string]*mcp.ClientSession{}
	for _, u := range users {
		own[u] = idp.Token(t, u)
		sessions[u] = nodekit.ConnectAs(t, n.URL, own[u], version, nil)
	}

	// Every user calls at once, several times: each answer names its caller, and only it.
	const calls = 6
	answers := make(map[string][]string)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, u := range users {
		for range calls {
			wg.Add(1)
			go func() {
				defer wg.Done()
				text, isErr := nodekit.CallText(t, sessions[u], "svc.whoami", nil)
				mu.Lock()
				defer mu.Unlock()
				if isErr {
					t.Errorf("%s's call failed: %s", u, text)
				}
				answers[u] = append(answers[u], text)
			}()
		}
	}
	wg.Wait()
	for _, u := range users {
		for _, a := range answers[u] {
			if !strings.HasPrefix(a, "sub="+u+" scope=repo:read ") {
				t.Errorf("a call of %s was served as %q", u, a)
			}
		}
	}

	// The service was given one token per user, the user's alone, and never the token the
	// user brought to the node.
	seen := svc.seen()
	for _, u := range users {
		if len(seen[u]) != 1 {
			t.Errorf("the service got %d tokens of %s, want the one exchanged and kept", len(seen[u]), u)
		}
		if seen[u][own[u]] {
			t.Errorf("the service got %s's own token for the node, not one exchanged for it", u)
		}
	}
	if len(seen) != len(users) {
		t.Errorf("the service got tokens of %d subjects, want %d", len(seen), len(users))
	}
	// Kept per caller: one exchange per user for all the calls.
	if got := idp.Exchanges(); got != int64(len(users)) {
		t.Errorf("the provider granted %d exchanges for %d users' %d calls each, want one per user", got, len(users), calls)
	}

	// A refused exchange reaches the caller with the issuer's reason, as
	// docs/governance.md shows it.
	text, isErr := nodekit.CallText(t, sessions["alice"], "denied.whoami", nil)
	if want := documentedRefusal(t, "denied", "https://other.test"); !isErr || text != want {
		t.Errorf("a refused exchange answered isError=%v\n%s\nwant\n%s", isErr, text, want)
	}

	// No token is in the node's log, its audit log, its traces, or an answer.
	testkit.Eventually(t, 10*time.Second, func() string {
		for _, sp := range traces.Spans() {
			if strings.Contains(sp.Name, "denied.whoami") {
				return ""
			}
		}
		return "the node sent no span of the refused call"
	})
	var spans strings.Builder
	for _, sp := range traces.Spans() {
		spans.WriteString(prototext.Format(sp.Span))
	}
	auditLog, err := os.ReadFile(audit)
	if err != nil {
		t.Fatal(err)
	}
	var secrets []string
	for _, u := range users {
		secrets = append(secrets, own[u])
		for tok := range seen[u] {
			secrets = append(secrets, tok)
		}
	}
	for _, s := range secrets {
		for what, text := range map[string]string{"log": n.Logs.String(), "audit log": string(auditLog), "traces": spans.String(), "refusal": text} {
			if strings.Contains(text, s) || strings.Contains(text, s[len(s)-20:]) {
				t.Errorf("the %s holds a token", what)
			}
		}
	}
}

// A command bundle with a process per client gets each caller's token in the member of
// its calls' _meta the manifest names, each client's process its own caller's only; a
// caller without a token is refused.
func TestACommandBundleGetsEachCallersTokenInItsOwnProcess(t *testing.T) {
	users := []string{"alice", "bob"}
	idp := optest.Start(t, optest.Config{Users: users, Audience: nodeAudience, Exchanger: "toolnode", ExchangerSecret: "node-secret",
		Audiences: []string{apiAudience}})
	rs, err := oauth.New(context.Background(), oauth.Config{Issuer: idp.Issuer, ResourceURL: apiAudience + "/mcp", Audience: apiAudience})
	if err != nil {
		t.Fatal(err)
	}
	n := nodekit.StartFakes(t, serve.Config{HTTP: nodekit.Loopback, Stdio: true, OAuthIssuer: idp.Issuer, OAuthAudience: nodeAudience,
		OAuthClientID: "toolnode", OAuthClientSecret: "node-secret"},
		testkit.Fake{Name: "files", Env: map[string]string{"FAKE_META": "com.example/token"}, Extra: fmt.Sprintf(`"isolation": "client", "token_exchange": {"audience": %q, "meta": "com.example/token"}`, apiAudience)})
	n.Ready(t)
	pids := map[string]map[string]bool{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, u := range users {
		s := nodekit.ConnectAs(t, n.URL, idp.Token(t, u), "", nil)
		for range 3 {
			wg.Go(func() {
				text, isErr := nodekit.CallText(t, s, "files.pid", nil)
				raw, pid, _ := strings.Cut(text, " ")
				var tok string
				if isErr || json.Unmarshal([]byte(raw), &tok) != nil {
					t.Errorf("%s's call answered %q", u, text)
					return
				}
				got, err := rs.Verify(context.Background(), tok)
				if err != nil || got.Subject != u {
					t.Errorf("%s's call carried a token of %v (%v)", u, got, err)
				}
				mu.Lock()
				if pids[u] == nil {
					pids[u] = map[string]bool{}
				}
				pids[u][pid] = true
				mu.Unlock()
			})
		}
	}
	// A caller without an OAuth token (over stdio) is refused, saying why.
	text, isErr := nodekit.CallText(t, n.Client(t, "", nil), "files.pid", nil)
	if !isErr || text != `bundle "files" calls its service as each caller (token_exchange): this call carries no OAuth access token: connect over HTTP to a node started with --oauth-issuer, with a token of that issuer` {
		t.Errorf("a call without a token answered isError=%v %q", isErr, text)
	}
	wg.Wait()
	for _, u := range users {
		for pid := range pids[u] {
			for _, other := range users {
				if other != u && pids[other][pid] {
					t.Errorf("%s and %s were served by one process, %s", u, other, pid)
				}
			}
		}
	}
}

// Without the means to exchange, a token_exchange bundle's calls are not sent, and say why.
func TestATokenExchangeBundleOfANodeThatExchangesNothingSaysWhy(t *testing.T) {
	n := nodekit.StartFakes(t, serve.Config{HTTP: nodekit.Loopback},
		testkit.Fake{Name: "files", Env: map[string]string{"FAKE_META": "com.example/token"},
			Extra: `"isolation": "client", "token_exchange": {"audience": "https://api.test", "meta": "com.example/token"}`})
	n.Ready(t)
	s := nodekit.Connect(t, n.URL, "", nil)
	text, isErr := nodekit.CallText(t, s, "files.pid", nil)
	if !isErr || text != `bundle "files" calls its service as each caller (token_exchange), and this node exchanges no tokens: start it with --oauth-issuer and --oauth-client-id` {
		t.Errorf("the call answered isError=%v %q", isErr, text)
	}
	if !strings.Contains(n.Logs.String(), "[WARN]  toolnode: the bundle calls its service as each caller (token_exchange), and this node exchanges no tokens") {
		t.Error("the node did not warn at start")
	}
}
