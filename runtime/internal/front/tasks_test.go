package front_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/audit"
	"github.com/toolnode/toolnode/runtime/internal/clock"
	"github.com/toolnode/toolnode/runtime/internal/front"
	"github.com/toolnode/toolnode/runtime/internal/front/httpfront"
	"github.com/toolnode/toolnode/runtime/internal/node"
	"github.com/toolnode/toolnode/runtime/internal/serve"
	"github.com/toolnode/toolnode/runtime/internal/testkit"
	"github.com/toolnode/toolnode/runtime/internal/testkit/nodekit"
)

// taskClient is a 2026-07-28 client over HTTP that declares the tasks extension (or not,
// with plain), with a bearer token when it has one.
type taskClient struct {
	t     *testing.T
	url   string // the HTTP front's
	token string
	plain bool
	ids   int
}

// post sends one request and returns its answer's JSON-RPC message.
func (c *taskClient) post(method, params string) string {
	c.t.Helper()
	c.ids++
	caps := `{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}`
	if c.plain {
		caps = `{"elicitation":{}}`
	}
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps + `}`
	body := strings.TrimSuffix(strings.TrimSpace(params), "}")
	if strings.TrimSpace(body) != "{" {
		body += ","
	}
	body += meta + "}"
	hdr := map[string]string{httpfront.HeaderProtocolVersion: "2026-07-28", httpfront.HeaderMethod: method}
	var p struct{ Name, TaskID string }
	_ = json.Unmarshal([]byte(params), &p)
	switch {
	case method == "tools/call":
		hdr[httpfront.HeaderName] = p.Name
	case strings.HasPrefix(method, "tasks/"):
		hdr[httpfront.HeaderName] = p.TaskID
	}
	if c.token != "" {
		hdr["Authorization"] = "Bearer " + c.token
	}
	_, b := postTo(c.t, c.url, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, c.ids, method, body), hdr)
	return lastMessage(b)
}

// taskAnswer is the part of an answer the tests read.
type taskAnswer struct {
	Result struct {
		ResultType     string                     `json:"resultType"`
		TaskID         string                     `json:"taskId"`
		Status         string                     `json:"status"`
		StatusMessage  string                     `json:"statusMessage"`
		TTLMs          *int64                     `json:"ttlMs"`
		PollIntervalMs int64                      `json:"pollIntervalMs"`
		InputRequests  map[string]json.RawMessage `json:"inputRequests"`
		Result         *struct {
			Content []struct{ Text string } `json:"content"`
			IsError bool                    `json:"isError"`
		} `json:"result"`
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
		Content []struct{ Text string } `json:"content"`
	} `json:"result"`
	Error *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

func readAnswer(t *testing.T, raw string) taskAnswer {
	t.Helper()
	var a taskAnswer
	if err := json.Unmarshal([]byte(raw), &a); err != nil {
		t.Fatalf("answer %q: %v", raw, err)
	}
	return a
}

// create calls a tool and returns the task it made, failing the test when it made none.
func (c *taskClient) create(tool, args string) string {
	c.t.Helper()
	raw := c.post("tools/call", `{"name":"`+tool+`","arguments":`+args+`}`)
	a := readAnswer(c.t, raw)
	if a.Result.ResultType != "task" || a.Result.TaskID == "" {
		c.t.Fatalf("%s made no task: %s", tool, raw)
	}
	return a.Result.TaskID
}

func (c *taskClient) get(id string) taskAnswer {
	c.t.Helper()
	return readAnswer(c.t, c.post("tasks/get", `{"taskId":"`+id+`"}`))
}

// until polls a task until check says it is as wanted, or fails the test.
func (c *taskClient) until(id string, what string, check func(taskAnswer) bool) taskAnswer {
	c.t.Helper()
	var last taskAnswer
	testkit.Eventually(c.t, 20*time.Second, func() string {
		last = c.get(id)
		if check(last) {
			return ""
		}
		return fmt.Sprintf("task %s is not %s: %+v", id, what, last)
	})
	return last
}

func terminal(a taskAnswer) bool {
	s := a.Result.Status
	return s == "completed" || s == "failed" || s == "cancelled"
}

// startTasks serves fakes over HTTP with the task options given, and no access file (by
// default pub, an in-memory bundle of the 2025 era, see startTasksMemory); it returns the
// HTTP front's URL and the server.
func startTasks(t *testing.T, opts front.TaskOptions, fakes ...testkit.Fake) (string, *front.Server) {
	t.Helper()
	if fakes == nil {
		return startTasksMemory(t, opts, testkit.Memory{Name: "pub", Session: true})
	}
	n := nodekit.StartFakes(t, tasksConfig(opts), fakes...)
	n.Ready(t)
	return n.URL, n.Server()
}

// startTasksMemory is startTasks of the in-memory bundles ms.
func startTasksMemory(t *testing.T, opts front.TaskOptions, ms ...testkit.Memory) (string, *front.Server) {
	t.Helper()
	n := nodekit.StartMemory(t, tasksConfig(opts), ms...)
	n.Ready(t)
	return n.URL, n.Server()
}

func tasksConfig(opts front.TaskOptions) serve.Config {
	return serve.Config{Node: node.Config{Supervision: node.Supervision{PingEvery: -1}}, Front: front.Options{Tasks: opts}, HTTP: nodekit.Loopback}
}

// A 2025-era bundle's slow tool, called by a client that declared the extension, runs as a
// task: working with its progress as status message, then completed with its result,
// kept until its TTL, unknown after.
func TestTaskOfA2025BundleRunsToItsResultAndExpires(t *testing.T) {
	// The tasks' time is a fake clock's: the task starts with the bundle's progress, and
	// its TTL passes when the test moves the clock.
	clk := clock.NewFake(time.Now())
	url, _ := startTasks(t, front.TaskOptions{TTL: 3 * time.Second, PollInterval: 250 * time.Millisecond, Clock: clk})
	c := &taskClient{t: t, url: url}
	id := c.create("pub.ticker", `{"ms":1500,"every":100}`)
	first := c.get(id)
	if first.Result.ResultType != "complete" || first.Result.TaskID != id {
		t.Errorf("tasks/get right after creation: %+v", first)
	}
	if *first.Result.TTLMs != 3000 || first.Result.PollIntervalMs != 250 {
		t.Errorf("ttlMs %d, pollIntervalMs %d; want 3000 and 250", *first.Result.TTLMs, first.Result.PollIntervalMs)
	}
	working := c.until(id, "working with progress", func(a taskAnswer) bool {
		return a.Result.Status == "working" && strings.HasPrefix(a.Result.StatusMessage, "progress ")
	})
	if working.Result.Result != nil || working.Result.Error != nil {
		t.Errorf("a working task carries a result or an error: %+v", working)
	}
	done := c.until(id, "completed", terminal)
	if done.Result.Status != "completed" || done.Result.Result == nil || len(done.Result.Result.Content) != 1 ||
		done.Result.Result.Content[0].Text == "" {
		t.Fatalf("the task ended as %+v; want completed with the tool's result", done)
	}
	clk.Advance(3*time.Second - time.Millisecond)
	if kept := c.get(id); kept.Result.Status != "completed" {
		t.Errorf("tasks/get just before the TTL: %+v, want the completed task", kept)
	}
	clk.Advance(time.Millisecond) // the TTL, from creation, has passed
	gone := c.get(id)
	if gone.Error == nil || gone.Error.Code != -32602 {
		t.Errorf("tasks/get past the TTL: %+v, want -32602", gone)
	}
}

// A quick call is answered with its result, as without tasks; a client that did not declare
// the extension always gets the plain call.
func TestQuickCallsAndPlainClientsGetResults(t *testing.T) {
	url, _ := startTasks(t, front.TaskOptions{})
	for _, c := range []*taskClient{{t: t, url: url}, {t: t, url: url, plain: true}} {
		a := readAnswer(t, c.post("tools/call", `{"name":"pub.echo","arguments":{"text":"hi"}}`))
		if a.Result.ResultType != "complete" || len(a.Result.Content) != 1 || a.Result.Content[0].Text != "pub:hi" {
			t.Errorf("plain=%v: %+v, want the result", c.plain, a)
		}
	}
	c := &taskClient{t: t, url: url, plain: true}
	a := readAnswer(t, c.post("tools/call", `{"name":"pub.ticker","arguments":{"ms":300,"every":100}}`))
	if a.Result.ResultType != "complete" || a.Result.TaskID != "" {
		t.Errorf("a client without the extension got %+v, want the plain result", a)
	}
	a = readAnswer(t, c.post("tasks/get", `{"taskId":"x.y"}`))
	if a.Error == nil || a.Error.Code != -32021 || !strings.Contains(string(a.Error.Data), "io.modelcontextprotocol/tasks") {
		t.Errorf("tasks/get without the extension: %+v, want -32021 naming it", a)
	}
}

// What a 2025-era bundle asks during the call (elicitation) makes the task
// input_required, and tasks/update answers the bundle.
func TestTaskInputRequiredFromA2025Elicitation(t *testing.T) {
	url, _ := startTasks(t, front.TaskOptions{})
	c := &taskClient{t: t, url: url}
	id := c.create("pub.elicit", `{"question":"go on?","ms":200}`)
	asked := c.until(id, "input_required", func(a taskAnswer) bool { return a.Result.Status == "input_required" })
	if len(asked.Result.InputRequests) != 1 {
		t.Fatalf("input requests: %+v", asked.Result.InputRequests)
	}
	var key string
	for k, r := range asked.Result.InputRequests {
		key = k
		if !strings.Contains(string(r), `"method":"elicitation/create"`) || !strings.Contains(string(r), "go on?") ||
			strings.Contains(string(r), "io.toolnode/request") {
			t.Errorf("input request %s: %s", k, r)
		}
	}
	// An answer to no open question is ignored; one to the open question goes to the bundle.
	ack := readAnswer(t, c.post("tasks/update", `{"taskId":"`+id+`","inputResponses":{"nobody":{"action":"accept"},"`+key+`":{"action":"accept","content":{"answer":"yes"}}}}`))
	if ack.Result.ResultType != "complete" || ack.Result.TaskID != "" || ack.Error != nil {
		t.Errorf("tasks/update: %+v, want an empty ack", ack)
	}
	done := c.until(id, "completed", terminal)
	if done.Result.Status != "completed" || done.Result.Result.Content[0].Text != "accept: yes" {
		t.Errorf("the task ended as %+v", done)
	}
}

// tasks/cancel cancels the task at once and the bundle's call with it; a second cancel is
// acknowledged the same.
func TestTaskCancelReachesTheBundle(t *testing.T) {
	received := &testkit.SyncBuffer{}
	url, _ := startTasksMemory(t, front.TaskOptions{}, testkit.Memory{Name: "pub", Session: true, Received: received})
	c := &taskClient{t: t, url: url}
	id := c.create("pub.ticker", `{"ms":60000,"every":100}`)
	for range 2 {
		ack := readAnswer(t, c.post("tasks/cancel", `{"taskId":"`+id+`"}`))
		if ack.Result.ResultType != "complete" || ack.Result.Status != "" || ack.Error != nil {
			t.Errorf("tasks/cancel: %+v, want an empty ack", ack)
		}
	}
	if a := c.get(id); a.Result.Status != "cancelled" {
		t.Errorf("after tasks/cancel: %+v", a)
	}
	received.WaitFor(t, 10*time.Second, `"notifications/cancelled"`)
}

// A bundle that dies under a task fails it, saying so.
func TestKilledBundleFailsItsTask(t *testing.T) {
	url, _ := startTasks(t, front.TaskOptions{}, testkit.Fake{Name: "pub"}) // a process, killed
	c := &taskClient{t: t, url: url, plain: true}
	pid := readAnswer(t, c.post("tools/call", `{"name":"pub.pid","arguments":{}}`)).Result.Content[0].Text
	c.plain = false
	id := c.create("pub.ticker", `{"ms":60000,"every":100}`)
	var n int
	fmt.Sscan(pid, &n)
	if err := testkit.Kill(n); err != nil {
		t.Fatal(err)
	}
	failed := c.until(id, "ended", terminal)
	if failed.Result.Status != "failed" || failed.Result.Error == nil || failed.Result.Error.Code != -32603 ||
		!strings.Contains(failed.Result.Error.Message, "pub") || failed.Result.Result != nil {
		t.Errorf("the task of a killed bundle: %+v; want failed with an error naming the bundle", failed)
	}
}

// Tasks per client and the bytes of kept results are bounded, with errors that say so.
func TestTaskBoundsRefuseWithTheirError(t *testing.T) {
	url, _ := startTasks(t, front.TaskOptions{MaxPerClient: 2, MaxBytes: 4096})
	c := &taskClient{t: t, url: url}
	c.create("pub.ticker", `{"ms":60000,"every":100}`)
	c.create("pub.ticker", `{"ms":60000,"every":100}`)
	a := readAnswer(t, c.post("tools/call", `{"name":"pub.ticker","arguments":{"ms":60000,"every":100}}`))
	if a.Error == nil || !strings.Contains(a.Error.Message, "too many tasks") {
		t.Errorf("a third task: %+v, want too many tasks", a)
	}

	// A result past the byte bounds is kept: its tool ran. The client's next task is
	// refused before its tool runs.
	url, _ = startTasks(t, front.TaskOptions{MaxBytes: 8192, MaxClientBytes: 4096, After: 50 * time.Millisecond})
	c = &taskClient{t: t, url: url}
	id := c.create("pub.late", `{"ms":300,"bytes":10000}`)
	if done := c.until(id, "ended", terminal); done.Result.Status != "completed" || len(done.Result.Result.Content[0].Text) != 10000 {
		t.Errorf("a result past the bound: %+v, want it completed and kept", done)
	}
	a = readAnswer(t, c.post("tools/call", `{"name":"pub.late","arguments":{"ms":300,"bytes":10}}`))
	if a.Error == nil || !strings.Contains(a.Error.Message, "--max-client-task-bytes") {
		t.Errorf("a task of a client at its share: %+v, want refused naming --max-client-task-bytes", a)
	}
}

// A tool the bundle's manifest says requires a task is refused (-32021) to a client
// without the extension, and is a task for one with it, however quick.
func TestRequiredTaskTool(t *testing.T) {
	url, _ := startTasksMemory(t, front.TaskOptions{}, testkit.Memory{Name: "pub", Session: true, Manifest: `"tasks": {"ech*": "required"}`})
	plain := &taskClient{t: t, url: url, plain: true}
	a := readAnswer(t, plain.post("tools/call", `{"name":"pub.echo","arguments":{"text":"x"}}`))
	if a.Error == nil || a.Error.Code != -32021 || !strings.Contains(string(a.Error.Data), `"extensions":{"io.modelcontextprotocol/tasks":{}}`) {
		t.Errorf("a required tool without the extension: %+v", a)
	}
	list := plain.post("tools/list", `{}`)
	if !strings.Contains(list, `"execution":{"taskSupport":"required"}`) {
		t.Errorf("tools/list does not say echo requires a task: %s", list)
	}
	c := &taskClient{t: t, url: url}
	id := c.create("pub.echo", `{"text":"x"}`)
	done := c.until(id, "completed", terminal)
	if done.Result.Result == nil || done.Result.Result.Content[0].Text != "pub:x" {
		t.Errorf("the quick required task ended as %+v", done)
	}
}

// Bundles that hold tasks themselves make their own; the node passes them through under
// ids of its own, so that two bundles' ids never collide and every tasks/* reaches the
// bundle that made the task.
func TestBundleHeldTasksPassThroughUnderTheNodesIDs(t *testing.T) {
	held := func(name string) testkit.Fake {
		return testkit.Fake{Name: name, Stateless: true, Env: map[string]string{"FAKE_TASKS": "1"}}
	}
	url, srv := startTasks(t, front.TaskOptions{}, held("one"), held("two"))
	c := &taskClient{t: t, url: url}
	ids := map[string]string{}
	for _, b := range []string{"one", "two"} {
		raw := c.post("tools/call", `{"name":"`+b+`.job","arguments":{"ms":200}}`)
		a := readAnswer(t, raw)
		if a.Result.ResultType != "task" || !strings.HasPrefix(a.Result.TaskID, srv.Node().TaskTag()+".") {
			t.Fatalf("%s.job: %s, want a task under the node's id", b, raw)
		}
		ids[b] = a.Result.TaskID
	}
	if ids["one"] == ids["two"] {
		t.Fatalf("two bundles' tasks share the id %s", ids["one"])
	}
	for b, id := range ids {
		done := c.until(id, "completed", terminal)
		if done.Result.TaskID != id || done.Result.Status != "completed" || done.Result.Result.Content[0].Text != b+": job done in a task" {
			t.Errorf("%s's task ended as %+v", b, done)
		}
	}
	long := c.create("one.job", `{"ms":60000}`)
	if ack := readAnswer(t, c.post("tasks/cancel", `{"taskId":"`+long+`"}`)); ack.Result.ResultType != "complete" || ack.Error != nil {
		t.Errorf("tasks/cancel: %+v", ack)
	}
	if a := c.get(long); a.Result.Status != "cancelled" {
		t.Errorf("the bundle's task after tasks/cancel: %+v", a)
	}
	if a := c.get(srv.Node().TaskTag() + ".fake-task-1"); a.Error == nil || a.Error.Code != -32602 {
		t.Errorf("the bundle's own id through the node: %+v, want -32602", a)
	}
	plain := &taskClient{t: t, url: url, plain: true}
	if a := readAnswer(t, plain.post("tools/call", `{"name":"one.job","arguments":{"ms":10}}`)); a.Result.TaskID != "" ||
		a.Result.Content[0].Text != "one: job done without a task" {
		t.Errorf("a client without the extension: %+v, want the bundle's plain result", a)
	}

	// A bundle that dies takes its tasks with it: they fail, saying so.
	pid := readAnswer(t, plain.post("tools/call", `{"name":"two.pid","arguments":{}}`)).Result.Content[0].Text
	orphan := c.create("two.job", `{"ms":60000}`)
	var n int
	fmt.Sscan(pid, &n)
	if err := testkit.Kill(n); err != nil {
		t.Fatal(err)
	}
	failed := c.until(orphan, "ended", terminal)
	if failed.Result.Status != "failed" || failed.Result.Error == nil || !strings.Contains(failed.Result.Error.Message, "exited") {
		t.Errorf("the task of a bundle that died: %+v; want failed, saying the process exited", failed)
	}
}

// stdioPeer is the stdio front's client speaking 2026-07-28 requests, reading what the
// node writes as it comes.
type stdioPeer struct {
	t   *testing.T
	in  io.Writer
	out chan map[string]json.RawMessage
	ids int
}

func newStdioPeer(t *testing.T, srv *front.Server) *stdioPeer {
	inW, outR, done := stdioPipes(srv)
	p := &stdioPeer{t: t, in: inW, out: make(chan map[string]json.RawMessage, 256)}
	go func() {
		defer close(p.out)
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m map[string]json.RawMessage
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				p.out <- m
			}
		}
	}()
	t.Cleanup(func() {
		inW.Close()
		for range p.out {
		}
		<-done
	})
	return p
}

// send writes a request and returns its id.
func (p *stdioPeer) send(method, params string) string {
	p.ids++
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
	body := strings.TrimSuffix(strings.TrimSpace(params), "}") + "," + meta + "}"
	fmt.Fprintf(p.in, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", p.ids, method, body)
	return fmt.Sprint(p.ids)
}

// next returns the next message the node writes that want accepts, skipping others.
func (p *stdioPeer) next(what string, want func(map[string]json.RawMessage) bool) map[string]json.RawMessage {
	p.t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case m, ok := <-p.out:
			if !ok {
				p.t.Fatalf("the node closed its output waiting for %s", what)
			}
			if want(m) {
				return m
			}
		case <-deadline:
			p.t.Fatalf("no %s from the node", what)
		}
	}
}

func (p *stdioPeer) answer(id string) map[string]json.RawMessage {
	return p.next("answer "+id, func(m map[string]json.RawMessage) bool { return string(m["id"]) == id })
}

// A client listening to tasks gets notifications/tasks for those it owns, for tasks the
// node holds and for those a bundle holds alike, tagged with its listen request.
func TestTaskNotificationsReachTheListener(t *testing.T) {
	_, srv := startTasks(t, front.TaskOptions{}, testkit.Fake{Name: "pub"},
		testkit.Fake{Name: "held", Stateless: true, Env: map[string]string{"FAKE_TASKS": "1"}})
	p := newStdioPeer(t, srv)
	taskOf := func(tool, args string) string {
		var r struct {
			Result struct{ TaskID string } `json:"result"`
		}
		_ = json.Unmarshal(p.answer(p.send("tools/call", `{"name":"`+tool+`","arguments":`+args+`}`))["result"], &r.Result)
		if r.Result.TaskID == "" {
			t.Fatalf("%s made no task", tool)
		}
		return r.Result.TaskID
	}
	nodeHeld := taskOf("pub.ticker", `{"ms":60000,"every":100}`)
	bundleHeld := taskOf("held.job", `{"ms":500}`)
	listen := p.send("subscriptions/listen", `{"notifications":{"taskIds":["`+nodeHeld+`","`+bundleHeld+`","nobody.s"]}}`)
	ack := p.next("the acknowledgment", func(m map[string]json.RawMessage) bool {
		return string(m["method"]) == `"notifications/subscriptions/acknowledged"`
	})
	want := `"taskIds":["` + nodeHeld + `","` + bundleHeld + `"]`
	if !strings.Contains(string(ack["params"]), want) {
		t.Errorf("acknowledged %s, want %s", ack["params"], want)
	}
	p.send("tasks/cancel", `{"taskId":"`+nodeHeld+`"}`)
	awaited := map[string]string{nodeHeld: "cancelled", bundleHeld: "completed"}
	for len(awaited) > 0 {
		note := p.next("notifications/tasks", func(m map[string]json.RawMessage) bool {
			return string(m["method"]) == `"notifications/tasks"`
		})
		var n struct{ TaskID, Status string }
		_ = json.Unmarshal(note["params"], &n)
		if !strings.Contains(string(note["params"]), `"io.modelcontextprotocol/subscriptionId":`+listen) {
			t.Errorf("notification of %s not tagged with the listen request %s: %s", n.TaskID, listen, note["params"])
		}
		if awaited[n.TaskID] == n.Status {
			delete(awaited, n.TaskID)
		}
	}
}

// Only the client that made a task sees it: another access client, with the same rights on
// the tool, gets -32602 for it as for an unknown task, and cannot update or cancel it.
// The audit log records the task's call when it ends, under the task's id.
func TestTasksBelongToTheirClient(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	g := startGuardedMemory(t, func(o *front.Options) {
		log, err := audit.Open(path, audit.Config{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { log.Close() })
		o.Audit = log
	}, testkit.Memory{Name: "iso", Session: true})
	a := &taskClient{t: t, url: g.url, token: "token-a"}
	b := &taskClient{t: t, url: g.url, token: "token-b"}
	id := a.create("iso.ticker", `{"ms":60000,"every":100}`)
	for _, req := range []struct{ method, params string }{
		{"tasks/get", `{"taskId":"` + id + `"}`},
		{"tasks/update", `{"taskId":"` + id + `","inputResponses":{}}`},
		{"tasks/cancel", `{"taskId":"` + id + `"}`},
	} {
		if got := readAnswer(t, b.post(req.method, req.params)); got.Error == nil || got.Error.Code != -32602 ||
			!strings.Contains(got.Error.Message, "unknown task") {
			t.Errorf("another client's %s: %+v, want -32602 unknown task", req.method, got)
		}
	}
	if got := a.get(id); got.Result.Status != "working" {
		t.Errorf("the client's own task after the other's cancel: %+v", got)
	}
	readAnswer(t, a.post("tasks/cancel", `{"taskId":"`+id+`"}`))
	lines := auditLines(t, path, 1)
	if lines[0]["task"] != id || lines[0]["tool"] != "iso.ticker" || lines[0]["outcome"] != audit.Cancelled || lines[0]["client"] != "a" {
		t.Errorf("the audit line of the cancelled task: %v", lines[0])
	}

	// The access rules apply to tasks/* as to the call: a client that may no longer use
	// the tool no longer reaches its task.
	b2, _ := json.Marshal(map[string]any{"clients": []map[string]any{{"name": "a", "token_sha256": testkit.TokenSHA("token-a"), "allow": []string{"pub.*"}}}})
	if err := os.WriteFile(filepath.Join(g.dir, "access.json"), b2, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := g.access.Reload(); err != nil {
		t.Fatal(err)
	}
	if got := a.get(id); got.Error == nil || got.Error.Code != -32602 {
		t.Errorf("a client whose access to the tool was withdrawn reads its task: %+v", got)
	}
}

// sessionTaskClient is a 2025-11-25 session over HTTP that declared the tasks extension
// in initialize.
func sessionTaskClient(t *testing.T, url string) func(method, params string) taskAnswer {
	resp, body := postTo(t, url, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25",`+
		`"capabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}},"clientInfo":{"name":"t","version":"1"}}}`, nil)
	if !strings.Contains(body, `"io.modelcontextprotocol/tasks"`) {
		t.Fatalf("initialize does not offer tasks: %s", body)
	}
	hdr := map[string]string{httpfront.HeaderSessionID: resp.Header.Get(httpfront.HeaderSessionID), httpfront.HeaderProtocolVersion: "2025-11-25"}
	postTo(t, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, hdr)
	ids := 0
	return func(method, params string) taskAnswer {
		if method == "DELETE" {
			req, _ := http.NewRequest(http.MethodDelete, url, nil)
			for k, v := range hdr {
				req.Header.Set(k, v)
			}
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
			return taskAnswer{}
		}
		ids++
		_, b := postTo(t, url, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, ids, method, params), hdr)
		return readAnswer(t, lastMessage(b))
	}
}

// A 2025 session that declared the extension gets tasks too; they are the session's, as
// an anonymous client has nothing else to be known by: another session cannot see them,
// and they end with the session.
func TestSessionTasksBelongToTheSession(t *testing.T) {
	url, srv := startTasks(t, front.TaskOptions{})
	one, two := sessionTaskClient(t, url), sessionTaskClient(t, url)
	created := one("tools/call", `{"name":"pub.ticker","arguments":{"ms":300,"every":100}}`)
	id := created.Result.TaskID
	if created.Result.ResultType != "task" || id == "" {
		t.Fatalf("a session's slow call: %+v, want a task", created)
	}
	if got := two("tasks/get", `{"taskId":"`+id+`"}`); got.Error == nil || got.Error.Code != -32602 {
		t.Errorf("another session's tasks/get: %+v, want -32602", got)
	}
	anon := &taskClient{t: t, url: url}
	if got := anon.get(id); got.Error == nil || got.Error.Code != -32602 {
		t.Errorf("a stateless client's tasks/get of a session's task: %+v, want -32602", got)
	}
	testkit.Eventually(t, 20*time.Second, func() string {
		if got := one("tasks/get", `{"taskId":"`+id+`"}`); got.Result.Status != "completed" {
			return fmt.Sprintf("the session's task: %+v", got)
		}
		return ""
	})
	// Both sessions come from one address, which the bound counts them under.
	two("tools/call", `{"name":"pub.ticker","arguments":{"ms":60000,"every":100}}`)
	if used := taskBound(srv, "tasks.client_tasks"); used != 2 {
		t.Errorf("tasks held by the address: %d, want 2", used)
	}
	two("DELETE", "")
	testkit.Eventually(t, 10*time.Second, func() string {
		if used := taskBound(srv, "tasks.client_tasks"); used != 1 {
			return fmt.Sprintf("%d tasks held, want 1 (session one's, kept; two's gone with it)", used)
		}
		return ""
	})
}

// taskBound is how much of a bound of the tasks is used.
func taskBound(srv *front.Server, name string) int64 {
	for _, b := range srv.Node().Bounds() {
		if b.Name == name {
			return b.Used
		}
	}
	return -1
}

// What one client keeps past its share (the results of the tasks it had working when it
// reached it) is kept, and counts against the pool only up to its share: another client's
// task is still made and keeps its result, while the first client's next is refused.
func TestAClientPastItsShareLeavesThePoolToOthers(t *testing.T) {
	g := startGuardedMemory(t, func(o *front.Options) {
		o.Tasks = front.TaskOptions{MaxClientBytes: 4096, MaxBytes: 8192, After: 50 * time.Millisecond}
	}, testkit.Memory{Name: "iso", Session: true})
	a := &taskClient{t: t, url: g.url, token: "token-a"}
	b := &taskClient{t: t, url: g.url, token: "token-b"}
	var ids []string
	for range 4 { // working together: each admitted while a keeps nothing
		ids = append(ids, a.create("iso.late", `{"ms":1000,"bytes":3000}`))
	}
	for _, id := range ids {
		if done := a.until(id, "ended", terminal); done.Result.Status != "completed" {
			t.Errorf("client a's task %s: %+v, want completed with its result", id, done)
		}
	}
	id := b.create("iso.late", `{"ms":100,"bytes":3000}`)
	if done := b.until(id, "ended", terminal); done.Result.Status != "completed" {
		t.Errorf("client b's task beside client a past its share: %+v, want completed", done)
	}
	if got := readAnswer(t, a.post("tools/call", `{"name":"iso.late","arguments":{"ms":100,"bytes":10}}`)); got.Error == nil ||
		!strings.Contains(got.Error.Message, "--max-client-task-bytes") {
		t.Errorf("client a's next task past its share: %+v, want refused naming --max-client-task-bytes", got)
	}
}
