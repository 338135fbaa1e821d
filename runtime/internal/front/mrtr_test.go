package front_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/toolnode/toolnode/runtime/internal/front"
	"github.com/toolnode/toolnode/runtime/internal/front/httpfront"
)

// inputRequired makes a 2026-07-28 call to pub.elicit (which asks its client a question,
// the 2025 way, and works ms milliseconds with the answer) and returns the retry that
// answers it: params with the requestState and the inputResponses.
func inputRequired(t *testing.T, c *statelessClient, ms int) string {
	t.Helper()
	args := `{"question":"go on?","ms":` + itoa(ms) + `}`
	_, body := c.post("tools/call", `{"name":"pub.elicit","arguments":`+args+`}`, nil)
	var first struct {
		Result struct {
			ResultType    string                     `json:"resultType"`
			InputRequests map[string]json.RawMessage `json:"inputRequests"`
			RequestState  string                     `json:"requestState"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(body), &first); err != nil || first.Result.ResultType != "input_required" || len(first.Result.InputRequests) != 1 {
		t.Fatalf("the first call answered %s; want input_required with one request", body)
	}
	responses := map[string]any{}
	for key := range first.Result.InputRequests {
		responses[key] = map[string]any{"action": "accept", "content": map[string]any{"answer": "yes"}}
	}
	retry, _ := json.Marshal(map[string]any{"name": "pub.elicit", "arguments": json.RawMessage(args),
		"requestState": first.Result.RequestState, "inputResponses": responses})
	return string(retry)
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// Two retries carrying one requestState: both are answered, one with the call's result and
// the other with an error saying the state is in use, instead of one waiting for ever.
func TestTwoRetriesOfOneStateAreBothAnswered(t *testing.T) {
	g := startGuarded(t, nil)
	c := &statelessClient{t: t, ts: g.ts, token: "token-a"}
	retry := inputRequired(t, c, 500)
	var wg sync.WaitGroup
	answers := make([]string, 2)
	for i := range answers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers[i] = c.tryPost("tools/call", retry) // "" when no answer came in time
		}()
	}
	wg.Wait()
	results, inUse := 0, 0
	for _, a := range answers {
		switch {
		case strings.Contains(a, "accept: yes"):
			results++
		case strings.Contains(a, `"error"`) && strings.Contains(a, "in use"):
			inUse++
		}
	}
	if results != 1 || inUse != 1 {
		t.Errorf("answers %q; want one with the result and one saying the state is in use", answers)
	}
}

// A requestState is its caller's: another client cannot resume the call, and the caller
// itself is checked against its patterns again when it comes back.
func TestARequestStateIsItsCallersOwn(t *testing.T) {
	g := startGuarded(t, nil)
	a := &statelessClient{t: t, ts: g.ts, token: "token-a"}
	b := &statelessClient{t: t, ts: g.ts, token: "token-b"}
	retry := inputRequired(t, a, 0)
	if _, body := b.post("tools/call", retry, nil); strings.Contains(body, "accept: yes") || !strings.Contains(body, `"error"`) {
		t.Errorf("another client resumed the call: %s", body)
	}
	if _, body := a.post("tools/call", retry, nil); !strings.Contains(body, "accept: yes") {
		t.Errorf("its own client could not resume the call after another tried: %s", body)
	}

	retry = inputRequired(t, a, 0)
	denyAll := `{"clients":[{"name":"a","token_sha256":"` + sha("token-a") + `","allow":["sec.*"]}]}`
	if err := os.WriteFile(filepath.Join(g.dir, "access.json"), []byte(denyAll), 0o600); err != nil {
		t.Fatal(err)
	}
	if changed, err := g.access.Reload(); !changed || err != nil {
		t.Fatalf("reload the access file: %v %v", changed, err)
	}
	if _, body := a.post("tools/call", retry, nil); strings.Contains(body, "accept: yes") || !strings.Contains(body, `"error"`) {
		t.Errorf("a client no longer allowed the tool resumed its call: %s", body)
	}
}

// The headers mirroring a tool's x-mcp-header arguments are checked whatever form of the
// tool's name the call uses.
func TestParamHeadersAreCheckedForEveryNameForm(t *testing.T) {
	g := startGuarded(t, func(o *front.Options) { o.Names = front.NamesStrict })
	c := &statelessClient{t: t, ts: g.ts, token: "token-a"}
	for _, name := range []string{"pub_mirror"} {
		params := `{"name":"` + name + `","arguments":{"region":"eu","text":"x"}}`
		if resp, body := c.post("tools/call", params, map[string]string{httpfront.HeaderParamStart + "Region": "us"}); resp.StatusCode != 400 || !strings.Contains(body, "-32020") {
			t.Errorf("%s with a mismatched Mcp-Param-Region: %d %s, want 400 and -32020", name, resp.StatusCode, body)
		}
		if _, body := c.post("tools/call", params, map[string]string{httpfront.HeaderParamStart + "Region": "eu"}); !strings.Contains(body, "pub:x") {
			t.Errorf("%s with its Mcp-Param-Region: %s", name, body)
		}
	}
}
