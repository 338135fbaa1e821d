package cli_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/cluster/natstest"
	"github.com/toolnode/toolnode/runtime/internal/reload"
	"github.com/toolnode/toolnode/runtime/internal/serve"
	"github.com/toolnode/toolnode/runtime/internal/testkit"
	"github.com/toolnode/toolnode/runtime/internal/testkit/nodekit"
)

// taskPeer is a 2026-07-28 client over HTTP that declares the tasks extension, with a
// bearer token.
type taskPeer struct {
	t     *testing.T
	url   string
	token string
}

// post sends one request and returns its answer, whether in JSON or on an event stream.
func (p taskPeer) post(method, params string) map[string]json.RawMessage {
	p.t.Helper()
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` +
		`{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":%q,"params":%s,%s}}`, method, strings.TrimSuffix(params, "}"), meta)
	req, _ := http.NewRequest(http.MethodPost, p.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	var named struct{ Name, TaskID string }
	_ = json.Unmarshal([]byte(params), &named)
	req.Header.Set("Mcp-Name", named.Name+named.TaskID)
	if p.token != "" {
		req.Header.Set("Authorization", "Bearer "+p.token)
	}
	client := &http.Client{Timeout: 20 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	text := string(b)
	if i := strings.LastIndex(text, "data: "); i >= 0 {
		text = strings.TrimSpace(text[i+len("data: "):])
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(text), &m); err != nil {
		p.t.Fatalf("%s: %d %s", method, resp.StatusCode, b)
	}
	return m
}

// status is the status of a task as tasks/get tells it, or the error's code.
func (p taskPeer) status(id string) string {
	p.t.Helper()
	m := p.post("tasks/get", `{"taskId":"`+id+`"}`)
	if m["error"] != nil {
		var e struct{ Code int }
		_ = json.Unmarshal(m["error"], &e)
		return fmt.Sprint(e.Code)
	}
	var r struct{ Status string }
	_ = json.Unmarshal(m["result"], &r)
	return r.Status
}

// A task made through one node of a cluster (for a bundle another node runs) is read,
// and cancelled, through another node, whose cancellation reaches the bundle; another
// access client cannot see it through either node.
func TestClusterTasksReachTheirNodeFromAnyNode(t *testing.T) {
	nats := natstest.Start(t).URL
	dirA, dirB := t.TempDir(), t.TempDir()
	record := filepath.Join(t.TempDir(), "received")
	testkit.Write(t, dirB, testkit.Fake{Name: "work", Env: map[string]string{"FAKE_RECORD": record}})
	accessFile := filepath.Join(t.TempDir(), "access.json")
	os.WriteFile(accessFile, []byte(fmt.Sprintf(`{"clients": [
		{"name": "owner", "token_sha256": %q, "allow": ["work.*"]},
		{"name": "other", "token_sha256": %q, "allow": ["work.*"]}]}`, testkit.TokenSHA("owner-token"), testkit.TokenSHA("other-token"))), 0o600)
	node := func(dir, id string) string {
		return nodekit.ChildHTTP(t, toolnode(t, "serve", "--http", "127.0.0.1:0", "--bundles", dir, "--cluster", nats, "--cluster-node", id, "--access", accessFile)).URL
	}
	a, b := node(dirA, "a"), node(dirB, "b")
	viaA, viaB := taskPeer{t, a, "owner-token"}, taskPeer{t, b, "owner-token"}

	var id string
	testkit.Eventually(t, 20*time.Second, func() string { // until node a lists b's bundle
		m := viaA.post("tools/call", `{"name":"work.ticker","arguments":{"ms":60000,"every":100}}`)
		var r struct{ ResultType, TaskID string }
		_ = json.Unmarshal(m["result"], &r)
		if r.ResultType != "task" {
			return fmt.Sprintf("work.ticker through node a: %s %s", m["result"], m["error"])
		}
		id = r.TaskID
		return ""
	})
	// Node b knows a's tasks from a's heartbeats: node a hearing b says nothing of that.
	testkit.Eventually(t, 20*time.Second, func() string {
		if got := viaB.status(id); got != "working" {
			return "the task read through node b: " + got + ", want working"
		}
		return ""
	})
	for _, other := range []taskPeer{{t, a, "other-token"}, {t, b, "other-token"}} {
		if got := other.status(id); got != "-32602" {
			t.Errorf("another client through %s: %s, want -32602", other.url, got)
		}
		if m := other.post("tasks/cancel", `{"taskId":"`+id+`"}`); m["error"] == nil {
			t.Errorf("another client cancelled the task through %s: %s", other.url, m["result"])
		}
	}
	if m := viaB.post("tasks/cancel", `{"taskId":"`+id+`"}`); m["error"] != nil {
		t.Fatalf("tasks/cancel through node b: %s", m["error"])
	}
	if got := viaA.status(id); got != "cancelled" {
		t.Errorf("the task read through node a after its cancel through b: %s", got)
	}
	testkit.Eventually(t, 10*time.Second, func() string {
		got, _ := os.ReadFile(record)
		if strings.Contains(string(got), `"notifications/cancelled"`) {
			return ""
		}
		return "the bundle on node b was not told to cancel"
	})
	if got := viaB.status(strings.Repeat("ab", 6) + ".nothing"); got != "-32602" {
		t.Errorf("a task of no node: %s, want -32602", got)
	}
}

// The official MCP Python SDK (mcp 2.3.0), a 2026-07-28 client, with the tasks extension
// added as the SDK has clients add extensions (testdata/tasks_client.py), drives a 2025-era
// bundle's slow tool and its question through the node's task: working with the bundle's
// progress as status message, input_required with the bundle's elicitation, answered with
// tasks/update, completed with the tool's result.
func TestOfficialPythonClientDrivesATask(t *testing.T) {
	python, err := filepath.Abs("../../../build/venv/bin/python")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(python, "-c", "import mcp, mcp_types").CombinedOutput(); err != nil {
		t.Skipf("the official MCP Python SDK is not installed in build/venv (make installs it): %v %s", err, out)
	}
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "pub"})
	h := nodekit.Start(t, serve.Config{Source: reload.Source{Dirs: []string{dir}}, HTTP: nodekit.Loopback, Metrics: "127.0.0.1:0"})
	url := h.URL
	run := func(tool, args string) (statuses [][]string, text string) {
		t.Helper()
		cmd := exec.Command(python, "testdata/tasks_client.py", url, tool, args)
		cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", tool, err, out)
		}
		var r struct {
			Statuses [][]*string
			Text     string
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if err := json.Unmarshal([]byte(lines[len(lines)-1]), &r); err != nil {
			t.Fatalf("%s: %v\n%s", tool, err, out)
		}
		for _, s := range r.Statuses {
			pair := make([]string, len(s))
			for i, v := range s {
				if v != nil {
					pair[i] = *v
				}
			}
			statuses = append(statuses, pair)
		}
		return statuses, r.Text
	}
	seen := func(statuses [][]string, status, messagePrefix string) bool {
		for _, s := range statuses {
			if s[0] == status && strings.HasPrefix(s[1], messagePrefix) {
				return true
			}
		}
		return false
	}

	statuses, text := run("pub.ticker", `{"ms":1500,"every":100}`)
	if !seen(statuses, "working", "progress ") || !seen(statuses, "completed", "") || text == "" {
		t.Errorf("pub.ticker: statuses %v, text %q; want working with the bundle's progress, then completed", statuses, text)
	}
	statuses, text = run("pub.elicit", `{"question":"go on?","ms":300}`)
	if !seen(statuses, "input_required", "") || text != "accept: yes" {
		t.Errorf("pub.elicit: statuses %v, text %q; want input_required, then the bundle's answer to the client's", statuses, text)
	}
	// The requests of tasks are measured as every request is, by method.
	_, ops := nodekit.Operations(t, h.MetricsURL(t))
	for _, method := range []string{"tasks/get", "tasks/update"} {
		if ops.Count(`mcp_method_name="`+method+`"`) == 0 {
			t.Errorf("no mcp.server.operation.duration series for %s: %v", method, ops)
		}
	}
}

// One client whose tasks keep their share of result bytes (--max-client-task-bytes,
// 16 MiB by default) is refused a new task before its tool runs; another client's task
// still runs and keeps its result; no task that ran loses its result; and what the node
// keeps stays near the share.
func TestAClientAtItsTaskByteShareIsRefusedUpFrontAndOthersKeepTheirResults(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "big"})
	accessFile := filepath.Join(t.TempDir(), "access.json")
	os.WriteFile(accessFile, []byte(fmt.Sprintf(`{"clients": [
		{"name": "a", "token_sha256": %q, "allow": ["big.*"]},
		{"name": "b", "token_sha256": %q, "allow": ["big.*"]}]}`, testkit.TokenSHA("a-token"), testkit.TokenSHA("b-token"))), 0o600)
	// Results whole (--max-result-bytes 0): a cut one would keep 100 KiB of each task.
	h := nodekit.ChildHTTP(t, toolnode(t, "serve", "--http", "127.0.0.1:0", "--bundles", dir, "--access", accessFile, "--max-result-bytes", "0"))
	before := testkit.RSSKiB(t, h.Pid())
	const eight = 8 << 20
	// task makes a task of an 8 MiB result and waits for its end; "" when it was refused
	// up front (with the error's message), else its final status.
	task := func(p taskPeer) (status, refusal string) {
		for range 5 { // a call that answers before it becomes a task is asked again
			m := p.post("tools/call", fmt.Sprintf(`{"name":"big.late","arguments":{"ms":1500,"bytes":%d}}`, eight))
			if m["error"] != nil {
				var e struct{ Message string }
				_ = json.Unmarshal(m["error"], &e)
				return "", e.Message
			}
			var r struct{ ResultType, TaskID string }
			_ = json.Unmarshal(m["result"], &r)
			if r.ResultType != "task" {
				continue
			}
			testkit.Eventually(t, 20*time.Second, func() string {
				if status = p.status(r.TaskID); status == "working" {
					return "task " + r.TaskID + " still working"
				}
				return ""
			})
			return status, ""
		}
		t.Fatal("big.late never became a task")
		return "", ""
	}
	a, b := taskPeer{t, h.URL, "a-token"}, taskPeer{t, h.URL, "b-token"}
	kept, refusal := 0, ""
	for kept < 8 && refusal == "" {
		var status string
		if status, refusal = task(a); refusal == "" {
			if status != "completed" {
				t.Fatalf("client a's task %d ended %s: the result of a tool that ran was lost", kept+1, status)
			}
			kept++
		}
	}
	if kept != 2 || !strings.Contains(refusal, "--max-client-task-bytes") {
		t.Errorf("client a kept %d results of 8 MiB, then was refused with %q; want 2, then a refusal naming --max-client-task-bytes", kept, refusal)
	}
	if status, refusal := task(b); status != "completed" {
		t.Errorf("client b's task beside client a at its share: %q %q, want completed", status, refusal)
	}
	if grew := testkit.RSSKiB(t, h.Pid()) - before; testkit.MemoryChecked(t) && grew > 128<<10 {
		t.Errorf("three kept results of 8 MiB grew the node by %d KiB", grew)
	} else {
		t.Logf("the node grew by %d KiB", grew)
	}
}
