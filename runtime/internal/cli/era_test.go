package cli_test

import (
	"github.com/toolnode/toolnode/runtime/internal/testkit"

	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The node serves both revisions at once: 2026-07-28 clients statelessly, 2025-11-25 ones in
// sessions, over HTTP and stdio, in front of the same bundle processes.

// A 2026 client over stdio lists and calls the tools of each example bundle.
func TestA2026ClientOverStdio(t *testing.T) {
	run := startNodeAt(t, "2026-07-28", nil, nil, "--bundles", examplesDir(t, "go", "c", "python"))
	if v := run.session.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("the client speaks %s", v)
	}
	tools := toolNames(t, run.session)
	for _, name := range []string{"go.greet", "c.greet", "python.greet"} {
		if tools[name] == nil {
			t.Fatalf("%s not listed; have %v", name, keys(tools))
		}
		if got, isErr := callText(t, run.session, name, map[string]any{"name": "Ada"}); got != "Hello, Ada!" || isErr {
			t.Errorf("%s answered %q", name, got)
		}
	}
}

// A 2026 client over HTTP, whose every request goes on a new connection, calls a 2025-era
// bundle that asks its user a question: the node answers input_required, the client answers
// and calls again, and the bundle's question is answered. Meanwhile a 2025 client calls the
// same bundle process and receives only its own messages.
func TestBothErasInFrontOfOneBundle(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "ask"})
	url := startHTTPNode(t, "--bundles", dir)

	asked := make(chan string, 4)
	client := mcp.NewClient(&mcp.Implementation{Name: "new-client", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked <- r.Params.Message
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "blue"}}, nil
		},
	})
	fresh := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	ctx := context.Background()
	newer, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: fresh}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer newer.Close()
	if v := newer.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("the new client speaks %s", v)
	}

	var mu sync.Mutex
	var older []string
	old := connectHTTPAt(t, url, &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			mu.Lock()
			older = append(older, fmt.Sprint(r.Params.Data))
			mu.Unlock()
		},
	}, "2025-11-25")
	if err := old.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			callText(t, old, "ask.chatty", map[string]any{"tag": fmt.Sprintf("old-%d", i)})
		}()
	}
	res, err := newer.CallTool(ctx, &mcp.CallToolParams{Name: "ask.elicit", Arguments: map[string]any{"question": "favourite colour?"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Content[0].(*mcp.TextContent).Text; got != "accept: blue" {
		t.Errorf("the bundle got %q", got)
	}
	if q := <-asked; q != "favourite colour?" {
		t.Errorf("the client was asked %q", q)
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if len(older) != 3 {
		t.Errorf("the 2025 client got log messages %v, want its own three", older)
	}
	for _, m := range older {
		if !strings.HasPrefix(m, "old-") {
			t.Errorf("the 2025 client got a message not its own: %q", m)
		}
	}
}

// The requestState the node gives out cannot be changed: a tampered one is refused, the
// right one completes the call.
func TestATamperedRequestStateIsRefused(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "ask"})
	url := startHTTPNode(t, "--bundles", dir)
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`
	call := func(extra string) map[string]any {
		t.Helper()
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask.elicit","arguments":{"question":"q"},` + meta + extra + `}}`
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
			"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "ask.elicit"} {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("answer %s: %v", b, err)
		}
		return m
	}
	first := call("")
	result, _ := first["result"].(map[string]any)
	state, _ := result["requestState"].(string)
	if result["resultType"] != "input_required" || state == "" {
		t.Fatalf("first answer %v, want input_required with a requestState", first)
	}
	var key string
	for k := range result["inputRequests"].(map[string]any) {
		key = k
	}
	tampered := []byte(state)
	tampered[len(tampered)/2] ^= 1
	answers := fmt.Sprintf(`,"inputResponses":{%q:{"action":"accept","content":{"answer":"x"}}}`, key)
	bad := call(answers + fmt.Sprintf(`,"requestState":%q`, tampered))
	if e, _ := bad["error"].(map[string]any); e == nil || e["code"] != float64(-32602) || !strings.Contains(fmt.Sprint(e["message"]), "integrity") {
		t.Errorf("a tampered state got %v, want -32602 naming the integrity check", bad)
	}
	good := call(answers + fmt.Sprintf(`,"requestState":%q`, state))
	if fmt.Sprint(good["result"]) == "" || !strings.Contains(fmt.Sprint(good["result"]), "accept: x") {
		t.Errorf("the right state got %v", good)
	}
}

// A 2025 bundle that asks for roots without params during a 2026 client's call (as
// server-everything does): the client is asked through input_required, with params it can
// decode, and the call completes with its roots. Over stdio and HTTP.
func TestA2026ClientGivesItsRootsToA2025Bundle(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "ask"})
	client := func() *mcp.Client {
		c := mcp.NewClient(&mcp.Implementation{Name: "rooted", Version: "1"}, nil)
		c.AddRoots(&mcp.Root{URI: "file:///work/project", Name: "project"})
		return c
	}
	call := func(t *testing.T, s *mcp.ClientSession) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "ask.roots", Arguments: map[string]any{}})
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Content[0].(*mcp.TextContent).Text; got != "roots: file:///work/project" {
			t.Errorf("the bundle got %q", got)
		}
	}
	t.Run("stdio", func(t *testing.T) {
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(exe, "serve", "--bundles", dir)
		cmd.Env = append(os.Environ(), "TOOLNODE_TEST_MAIN=1")
		s, err := client().Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if v := s.InitializeResult().ProtocolVersion; v != "2026-07-28" {
			t.Fatalf("the client speaks %s", v)
		}
		call(t, s)
	})
	t.Run("http", func(t *testing.T) {
		url := startHTTPNode(t, "--bundles", dir)
		s, err := client().Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		call(t, s)
	})
}
