package front_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/toolnode/toolnode/runtime/internal/front"
	"github.com/toolnode/toolnode/runtime/internal/front/httpfront"
	"github.com/toolnode/toolnode/runtime/internal/serve"
	"github.com/toolnode/toolnode/runtime/internal/testkit"
	"github.com/toolnode/toolnode/runtime/internal/testkit/nodekit"
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
	c := &statelessClient{t: t, url: g.url, token: "token-a"}
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
	a := &statelessClient{t: t, url: g.url, token: "token-a"}
	b := &statelessClient{t: t, url: g.url, token: "token-b"}
	retry := inputRequired(t, a, 0)
	if _, body := b.post("tools/call", retry, nil); strings.Contains(body, "accept: yes") || !strings.Contains(body, `"error"`) {
		t.Errorf("another client resumed the call: %s", body)
	}
	if _, body := a.post("tools/call", retry, nil); !strings.Contains(body, "accept: yes") {
		t.Errorf("its own client could not resume the call after another tried: %s", body)
	}

	retry = inputRequired(t, a, 0)
	denyAll := `{"clients":[{"name":"a","token_sha256":"` + testkit.TokenSHA("token-a") + `","allow":["sec.*"]}]}`
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
	c := &statelessClient{t: t, url: g.url, token: "token-a"}
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

// The requestState the node gives out cannot be changed: a tampered one is refused, the
// right one completes the call.
func TestATamperedRequestStateIsRefused(t *testing.T) {
	url := nodekit.StartMemory(t, serve.Config{HTTP: nodekit.Loopback}, testkit.Memory{Name: "ask", Session: true}).URL
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
