package cli_test

import (
	"github.com/toolnode/toolnode/runtime/internal/testkit"

	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnode/toolnode/runtime/internal/oauth/oauthtest"
)

// After calls, the node's /metrics holds the MCP operation duration of each tool called,
// counted, with tool errors told apart.
func TestMetricsCountTheCalls(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "m"})
	h := startHTTPNodeRun(t, "--bundles", dir, "--metrics", "127.0.0.1:0")
	metricsURL := metricsAddress(t, h.logs)
	s := connectHTTP(t, h.url, nil)
	for i := range 5 {
		callText(t, s, "m.echo", map[string]any{"text": fmt.Sprint(i)})
	}
	s.CallTool(context.Background(), &mcp.CallToolParams{Name: "m.nope"}) // unknown: no series of its own
	resp, err := http.Get(metricsURL)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	count := func(labels ...string) int {
		for _, line := range strings.Split(string(b), "\n") {
			if !strings.HasPrefix(line, "mcp_server_operation_duration_seconds_count{") {
				continue
			}
			ok := true
			for _, l := range labels {
				ok = ok && strings.Contains(line, l)
			}
			if ok {
				n, _ := strconv.Atoi(line[strings.LastIndexByte(line, ' ')+1:])
				return n
			}
		}
		return 0
	}
	if n := count(`mcp_method_name="tools/call"`, `gen_ai_tool_name="m.echo"`); n != 5 {
		t.Errorf("m.echo counted %d times, want 5:\n%s", n, grepLines(string(b), "mcp_server_operation"))
	}
	if strings.Contains(string(b), "m.nope") {
		t.Error("a name no bundle serves became a label")
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// With --oauth-issuer, an access token of a real OpenID provider lets a client in, and
// its scopes select its access entry; a token of another audience is refused, and the
// metadata document names the provider.
func TestOAuthTokensOfARealProvider(t *testing.T) {
	if oauthtest.Binary() == "" {
		t.Skip("no hydra binary: build it with make build/hydra")
	}
	idp := oauthtest.StartHydra(t)
	const audience = "https://node.test/mcp"
	client := idp.NewClient(t, []string{audience, "https://other.test/mcp"}, "tools:read")
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "o"})
	accessFile := filepath.Join(t.TempDir(), "access.json")
	os.WriteFile(accessFile, []byte(`{"clients": [{"name": "reader", "scopes": ["tools:read"], "allow": ["o.echo"]}]}`), 0o600)
	h := startHTTPNodeRun(t, "--bundles", dir, "--oauth-issuer", idp.Issuer, "--oauth-audience", audience, "--access", accessFile)

	token := idp.Token(t, client, audience, "tools:read")
	s := connectWithToken(t, h.url, token)
	if got := strings.Join(listed(t, s), " "); got != "o.echo toolnode.execute toolnode.search" {
		t.Errorf("the token's client lists %s", got)
	}
	if text, _ := callText(t, s, "o.echo", map[string]any{"text": "hi"}); text != "o:hi" {
		t.Errorf("o.echo answered %q", text)
	}

	other := idp.Token(t, client, "https://other.test/mcp", "tools:read")
	req, _ := http.NewRequest(http.MethodPost, h.url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Authorization", "Bearer "+other)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), "resource_metadata=") {
		t.Errorf("a token for another audience got %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	// Without any token, beside an access file: still told where to get one.
	req, _ = http.NewRequest(http.MethodPost, h.url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Content-Type", "application/json")
	if resp, err = http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), "resource_metadata=") {
		t.Errorf("a request without a token got %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	meta, err := http.Get(strings.TrimSuffix(h.url, "/mcp") + "/.well-known/oauth-protected-resource/mcp")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(meta.Body)
	meta.Body.Close()
	if !strings.Contains(string(body), idp.Issuer) {
		t.Errorf("the metadata document does not name the provider: %s", body)
	}
}
