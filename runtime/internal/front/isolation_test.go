//lint:file-ignore SA1019 sampling, roots and logging are part of protocol 2025-11-25, which the node serves; they are deprecated only from 2026-07-28 on.

package front_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnode/toolnode/runtime/internal/front"
	"github.com/toolnode/toolnode/runtime/internal/front/httpfront"
	"github.com/toolnode/toolnode/runtime/internal/serve"
	"github.com/toolnode/toolnode/runtime/internal/testkit"
	"github.com/toolnode/toolnode/runtime/internal/testkit/nodekit"
)

// isolated is a bundle that runs a process per client; its tool pid says which serves.
var isolated = testkit.Fake{Name: "iso", Extra: `"isolation": "client"`}

// pidOf calls iso.pid for a client and returns the pid that answered.
func pidOf(t *testing.T, c client) string {
	t.Helper()
	answer := c.request("tools/call", `{"name":"iso.pid"}`)
	var m struct {
		Result struct {
			Content []struct{ Text string } `json:"content"`
		} `json:"result"`
	}
	if json.Unmarshal([]byte(answer), &m) != nil || len(m.Result.Content) == 0 || m.Result.Content[0].Text == "" {
		t.Fatalf("iso.pid answered %s", answer)
	}
	return m.Result.Content[0].Text
}

// An isolated bundle runs a process per caller identity: one for all the sessions of an
// access-file client, another for another client; one per session for anonymous sessions,
// and one per call for an anonymous caller without a session.
func TestIsolationFollowsTheCallersIdentity(t *testing.T) {
	g := startGuarded(t, nil, isolated)
	a1, a2 := newSessionClient(t, g.url, "token-a"), newSessionClient(t, g.url, "token-a")
	b := newSessionClient(t, g.url, "token-b")
	pa := pidOf(t, a1)
	if p := pidOf(t, a2); p != pa {
		t.Errorf("two sessions of client a went to processes %s and %s", pa, p)
	}
	if p := pidOf(t, &statelessClient{t: t, url: g.url, token: "token-a"}); p != pa {
		t.Errorf("a stateless call of client a went to process %s, its sessions to %s", p, pa)
	}
	if p := pidOf(t, b); p == pa {
		t.Errorf("clients a and b share process %s", p)
	}

	open := startGuarded(t, func(o *front.Options) { o.Access = nil }, isolated)
	s1, s2 := newSessionClient(t, open.url, ""), newSessionClient(t, open.url, "")
	if p1, p2 := pidOf(t, s1), pidOf(t, s2); p1 == p2 {
		t.Errorf("two anonymous sessions share process %s", p1)
	}
	if p1, p2 := pidOf(t, s1), pidOf(t, s1); p1 != p2 {
		t.Errorf("one anonymous session's calls went to %s and %s", p1, p2)
	}
	st := &statelessClient{t: t, url: open.url}
	if p1, p2 := pidOf(t, st), pidOf(t, st); p1 == p2 {
		t.Errorf("two calls of an anonymous caller without a session share process %s", p1)
	}
}

// No client takes all of an isolated bundle's processes, nor all of the HTTP front's
// sessions: past its own bound it is refused, and another client still gets in.
func TestOneClientCannotTakeEverything(t *testing.T) {
	open := startGuardedHTTP(t, func(o *front.Options) { o.Access = nil }, httpfront.Options{}, isolated)
	var refused string
	for range 9 {
		s := newSessionClient(t, open.url, "")
		if got := s.request("tools/call", `{"name":"iso.pid"}`); strings.Contains(got, "limit") {
			refused = got
			break
		}
	}
	if !strings.Contains(refused, "for this client") {
		t.Errorf("nine anonymous sessions from one address all got a process of their own (last answer %q)", refused)
	}

	g := startGuardedHTTP(t, nil, httpfront.Options{MaxClientSessions: 3})
	for range 3 {
		newSessionClient(t, g.url, "token-a")
	}
	resp, body := postTo(t, g.url, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		map[string]string{"Authorization": "Bearer token-a"})
	if resp.StatusCode != 503 || !strings.Contains(body, "this client") {
		t.Errorf("a fourth session of client a: %d %s, want 503 naming the client's limit", resp.StatusCode, body)
	}
	newSessionClient(t, g.url, "token-b") // fails the test if refused
}

// A bundle with "isolation": "client" runs a process per client: each session's calls go to
// its own process, a message the server does not tag reaches its one client, and the
// process stops with the session.
func TestIsolatedBundlesRunAProcessPerClient(t *testing.T) {
	h := nodekit.StartFakes(t, serve.Config{HTTP: nodekit.Loopback}, isolated)
	var mu sync.Mutex
	heard := map[string]int{}
	client := func(name string) *mcp.ClientSession {
		s := nodekit.Connect(t, h.URL, "2025-11-25", &mcp.ClientOptions{LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			mu.Lock()
			heard[name+":"+fmt.Sprint(r.Params.Data)]++
			mu.Unlock()
		}})
		if err := s.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
			t.Fatal(err)
		}
		return s
	}
	a, b := client("a"), client("b")
	pidA, _ := nodekit.CallText(t, a, "iso.pid", nil)
	pidB, _ := nodekit.CallText(t, b, "iso.pid", nil)
	if again, _ := nodekit.CallText(t, a, "iso.pid", nil); pidA == pidB || again != pidA {
		t.Fatalf("pids: a %s then %s, b %s; want one process per client", pidA, again, pidB)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); nodekit.CallText(t, a, "iso.shout", map[string]any{"ms": 300}) }()
	go func() { defer wg.Done(); nodekit.CallText(t, b, "iso.sleep", map[string]any{"ms": 300}) }()
	wg.Wait()
	testkit.Eventually(t, 5*time.Second, func() string {
		mu.Lock()
		defer mu.Unlock()
		if heard["a:shouted"] != 1 || heard["b:shouted"] != 0 {
			return fmt.Sprintf("heard %v, want the untagged message at a only", heard)
		}
		return ""
	})
	a.Close()
	n, _ := strconv.Atoi(pidA)
	if !testkit.Exited(n, 10*time.Second) {
		t.Errorf("the process of a closed session (pid %d) still runs", n)
	}
}

// A client whose calls crash a bundle again and again is refused that bundle; another
// client's calls go on being served.
func TestTheClientThatCrashesABundleIsRefused(t *testing.T) {
	h := nodekit.StartFakes(t, serve.Config{HTTP: nodekit.Loopback}, testkit.Fake{Name: "frail"})
	bad := nodekit.Connect(t, h.URL, "2025-11-25", nil)
	good := nodekit.Connect(t, h.URL, "2025-11-25", nil)
	for i := range 3 {
		res, err := nodekit.CallWithin(t, bad, 20*time.Second, "frail.crash", nil)
		if err == nil && !res.IsError {
			t.Fatalf("crash %d answered", i)
		}
		// The bundle comes back for everyone.
		testkit.Eventually(t, 15*time.Second, func() string {
			if res, err := nodekit.CallWithin(t, good, 10*time.Second, "frail.echo", map[string]any{"text": "x"}); err != nil || res.IsError {
				return "the bundle is not back"
			}
			return ""
		})
	}
	res, err := nodekit.CallWithin(t, bad, 10*time.Second, "frail.echo", map[string]any{"text": "again"})
	if err == nil && !res.IsError {
		t.Fatalf("the crashing client is still served: %q", nodekit.ResultText(res))
	}
	if res != nil && !strings.Contains(nodekit.ResultText(res), "crashed bundle") {
		t.Errorf("the refusal does not say why: %q", nodekit.ResultText(res))
	}
	if text, _ := nodekit.CallText(t, good, "frail.echo", map[string]any{"text": "fine"}); text != "frail:fine" {
		t.Errorf("the other client got %q", text)
	}
}
