package front_test

import (
	"context"
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

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnode/toolnode/runtime/internal/access"
	"github.com/toolnode/toolnode/runtime/internal/audit"
	"github.com/toolnode/toolnode/runtime/internal/codemode"
	"github.com/toolnode/toolnode/runtime/internal/front"
	"github.com/toolnode/toolnode/runtime/internal/front/httpfront"
	"github.com/toolnode/toolnode/runtime/internal/node"
	"github.com/toolnode/toolnode/runtime/internal/telemetry"
	"github.com/toolnode/toolnode/runtime/internal/telemetry/otlptest"
	"github.com/toolnode/toolnode/runtime/internal/testkit"
)

// toolnode.run through the node, with the official Go SDK as the client: a node serving
// the bundles pub, iso and sec (each recording what it receives) to the client "analyst",
// whose access file allows pub, iso and toolnode.run, not sec; with an audit log.

// runNode is such a node.
type runNode struct {
	url      string
	audit    string
	received map[string]*testkit.SyncBuffer // what each bundle read
}

// startRunNode starts a node whose runs have the bounds b.
func startRunNode(t *testing.T, b codemode.Bounds) *runNode {
	t.Helper()
	return startRunNodeWith(t, b, telemetry.Nop{})
}

// startRunNodeWith starts a node whose runs have the bounds b, recording telemetry with rec.
func startRunNodeWith(t *testing.T, b codemode.Bounds, rec telemetry.Recorder) *runNode {
	t.Helper()
	dir := t.TempDir()
	var bundles []testkit.Memory
	received := map[string]*testkit.SyncBuffer{}
	for _, name := range []string{"pub", "iso", "sec"} {
		received[name] = &testkit.SyncBuffer{}
		bundles = append(bundles, testkit.Memory{Name: name, Session: true, Received: received[name]})
	}
	acc, _ := json.Marshal(map[string]any{"clients": []map[string]any{
		{"name": "analyst", "token_sha256": testkit.TokenSHA("analyst-token"), "allow": []string{"pub.*", "iso.*", "toolnode.run"}}}})
	accPath := filepath.Join(dir, "access.json")
	if err := os.WriteFile(accPath, acc, 0o600); err != nil {
		t.Fatal(err)
	}
	holder, err := access.Open(accPath, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	auditPath := filepath.Join(dir, "audit.jsonl")
	log, err := audit.Open(auditPath, audit.Config{Args: true})
	if err != nil {
		t.Fatal(err)
	}
	n := node.New(node.Config{Manifests: testkit.InMemory(t, bundles...), Supervision: node.Supervision{PingEvery: -1}, Run: b, Telemetry: rec})
	n.Start()
	<-n.Ready()
	h := httpfront.New(front.NewServer(n, front.Options{Access: holder, Audit: log, Telemetry: rec}), httpfront.Options{})
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		h.Close()
		ts.Close()
		n.Close(context.Background())
		log.Close()
	})
	return &runNode{url: ts.URL, audit: auditPath, received: received}
}

// connect connects the official Go SDK's client as analyst.
func (rn *runNode) connect(t *testing.T, opts *sdk.ClientOptions) *sdk.ClientSession {
	t.Helper()
	client := sdk.NewClient(&sdk.Implementation{Name: "run-client", Version: "1"}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: rn.url, HTTPClient: &http.Client{Transport: bearer{"analyst-token"}}}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// got is what bundle name has read.
func (rn *runNode) got(name string) string { return rn.received[name].String() }

// bearer adds a bearer token to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// runOutcome is a run's result as the client reads it.
type runOutcome struct {
	IsError bool
	Value   any                `json:"value"`
	Output  string             `json:"output"`
	Calls   int                `json:"calls"`
	Error   *codemode.RunError `json:"error"`
}

// run calls toolnode.run with code and reads its outcome.
func run(t *testing.T, ctx context.Context, s *sdk.ClientSession, code string) runOutcome {
	t.Helper()
	res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: "toolnode.run", Arguments: map[string]any{"code": code}})
	if err != nil {
		t.Fatalf("toolnode.run: %v", err)
	}
	var out runOutcome
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("the run's structured content %s: %v", b, err)
	}
	out.IsError = res.IsError
	return out
}

func asJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// A program calls tools of two bundles, one by one and in parallel, and answers with what
// it made of their results; a failed call is a value it inspects.
func TestRunCallsToolsOfSeveralBundles(t *testing.T) {
	rn := startRunNode(t, codemode.Bounds{})
	s := rn.connect(t, nil)
	out := run(t, context.Background(), s, `
first = pub.echo(text="one")
both = parallel([(pub.echo, {"text": "two"}), (iso.echo, {"text": "three"}), ("iso.sleep", {"ms": 20})])
missing = call("pub.nosuch" + "", {})
print("made", len(both) + 2, "calls")
{"first": first, "both": both[:2], "slept": both[2].startswith("slept in"), "missing": [is_error(missing), missing.kind, missing.dispatched]}`)
	if out.IsError {
		t.Fatalf("the run failed: %+v", out.Error)
	}
	want := `{"both":["pub:two","iso:three"],"first":"pub:one","missing":[true,"unknown_tool",false],"slept":true}`
	if got := asJSON(out.Value); got != want {
		t.Errorf("value %s, want %s", got, want)
	}
	if out.Output != "made 5 calls\n" || out.Calls != 5 {
		t.Errorf("output %q, calls %d; want %q, 5", out.Output, out.Calls, "made 5 calls\n")
	}
}

// A tool the caller may not call is none of the program's: named in the text, the program
// does not run; named by a computed name, the call is refused and never sent.
func TestRunCannotReachADeniedTool(t *testing.T) {
	rn := startRunNode(t, codemode.Bounds{})
	s := rn.connect(t, nil)
	for _, code := range []string{`sec.echo(text="x")`, `call("sec.echo", {"text": "x"})`, `parallel([("sec.echo", {"text": "x"})])`} {
		out := run(t, context.Background(), s, code)
		if !out.IsError || out.Error.Kind != codemode.KindInvalidProgram || out.Error.Dispatched {
			t.Errorf("%s: %+v, want an invalid program", code, out.Error)
		}
	}
	// Refused as a tool that does not exist is, word for word but the name: a program
	// learns nothing of which denied tools there are (tools/call tells it alike).
	out := run(t, context.Background(), s, `def told(name):
    r = call(name, {"text": "x"})
    return [r.kind, r.dispatched, r.message.replace(name, "NAME")]
[told("sec" + ".echo"), told("nos" + ".echo")]`)
	var told [2]any
	if err := json.Unmarshal([]byte(asJSON(out.Value)), &told); err != nil || fmt.Sprint(told[0]) != fmt.Sprint(told[1]) ||
		!strings.Contains(fmt.Sprint(told[0]), "unknown_tool") {
		t.Errorf("a denied tool and a missing one, by computed names: %s %+v; want the same unknown_tool", asJSON(out.Value), out.Error)
	}
	if got := rn.got("sec"); strings.Contains(got, `"tools/call"`) {
		t.Errorf("the denied bundle was called: %s", got)
	}
}

// Each bound stops its program, with an error naming it; the run does not wait for what it
// stopped.
func TestRunBoundsStopTheirPrograms(t *testing.T) {
	rn := startRunNode(t, codemode.Bounds{Steps: 10_000, Time: 2 * time.Second, Calls: 3, Parallel: 2, Bytes: 2000})
	s := rn.connect(t, nil)
	for _, tc := range []struct{ bound, code string }{
		{codemode.BoundSteps, "n = 0\nwhile True:\n    n += 1"},
		{codemode.BoundTime, `pub.sleep(ms=60000)`},
		{codemode.BoundCalls, `[pub.echo(text=str(i)) for i in range(4)]`},
		{codemode.BoundParallel, `parallel([(pub.echo, {"text": "a"}), (pub.echo, {"text": "b"}), (iso.echo, {"text": "c"})])`},
		{codemode.BoundBytes, `pub.big(bytes=5000)`},
		{codemode.BoundBytes, `"x" * 3000`},
		{codemode.BoundBytes, `print("y" * 3000)`},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		out := run(t, ctx, s, tc.code)
		cancel()
		if !out.IsError || out.Error == nil || out.Error.Kind != codemode.KindBound || out.Error.Bound != tc.bound ||
			!strings.Contains(out.Error.Message, codemode.Flag(tc.bound)) {
			t.Errorf("%s: %+v, want the %s bound's error naming %s", tc.code, out.Error, tc.bound, codemode.Flag(tc.bound))
		}
	}
	// The sleep the time bound stopped was cancelled at its bundle.
	testkit.Eventually(t, 10*time.Second, func() string {
		if !strings.Contains(rn.got("pub"), `"notifications/cancelled"`) {
			return "the bundle was not told to cancel the sleep"
		}
		return ""
	})
}

// Cancelling a run cancels the calls it has in flight, in their bundles.
func TestRunCancelledCancelsItsCalls(t *testing.T) {
	rn := startRunNode(t, codemode.Bounds{})
	s := rn.connect(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := s.CallTool(ctx, &sdk.CallToolParams{Name: "toolnode.run", Arguments: map[string]any{
			"code": `parallel([(pub.sleep, {"ms": 60000}), (iso.sleep, {"ms": 60000})])`}})
		done <- err
	}()
	testkit.Eventually(t, 10*time.Second, func() string {
		if !strings.Contains(rn.got("pub"), `"name":"sleep"`) || !strings.Contains(rn.got("iso"), `"name":"sleep"`) {
			return "the sleeps have not reached their bundles"
		}
		return ""
	})
	cancel()
	if err := <-done; err == nil {
		t.Error("the cancelled run answered")
	}
	testkit.Eventually(t, 10*time.Second, func() string {
		for _, b := range []string{"pub", "iso"} {
			if !strings.Contains(rn.got(b), `"notifications/cancelled"`) {
				return b + " was not told to cancel its sleep"
			}
		}
		return ""
	})
}

// The audit log has a line for the run and one for each call it made, naming the run, the
// caller and the arguments; a refused call is logged as refused.
func TestRunAuditLinesNameTheRun(t *testing.T) {
	rn := startRunNode(t, codemode.Bounds{})
	s := rn.connect(t, nil)
	out := run(t, context.Background(), s, `pub.echo(text="a")
iso.echo(text="b")
call("pub." + "nosuch")`)
	if out.IsError {
		t.Fatalf("the run failed: %+v", out.Error)
	}
	lines := auditLines(t, rn.audit, 4)
	var runID string
	for _, l := range lines {
		if l["tool"] == node.RunToolName {
			runID, _ = l["run"].(string)
		}
	}
	if runID == "" {
		t.Fatalf("no line of the run names it: %v", lines)
	}
	want := map[string]string{"pub.echo": audit.OK, "iso.echo": audit.OK, "pub.nosuch": audit.UnknownTool, node.RunToolName: audit.OK}
	for _, l := range lines {
		tool, _ := l["tool"].(string)
		if l["run"] != runID || l["client"] != "analyst" || l["outcome"] != want[tool] {
			t.Errorf("line %v: want run %s, client analyst, outcome %s", l, runID, want[tool])
		}
		if tool != node.RunToolName && (l["via"] != node.RunToolName || tool == "pub.echo" && asJSON(l["arguments"]) != `{"text":"a"}`) {
			t.Errorf("line %v: want via %s and the call's own arguments", l, node.RunToolName)
		}
	}
}

// A program whose last line calls a tool with a wrong argument sends nothing at all.
func TestRunWithAWrongArgumentSendsNothing(t *testing.T) {
	rn := startRunNode(t, codemode.Bounds{})
	s := rn.connect(t, nil)
	out := run(t, context.Background(), s, `pub.echo(text="first")
iso.echo(text="second")
pub.echo(text=3)`)
	if !out.IsError || out.Error.Kind != codemode.KindInvalidProgram || out.Error.Dispatched || out.Error.Line != 3 ||
		!strings.Contains(out.Error.Message, "arguments.text") {
		t.Fatalf("%+v, want an invalid program at line 3 naming arguments.text", out.Error)
	}
	for _, b := range []string{"pub", "iso"} {
		if got := rn.got(b); strings.Contains(got, `"tools/call"`) {
			t.Errorf("%s was called: %s", b, got)
		}
	}
}

// What a tool asks of the user during a run reaches the client, and the tool's progress
// is the run's, counting up.
func TestRunPassesInputRequestsAndProgress(t *testing.T) {
	rn := startRunNode(t, codemode.Bounds{})
	var mu sync.Mutex
	var progress []float64
	s := rn.connect(t, &sdk.ClientOptions{
		ElicitationHandler: func(_ context.Context, r *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"answer": "blue of " + r.Params.Message}}, nil
		},
		ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
			mu.Lock()
			progress = append(progress, r.Params.Progress)
			mu.Unlock()
		},
	})
	params := &sdk.CallToolParams{Name: "toolnode.run", Arguments: map[string]any{"code": `[pub.elicit(question="colour?"), pub.talk(text="t")]`}}
	params.SetProgressToken("run-progress")
	res, err := s.CallTool(context.Background(), params)
	if err != nil || res.IsError {
		t.Fatalf("toolnode.run: %v %+v", err, res)
	}
	if got := asJSON(res.StructuredContent.(map[string]any)["value"]); got != `["accept: blue of colour?","pub:t"]` {
		t.Errorf("value %s", got)
	}
	testkit.Eventually(t, 10*time.Second, func() string {
		mu.Lock()
		defer mu.Unlock()
		if len(progress) < 3 { // talk's own, and one per call done
			return "progress: " + asJSON(progress)
		}
		for i := 1; i < len(progress); i++ {
			if progress[i] <= progress[i-1] {
				t.Fatalf("progress does not count up: %v", progress)
			}
		}
		return ""
	})
}

// The spans of a run's calls to their bundles are children of the run's request span.
func TestRunCallsAreSpansUnderTheRun(t *testing.T) {
	rcv := otlptest.New()
	t.Cleanup(rcv.Close)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.URL)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
	tel, err := telemetry.New(context.Background(), telemetry.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tel.Shutdown(context.Background()) })
	rn := startRunNodeWith(t, codemode.Bounds{}, tel.Recorder())
	s := rn.connect(t, nil)
	if out := run(t, context.Background(), s, `[pub.echo(text="a"), iso.echo(text="b")]`); out.IsError {
		t.Fatalf("the run failed: %+v", out.Error)
	}
	testkit.Eventually(t, 10*time.Second, func() string {
		var runSpan []byte
		children := map[string][]byte{}
		for _, sp := range rcv.Spans() {
			switch sp.Name {
			case "tools/call toolnode.run":
				runSpan = sp.SpanId
			case "tools/call echo":
				children[string(sp.ParentSpanId)] = append(children[string(sp.ParentSpanId)], 1)
			}
		}
		if runSpan == nil || len(children[string(runSpan)]) != 2 {
			return "no run span with the two bundle calls under it yet"
		}
		return ""
	})
}
