package node_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/toolnode/toolnode/runtime/internal/manifest"
	"github.com/toolnode/toolnode/runtime/internal/node"
	"github.com/toolnode/toolnode/runtime/internal/testkit"
)

func TestMain(m *testing.M) {
	testkit.RunIfChild()
	goleak.VerifyTestMain(m)
}

// startNode runs a node of the test bundles names, of the initialize era.
func startNode(t *testing.T, names ...string) *node.Node {
	t.Helper()
	dir := t.TempDir()
	for _, name := range names {
		testkit.Write(t, dir, testkit.Fake{Name: name})
	}
	return startNodeOf(t, testkit.Manifests(t, dir, names...))
}

// startNodeOf runs a node of ms with their processes started; it is closed with the test.
func startNodeOf(t *testing.T, ms []*manifest.Manifest) *node.Node {
	t.Helper()
	n, _ := startNodeWith(t, node.Config{Manifests: ms})
	return n
}

// startNodeWith runs a node configured by cfg (with pings off unless cfg sets them), logging
// to the buffer it returns unless cfg has a logger, and waits until its bundles have
// started; it is closed with the test.
func startNodeWith(t *testing.T, cfg node.Config) (*node.Node, *testkit.SyncBuffer) {
	t.Helper()
	var logs *testkit.SyncBuffer
	if cfg.Logger == nil {
		cfg.Logger, logs = testkit.Log(t)
	}
	if cfg.Supervision.PingEvery == 0 {
		cfg.Supervision.PingEvery = -1
	}
	n := node.New(cfg)
	n.Start()
	// Longer than a bundle's start timeout, within which each start ends: tests run side
	// by side (fifty race-built processes start at once in one of them) take a while.
	select {
	case <-n.Ready():
	case <-time.After(time.Minute):
		t.Fatal("the node did not start its bundles")
	}
	t.Cleanup(func() { n.Close(context.Background()) })
	return n, logs
}

// startFakes writes the fake bundles fakes and runs a node of them, configured by cfg.
func startFakes(t *testing.T, cfg node.Config, fakes ...testkit.Fake) (*node.Node, *testkit.SyncBuffer) {
	t.Helper()
	dir := t.TempDir()
	var names []string
	for _, f := range fakes {
		testkit.Write(t, dir, f)
		names = append(names, f.Name)
	}
	cfg.Manifests = testkit.Manifests(t, dir, names...)
	return startNodeWith(t, cfg)
}

// startMemory runs a node of the in-memory bundles ms, configured by cfg.
func startMemory(t *testing.T, cfg node.Config, ms ...testkit.Memory) (*node.Node, *testkit.SyncBuffer) {
	t.Helper()
	cfg.Manifests = testkit.InMemory(t, ms...)
	return startNodeWith(t, cfg)
}

// result is a tool's result as the node answers it.
type result struct {
	IsError bool `json:"isError"`
	Content []struct {
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
}

// text is the result's text, its parts joined.
func (r result) text() string {
	var sb strings.Builder
	for _, c := range r.Content {
		sb.WriteString(c.Text)
	}
	return sb.String()
}

// callWithin calls the tool name with args (nil for none) for sess, an anonymous caller,
// giving up after d; an error is one of the protocol, not of the tool.
func callWithin(t *testing.T, n *node.Node, sess node.Client, d time.Duration, name string, args any) (result, error) {
	t.Helper()
	return callAs(t, n, sess, node.Caller{}, d, name, args)
}

// callAs calls the tool name with args (nil for none) as caller, what the bundle sends
// about the call going to sess, giving up after d; an error is one of the protocol, not of
// the tool.
func callAs(t *testing.T, n *node.Node, sess node.Client, caller node.Caller, d time.Duration, name string, args any) (result, error) {
	t.Helper()
	params := map[string]any{"name": name}
	if args != nil {
		params["arguments"] = args
	}
	b, _ := json.Marshal(params)
	req, rerr := node.ReadRequest("tools/call", b)
	if rerr != nil {
		t.Fatal(rerr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	raw, err := node.Await(node.Detached(sess, caller, nil), func(x node.Exchange) { n.CallTool(ctx, x, req) }).Answer()
	if err != nil {
		return result{}, err
	}
	var r result
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("%s answered %s: %v", name, raw, err)
	}
	return r, nil
}

// call calls the tool name with args for sess and returns its text and whether it is a
// tool error; an error of the protocol fails the test.
func call(t *testing.T, n *node.Node, sess node.Client, name string, args any) (string, bool) {
	t.Helper()
	r, err := callWithin(t, n, sess, 30*time.Second, name, args)
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	return r.text(), r.IsError
}

func TestCallsReachTheirBundleAndMessagesTheirSession(t *testing.T) {
	t.Parallel()
	n, _ := startMemory(t, node.Config{}, testkit.Memory{Name: "a"}, testkit.Memory{Name: "b"})
	s := &testkit.Session{}
	n.Attach(s)
	defer n.Detach(s)
	for _, tc := range []struct{ tool, want string }{{"a.echo", "a:x"}, {"b.echo", "b:x"}} {
		res, err := n.Call(context.Background(), s, json.RawMessage(`{"name":"`+tc.tool+`","arguments":{"text":"x"}}`))
		if err != nil || !strings.Contains(string(res), `"`+tc.want+`"`) {
			t.Errorf("%s: %s %v", tc.tool, res, err)
		}
	}
	res, err := n.Call(context.Background(), s, json.RawMessage(`{"name":"a.talk","arguments":{"text":"hello"},"_meta":{"progressToken":"mine"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(res), "a:hello") {
		t.Errorf("talk answered %s", res)
	}
	got := s.Messages()
	if !strings.Contains(got, `notifications/message {"level":"info","logger":"a/talk","data":"hello"`) ||
		!strings.Contains(got, `notifications/progress {"progressToken":"mine","progress":1}`) {
		t.Errorf("the session got:\n%s", got)
	}
	if _, err := n.Call(context.Background(), s, json.RawMessage(`{"name":"c.echo"}`)); err == nil {
		t.Error("an unknown tool was called")
	}
}

func TestStatusReportsBoundsAndBundles(t *testing.T) {
	t.Parallel()
	n := startNode(t, "a")
	st := n.Status()
	if len(st) != 1 || st[0].Name != "a" || st[0].State != node.StateReady || len(st[0].PIDs) != 1 {
		t.Fatalf("status %+v", st)
	}
	names := map[string]bool{}
	for _, b := range n.Bounds() {
		names[b.Name] = true
	}
	for _, want := range []string{"bundle.queued_bytes", "bundle.message_bytes", "bundle.message_depth", "bundle.stderr_line_bytes"} {
		if !names[want] {
			t.Errorf("bound %s missing from %v", want, names)
		}
	}
}

// A call may bring the client requests unless every running process of its bundle speaks
// the stateless revision (which asks with input_required answers instead); a tool the node
// serves itself, or one it does not know, is taken to ask. Once the bundle's process is
// gone, nothing is known of it: its tools are taken to ask again.
func TestAsksClientsFollowsTheRunningProcesses(t *testing.T) {
	t.Parallel()
	n, _ := startMemory(t, node.Config{}, testkit.Memory{Name: "a", Session: true}, testkit.Memory{Name: "s"})
	asks := func(tool string) bool {
		req, err := node.ReadRequest("tools/call", json.RawMessage(`{"name":"`+tool+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		return n.AsksClients(n.FindTool(req))
	}
	for _, tc := range []struct {
		tool string
		asks bool
	}{{"a.echo", true}, {"s.echo", false}, {"toolnode.status", true}, {"nobody.echo", true}} {
		if got := asks(tc.tool); got != tc.asks {
			t.Errorf("AsksClients(%q) = %v, want %v", tc.tool, got, tc.asks)
		}
	}
	n.Close(context.Background())
	if !asks("s.echo") {
		t.Error("a stopped bundle's tool is still taken not to ask")
	}
}

// A stateless bundle is asked for the log messages the caller wants, and none when it
// wants none: the bundle's message reaches a caller that wants it, and is not made for one
// that does not.
func TestAStatelessBundleIsAskedForTheLogsItsCallerWants(t *testing.T) {
	t.Parallel()
	n, _ := startMemory(t, node.Config{}, testkit.Memory{Name: "s"})
	for _, tc := range []struct {
		name   string
		caller node.Caller
		wants  bool
	}{
		{"nothing known of the caller", node.Caller{}, true},
		{"a caller that wants info and above", node.Caller{LogLevel: "info"}, true},
		{"a caller that wants none", node.Caller{NoLogs: true}, false},
	} {
		s := &testkit.Session{}
		res, err := callAs(t, n, s, tc.caller, 30*time.Second, "s.talk", map[string]any{"text": "hello"})
		if err != nil || !strings.Contains(res.text(), "s:hello") {
			t.Fatalf("%s: %+v %v", tc.name, res, err)
		}
		got := s.Messages()
		if logged := strings.Contains(got, "notifications/message"); logged != tc.wants {
			t.Errorf("%s: log message sent %v, want %v; the session got:\n%s", tc.name, logged, tc.wants, got)
		}
	}
}
