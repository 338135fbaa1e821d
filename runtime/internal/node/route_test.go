package node_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/toolnode/toolnode/runtime/internal/node"
	"github.com/toolnode/toolnode/runtime/internal/testkit"
)

func TestCallsRoutedWith32InFlightAcrossThreeBundles(t *testing.T) {
	t.Parallel()
	bundles := []string{"alpha", "beta", "gamma"}
	n, _ := startMemory(t, node.Config{}, testkit.Memory{Name: "alpha"}, testkit.Memory{Name: "beta"}, testkit.Memory{Name: "gamma"})
	s := &testkit.Session{}
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for i := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := bundles[i%3]
			ms := (31 - i) * 5 // later calls answer first, so a crossed answer would show
			want := fmt.Sprintf("%s:call-%d", b, i)
			if _, err := callWithin(t, n, s, 30*time.Second, b+".sleep", map[string]any{"ms": ms}); err != nil {
				errs <- err
				return
			}
			res, err := callWithin(t, n, s, 30*time.Second, b+".echo", map[string]any{"text": fmt.Sprintf("call-%d", i)})
			if err != nil {
				errs <- err
				return
			}
			if got := res.text(); got != want {
				errs <- fmt.Errorf("call %d answered %q, want %q", i, got, want)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestJunkOnStdoutIsSkipped(t *testing.T) {
	t.Parallel()
	n, logs := startFakes(t, node.Config{}, testkit.Fake{Name: "noisy", Env: map[string]string{"FAKE_JUNK": "1"}})
	for i := range 3 {
		if got, _ := call(t, n, &testkit.Session{}, "noisy.echo", map[string]any{"text": fmt.Sprint(i)}); got != fmt.Sprintf("noisy:%d", i) {
			t.Fatalf("call %d answered %q", i, got)
		}
	}
	if !strings.Contains(logs.String(), "skipped a stdout line that is not MCP") {
		t.Errorf("junk line not logged as a warning")
	}
}

func TestBundleKilledMidCallFailsTheCall(t *testing.T) {
	t.Parallel()
	n := startNode(t, "victim", "bystander")
	s := &testkit.Session{}
	pidText, _ := call(t, n, s, "victim.pid", nil)
	var pid int
	fmt.Sscan(pidText, &pid)

	type outcome struct {
		res result
		err error
		at  time.Time
	}
	done := make(chan outcome, 1)
	go func() {
		// The progress token makes the bundle say when it has the call.
		raw, err := n.Call(context.Background(), s, json.RawMessage(`{"name":"victim.sleep","arguments":{"ms":60000},"_meta":{"progressToken":"in"}}`))
		o := outcome{err: err, at: time.Now()}
		if err == nil {
			o.err = json.Unmarshal(raw, &o.res)
		}
		done <- o
	}()
	s.WaitFor(t, 10*time.Second, `"progressToken":"in"`)
	killed := time.Now()
	if err := testkit.Kill(pid); err != nil {
		t.Fatalf("kill bundle %d: %v", pid, err)
	}
	select {
	case o := <-done:
		if o.err != nil {
			t.Fatalf("call failed at the protocol level: %v", o.err)
		}
		if text := o.res.text(); !o.res.IsError || !strings.Contains(text, `"victim"`) || !strings.Contains(text, "signal: killed") {
			t.Errorf("got %q (isError %v), want an error naming the bundle and its exit", text, o.res.IsError)
		}
		if d := o.at.Sub(killed); d > time.Second {
			t.Errorf("the call failed %v after the kill, want within a second", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("call still hanging 5s after its bundle was killed")
	}
	if got, _ := call(t, n, s, "bystander.echo", map[string]any{"text": "ok"}); got != "bystander:ok" {
		t.Errorf("other bundle answered %q", got)
	}
}

func TestCollisionsResolvedTheSameWayEveryRun(t *testing.T) {
	t.Parallel()
	// Each run starts the three bundles with different delays, so that they come up in
	// different orders; the winner must not change. The runs are nodes of their own, side
	// by side.
	delays := [][3]time.Duration{{0, 150, 300}, {300, 150, 0}, {150, 0, 300}}
	for i, d := range delays {
		t.Run(fmt.Sprintf("run %d", i), func(t *testing.T) {
			t.Parallel()
			var ms []testkit.Memory
			for j, name := range []string{"lamp-b", "lamp-a", "lamp-c"} {
				ms = append(ms, testkit.Memory{Name: name, Manifest: `"seats":["node-lamp"]`, Delay: d[j] * time.Millisecond})
			}
			n, logs := startMemory(t, node.Config{}, ms...)
			if got, _ := call(t, n, &testkit.Session{}, "node-lamp.on", nil); got != "lamp on by lamp-a" {
				t.Errorf("node-lamp.on served by %q, want lamp-a", got)
			}
			for _, fallback := range []string{"lamp-b.node-lamp.on", "lamp-c.node-lamp.on"} {
				if _, ok := n.Catalog().Lookup(fallback); !ok {
					t.Errorf("losing seat verb not exposed as %s", fallback)
				}
			}
			if !strings.Contains(logs.String(), `exposed as "lamp-b.node-lamp.on"`) {
				t.Error("collision not logged")
			}
		})
	}
}

func TestProgressReachesTheCallerUnderItsToken(t *testing.T) {
	t.Parallel()
	n, _ := startMemory(t, node.Config{}, testkit.Memory{Name: "slow"})
	s := &testkit.Session{}
	if _, err := n.Call(context.Background(), s, json.RawMessage(`{"name":"slow.sleep","arguments":{"ms":50},"_meta":{"progressToken":"client-token-7"}}`)); err != nil {
		t.Fatal(err)
	}
	s.WaitFor(t, 5*time.Second, "notifications/progress ")
	for _, line := range strings.Split(s.Messages(), "\n") {
		params, ok := strings.CutPrefix(line, "notifications/progress ")
		if !ok {
			continue
		}
		var p struct {
			ProgressToken   any
			Progress, Total float64
		}
		if err := json.Unmarshal([]byte(params), &p); err != nil || p.ProgressToken != "client-token-7" || p.Progress != 1 || p.Total != 2 {
			t.Errorf("progress %s, want token client-token-7, 1 of 2", params)
		}
	}
}

func TestBundlesSeeOnlyTheirEnvironment(t *testing.T) {
	t.Parallel()
	env := map[string]string{"FAKE_SECRET_CHECK": "TOOLNODE_TEST_SECRET"}
	n, _ := startFakes(t, node.Config{LookupEnv: func(k string) (string, bool) {
		if k == "TOOLNODE_TEST_SECRET" {
			return "hunter2", true // in the node's environment
		}
		return os.LookupEnv(k)
	}},
		testkit.Fake{Name: "plain", Env: env},
		testkit.Fake{Name: "listed", Env: env, Extra: `"inherit_env": ["TOOLNODE_TEST_SECRET"]`})
	s := &testkit.Session{}
	if got, _ := call(t, n, s, "plain.env", nil); got != "false" {
		t.Errorf("a variable not listed in inherit_env reached the bundle")
	}
	if got, _ := call(t, n, s, "listed.env", nil); got != "true" {
		t.Errorf("a variable listed in inherit_env did not reach the bundle")
	}
}

// A bundle answers a request it could not read with id null: the call ends at once with
// the bundle's error instead of waiting out its timeout.
func TestANullIDAnswerEndsTheCall(t *testing.T) {
	t.Parallel()
	n := startNode(t, "nul")
	_, err := callWithin(t, n, &testkit.Session{}, 20*time.Second, "nul.nullerr", nil)
	if err == nil || !strings.Contains(err.Error(), "Parse error") {
		t.Fatalf("call ended with %v, want the bundle's parse error", err)
	}
}

// An answer over the bundle message limit fails its call, naming the bundle and the limit;
// the bundle goes on serving.
func TestAnAnswerOverTheLimitFailsItsCall(t *testing.T) {
	t.Parallel()
	n, _ := startMemory(t, node.Config{Limits: node.Limits{MaxLine: 1 << 20}}, testkit.Memory{Name: "huge"})
	s := &testkit.Session{}
	res, err := callWithin(t, n, s, 20*time.Second, "huge.big", map[string]any{"bytes": 2 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if text := res.text(); !res.IsError || !strings.Contains(text, `"huge"`) || !strings.Contains(text, "over the limit") {
		t.Fatalf("result %q, want an error naming the bundle and the limit", text)
	}
	if text, _ := call(t, n, s, "huge.echo", map[string]any{"text": "after"}); text != "huge:after" {
		t.Errorf("the next call: %q", text)
	}
}

// Answers to calls the client gave up on are dropped with their payloads: twelve 8 MiB
// answers nobody waits for leave the node's live heap near where it was (the line being
// read, and a buffer of that size, at most a few answers' worth), not grown by half of
// them or more.
func TestUnwantedAnswersAreNotKept(t *testing.T) {
	// Not parallel: the heap it measures is the whole test binary's.
	logger, logs := testkit.Log(t)
	logger.SetLevel(hclog.Debug) // the node says at debug when it drops an answer
	record := filepath.Join(t.TempDir(), "received")
	n, _ := startFakes(t, node.Config{Logger: logger}, testkit.Fake{Name: "late", Env: map[string]string{"FAKE_RECORD": record}})
	s := &testkit.Session{}
	const calls, size = 12, 8 << 20
	before := heapLive(t, n)
	var wg sync.WaitGroup
	for range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			callWithin(t, n, s, 100*time.Millisecond, "late.late", map[string]any{"ms": 400, "bytes": size})
		}()
	}
	wg.Wait()
	// Every call the bundle received is answered, late, and the answer dropped. (A call
	// given up on before it was sent never reaches the bundle.) The answers take the race
	// detector's build many seconds on a busy 2-core machine: the bound is for a node that
	// never drops them, not for a slow one.
	testkit.Eventually(t, 2*time.Minute, func() string {
		b, _ := os.ReadFile(record)
		sent := strings.Count(string(b), `"method":"tools/call"`)
		if dropped := strings.Count(logs.String(), "dropped an answer no call waits for"); sent == 0 || dropped < sent {
			return fmt.Sprintf("%d of the %d answers to calls given up on have come and been dropped", dropped, sent)
		}
		return ""
	})
	// Each status call allocates; a few let the collector run after the last answer.
	var after uint64
	for range 5 {
		after = heapLive(t, n)
	}
	t.Logf("live heap %d before, %d after", before, after)
	if after > before+calls*size/2 {
		t.Errorf("live heap grew from %d to %d bytes after answers nobody wanted", before, after)
	}
}

// heapLive is the live heap toolnode.status reports.
func heapLive(t *testing.T, n *node.Node) uint64 {
	t.Helper()
	res, err := callWithin(t, n, &testkit.Session{}, 20*time.Second, "toolnode.status", nil)
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Node struct {
			HeapLive *uint64 `json:"heap_live_bytes"` // 0 until the first collection
		}
	}
	if err := json.Unmarshal(res.StructuredContent, &st); err != nil || st.Node.HeapLive == nil {
		t.Fatalf("status has no heap_live_bytes: %s", res.StructuredContent)
	}
	return *st.Node.HeapLive
}

// A log message that names no call, sent while two clients have calls in flight, reaches
// neither: the node keeps it in its own log.
func TestAnUnattributedMessageReachesNoClient(t *testing.T) {
	t.Parallel()
	n, logs := startFakes(t, node.Config{}, testkit.Fake{Name: "loud"})
	a, b := &testkit.Session{}, &testkit.Session{}
	// a's call lasts until b's is answered, and is then given up.
	ctx, giveUp := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		// The progress token makes the bundle say when it has a's call.
		n.Call(ctx, a, json.RawMessage(`{"name":"loud.sleep","arguments":{"ms":60000},"_meta":{"progressToken":"a"}}`))
	}()
	a.WaitFor(t, 10*time.Second, `"progressToken":"a"`)
	// The bundle sends its message before its answer, on the pipe the node reads in
	// order: b's call is in flight when the message comes.
	call(t, n, b, "loud.shout", map[string]any{"ms": 0})
	giveUp()
	wg.Wait()
	for name, s := range map[string]*testkit.Session{"a": a, "b": b} {
		if strings.Contains(s.Messages(), "shouted") {
			t.Errorf("a message no call owns reached client %s:\n%s", name, s.Messages())
		}
	}
	logs.WaitFor(t, 5*time.Second, "no single client's call can be told to own")
}

// A bundle cannot send progress into another bundle's call, neither with a token it
// guesses nor with one it was told.
func TestABundleCannotSendProgressIntoAnotherCall(t *testing.T) {
	t.Parallel()
	n := startNode(t, "victim", "evil")
	s := &testkit.Session{}
	// The victim's call is held until the spoofing call is answered, and then given up:
	// the spoofed progress came before that answer, on the same pipe.
	ctx, giveUp := context.WithCancel(context.Background())
	held := make(chan error, 1)
	go func() {
		_, err := n.Call(ctx, s, json.RawMessage(`{"name":"victim.hold","arguments":{"ms":60000},"_meta":{"progressToken":"mine"}}`))
		held <- err
	}()
	// victim.hold tells its caller, in a log message, the token the node gave it.
	s.WaitFor(t, 10*time.Second, `"data":"\"tn-`)
	var token string
	for _, line := range strings.Split(s.Messages(), "\n") {
		params, ok := strings.CutPrefix(line, "notifications/message ")
		if !ok {
			continue
		}
		var m struct{ Data string }
		if json.Unmarshal([]byte(params), &m) == nil && strings.HasPrefix(m.Data, `"tn-`) {
			token, _ = strconv.Unquote(m.Data)
		}
	}
	if text, _ := call(t, n, s, "evil.spoof", map[string]any{"token": token}); text != "spoofed" {
		t.Fatalf("spoof: %q", text)
	}
	giveUp()
	if err := <-held; !errors.Is(err, context.Canceled) {
		t.Fatalf("the held call ended with %v before it was given up", err)
	}
	if strings.Contains(s.Messages(), "spoofed") {
		t.Fatalf("another bundle's progress reached the victim's call (token %s):\n%s", token, s.Messages())
	}
}
