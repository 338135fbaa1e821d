package front_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolnode/toolnode/runtime/internal/front"
	"github.com/toolnode/toolnode/runtime/internal/front/httpfront"
	"github.com/toolnode/toolnode/runtime/internal/testkit"
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
	a1, a2 := newSessionClient(t, g.ts, "token-a"), newSessionClient(t, g.ts, "token-a")
	b := newSessionClient(t, g.ts, "token-b")
	pa := pidOf(t, a1)
	if p := pidOf(t, a2); p != pa {
		t.Errorf("two sessions of client a went to processes %s and %s", pa, p)
	}
	if p := pidOf(t, &statelessClient{t: t, ts: g.ts, token: "token-a"}); p != pa {
		t.Errorf("a stateless call of client a went to process %s, its sessions to %s", p, pa)
	}
	if p := pidOf(t, b); p == pa {
		t.Errorf("clients a and b share process %s", p)
	}

	open := startGuarded(t, func(o *front.Options) { o.Access = nil }, isolated)
	s1, s2 := newSessionClient(t, open.ts, ""), newSessionClient(t, open.ts, "")
	if p1, p2 := pidOf(t, s1), pidOf(t, s2); p1 == p2 {
		t.Errorf("two anonymous sessions share process %s", p1)
	}
	if p1, p2 := pidOf(t, s1), pidOf(t, s1); p1 != p2 {
		t.Errorf("one anonymous session's calls went to %s and %s", p1, p2)
	}
	st := &statelessClient{t: t, ts: open.ts}
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
		s := newSessionClient(t, open.ts, "")
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
		newSessionClient(t, g.ts, "token-a")
	}
	resp, body := postTo(t, g.ts, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		map[string]string{"Authorization": "Bearer token-a"})
	if resp.StatusCode != 503 || !strings.Contains(body, "this client") {
		t.Errorf("a fourth session of client a: %d %s, want 503 naming the client's limit", resp.StatusCode, body)
	}
	newSessionClient(t, g.ts, "token-b") // fails the test if refused
}
