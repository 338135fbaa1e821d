package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/codemode"
	"github.com/toolnode/toolnode/runtime/internal/rpc"
	"github.com/toolnode/toolnode/runtime/internal/sandbox"
	"github.com/toolnode/toolnode/runtime/internal/testkit"
)

// These tests run the test binary itself as the worker (see init in main.go): the worker
// process is this package's code, as it is in the node's binary.

// echoHost is a node with one tool, echo, that answers its text; it records the calls.
type echoHost struct {
	mu    sync.Mutex
	calls []string
}

func (h *echoHost) Tool(name string) (json.RawMessage, bool) {
	if name != "t.echo" {
		return nil, false
	}
	return json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`), true
}

func (h *echoHost) Check(string, json.RawMessage) []codemode.Problem { return nil }

func (h *echoHost) Call(_ context.Context, name string, args json.RawMessage) codemode.CallResult {
	h.mu.Lock()
	h.calls = append(h.calls, name+string(args))
	h.mu.Unlock()
	var a struct{ Text string }
	_ = json.Unmarshal(args, &a)
	text, _ := json.Marshal(a.Text)
	return codemode.CallResult{Result: json.RawMessage(`{"content":[{"type":"text","text":` + string(text) + `}]}`)}
}

func (h *echoHost) Search(string, int) (json.RawMessage, error) {
	return json.RawMessage(`[{"name":"t.echo"}]`), nil
}

var names = codemode.NewNames([]string{"t.echo"})

func newPool(t *testing.T, cfg Config) *Pool {
	t.Helper()
	if !supported {
		t.Skip("no workers on this platform")
	}
	p := NewPool(cfg)
	t.Cleanup(p.Close)
	return p
}

// A program runs in a worker process, its calls made by the node's host; the worker is
// kept for its caller's next run and never given to another caller.
func TestAProgramRunsInAWorkerOfItsCallerOnly(t *testing.T) {
	p := newPool(t, Config{})
	h := &echoHost{}
	alice := Caller{Key: "alice"}
	out := p.Run(context.Background(), alice, h, names, codemode.Bounds{}, `[t.echo(text="a"), call("t.echo", {"text": "b"}), search("echo")[0]["name"]]`)
	if out.Error != nil || string(out.Value) != `["a","b","t.echo"]` || out.Calls != 3 {
		t.Fatalf("outcome %s %+v, calls %d", out.Value, out.Error, out.Calls)
	}
	if len(h.calls) != 2 {
		t.Errorf("the host made %v", h.calls)
	}
	pid := func(c Caller) string { // of the worker that ran c's run, now idle
		t.Helper()
		out := p.Run(context.Background(), c, h, names, codemode.Bounds{}, `1`)
		if out.Error != nil {
			t.Fatal(out.Error)
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, w := range p.idle {
			if w.caller == c.Key {
				return strconv.Itoa(w.p.Pid())
			}
		}
		t.Fatalf("no idle worker of %s", c.Key)
		return ""
	}
	first := pid(alice)
	if again := pid(alice); again != first {
		t.Errorf("alice's next run went to worker %s, not her idle %s", again, first)
	}
	if bob := pid(Caller{Key: "bob"}); bob == first {
		t.Errorf("bob's run went to alice's worker %s", bob)
	}
	if st := p.Stats(); st.Started != 2 || st.Idle != 2 {
		t.Errorf("stats %+v, want 2 started, 2 idle", st)
	}
}

// An anonymous caller's worker serves its one run; a caller gone takes its idle workers
// with it.
func TestWorkersOfAnonymousAndGoneCallersStop(t *testing.T) {
	p := newPool(t, Config{})
	h := &echoHost{}
	if out := p.Run(context.Background(), Caller{}, h, names, codemode.Bounds{}, `1`); out.Error != nil {
		t.Fatal(out.Error)
	}
	ended := make(chan struct{})
	if out := p.Run(context.Background(), Caller{Key: "carol", Ended: ended}, h, names, codemode.Bounds{}, `1`); out.Error != nil {
		t.Fatal(out.Error)
	}
	if st := p.Stats(); st.Idle != 1 {
		t.Fatalf("stats %+v, want carol's worker idle and no anonymous one", st)
	}
	close(ended)
	waitFor(t, func() bool { st := p.Stats(); return st.Idle == 0 && st.Live == 0 })
}

// The idle workers are bounded: past MaxIdle the oldest stops.
func TestIdleWorkersAreBounded(t *testing.T) {
	p := newPool(t, Config{MaxIdle: 2})
	for i := range 3 {
		if out := p.Run(context.Background(), Caller{Key: fmt.Sprint("c", i)}, &echoHost{}, names, codemode.Bounds{}, `1`); out.Error != nil {
			t.Fatal(out.Error)
		}
	}
	waitFor(t, func() bool { st := p.Stats(); return st.Idle == 2 && st.Live == 2 })
}

// waitFor waits until cond holds.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	testkit.Eventually(t, 20*time.Second, func() string {
		if !cond() {
			return "the condition does not hold yet"
		}
		return ""
	})
}

// probeRequest asks a worker, through the test's probe (probe_test.go), to open a file and
// a socket from inside, and what /proc says of it.
func probeRequest(t *testing.T, w *process, what string) string {
	t.Helper()
	params, _ := json.Marshal(map[string]string{"what": what})
	res, err := rpc.Await(func(done rpc.Done) {
		if _, err := w.conn.Call(methodProbe, params, done); err != nil {
			done(nil, err)
		}
	})
	if err != nil {
		t.Fatalf("probe %s: %v", what, err)
	}
	var s string
	_ = json.Unmarshal(res, &s)
	return s
}

// A worker can open no file, connect to no socket (TCP, and a unix socket the test
// listens on), and gains no privileges.
func TestAWorkerOpensNoFileAndNoSocket(t *testing.T) {
	e := sandbox.Probe()
	switch {
	case runtime.GOOS != "linux" || runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64":
		t.Skip("a worker takes files and sockets from itself on Linux (amd64, arm64) only: docs/codemode.md")
	case e.Paths == "":
		t.Skip("Landlock is missing on this machine: a worker's files are not taken from it here")
	case !strings.Contains(e.Network, "namespace"):
		t.Skipf("no network namespace on this machine (network none: %q)", e.Network)
	}
	log, _ := testkit.Log(t)
	p := newPool(t, Config{Logger: log})
	w, err := p.take(context.Background(), Caller{Key: "probe"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.end(w)
	dir := t.TempDir()
	file := filepath.Join(dir, "secret")
	if err := os.WriteFile(file, []byte("key"), 0o644); err != nil {
		t.Fatal(err)
	}
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer tcp.Close()
	unix, err := net.Listen("unix", filepath.Join(dir, "sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close()
	for _, what := range []string{"open " + file, "tcp " + tcp.Addr().String(), "unix " + filepath.Join(dir, "sock"), "open /etc/hostname"} {
		if got := probeRequest(t, w, what); !strings.HasPrefix(got, "denied") {
			t.Errorf("%s from the worker: %s", what, got)
		}
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", w.p.Pid()))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"NoNewPrivs:\t1", "Seccomp:\t2"} {
		if !strings.Contains(string(status), want) {
			t.Errorf("the worker's status lacks %q:\n%s", want, status)
		}
	}
	ours, _ := os.Readlink("/proc/self/ns/net")
	theirs, _ := os.Readlink(fmt.Sprintf("/proc/%d/ns/net", w.p.Pid()))
	if theirs == "" || theirs == ours {
		t.Errorf("the worker's network namespace is %q, the node's %q", theirs, ours)
	}
}

// With every worker slot held by idle workers, a new caller's run takes the slot of one of
// them rather than waiting for their idle time to pass.
func TestANewCallerTakesTheSlotOfAnIdleWorker(t *testing.T) {
	p := newPool(t, Config{MaxLive: 1, MaxIdle: 1})
	for _, c := range []string{"dave", "erin"} {
		if out := p.Run(context.Background(), Caller{Key: c}, &echoHost{}, names, codemode.Bounds{}, `1`); out.Error != nil {
			t.Fatalf("%s: %v", c, out.Error)
		}
	}
	if st := p.Stats(); st.Started != 2 {
		t.Errorf("stats %+v, want 2 started", st)
	}
}

// The node holds a run's calls bound against its worker too: a worker that asks for more
// calls than the bound (one whose program got out of the interpreter's hands) is refused
// past it. The test plays the worker over in-memory pipes.
func TestTheNodeHoldsTheCallsBoundAgainstItsWorker(t *testing.T) {
	fromWorker, toNode := io.Pipe()
	fromNode, toWorker := io.Pipe()
	w := &process{}
	w.conn = rpc.NewConn(fromWorker, toWorker, rpc.Closers{fromWorker, toWorker}, rpc.ConnOptions{Handle: w.handle})
	defer w.conn.Close()
	worker := rpc.NewConn(fromNode, toNode, rpc.Closers{fromNode, toNode}, rpc.ConnOptions{Handle: func(*rpc.Message) {}})
	defer worker.Close()
	h := &echoHost{}
	w.cur = &current{ctx: context.Background(), host: h, b: codemode.Bounds{Calls: 2}, calls: map[string]context.CancelCauseFunc{}}
	for i := range 3 {
		res, err := rpc.CallWait(context.Background(), worker, methodCall, json.RawMessage(`{"name":"t.echo","arguments":{"text":"x"}}`), nil)
		switch {
		case i < 2 && (err != nil || !strings.Contains(string(res), `"x"`)):
			t.Errorf("call %d within the bound: %s %v", i, res, err)
		case i == 2 && (err == nil || !strings.Contains(err.Error(), "--run-max-calls")):
			t.Errorf("call %d past the bound: %s %v, want it refused naming --run-max-calls", i, res, err)
		}
	}
	if len(h.calls) != 2 {
		t.Errorf("the host made %d calls, want 2", len(h.calls))
	}
}
