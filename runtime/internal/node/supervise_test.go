package node_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/clock"
	"github.com/toolnode/toolnode/runtime/internal/node"
	"github.com/toolnode/toolnode/runtime/internal/testkit"
)

// bundleStatus is the status of bundle name, or the test fails.
func bundleStatus(t *testing.T, n *node.Node, name string) node.BundleStatus {
	t.Helper()
	for _, st := range n.Status() {
		if st.Name == name {
			return st
		}
	}
	t.Fatalf("no bundle %s in %+v", name, n.Status())
	return node.BundleStatus{}
}

func TestSupervision(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fakes := []testkit.Fake{
		{Name: "steady"},
		// crashy exits 30ms after its handshake for as long as its folder holds the file
		// "crash": removing it is the fix, with no change to the manifest or the program.
		{Name: "crashy", Prelude: "[ -e crash ] && export FAKE_EXIT_AFTER_MS=30"},
		{Name: "slowpoke", Extra: `"timeouts": {"call": "300ms"}`},
		{Name: "pool", Extra: `"instances": 4`},
	}
	var names []string
	for _, f := range fakes {
		testkit.Write(t, dir, f)
		names = append(names, f.Name)
	}
	if err := os.WriteFile(filepath.Join(dir, "crashy", "crash"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// Restarts a few tens of milliseconds apart: the crash loop is reached, and left once
	// fixed, within a second rather than after the default backoff's seconds.
	sup := node.Supervision{Backoff: 20 * time.Millisecond, MaxBackoff: 200 * time.Millisecond}
	n, logs := startNodeWith(t, node.Config{Manifests: testkit.Manifests(t, dir, names...), Supervision: sup})
	s := &testkit.Session{}

	t.Run("a killed bundle is restarted and serves the next call", func(t *testing.T) {
		pidText, _ := call(t, n, s, "steady.pid", nil)
		var pid int
		fmt.Sscan(pidText, &pid)
		testkit.Kill(pid)
		testkit.Eventually(t, 5*time.Second, func() string {
			res, err := callWithin(t, n, s, 10*time.Second, "steady.pid", nil)
			if err != nil || res.IsError {
				return fmt.Sprintf("call failed: %v %v", err, res)
			}
			if res.text() == pidText {
				return "answered by the killed process"
			}
			return ""
		})
		if st := bundleStatus(t, n, "steady"); st.Restarts < 1 || st.State != node.StateReady {
			t.Errorf("status after the restart: %+v", st)
		}
	})

	t.Run("a crash-looping bundle shows its loop, the others serve, and it comes back once fixed", func(t *testing.T) {
		// Status and catalog are read together in the crash loop: each try, every
		// MaxBackoff, leaves it (and lists the tools) for the few milliseconds crashy runs.
		// On a loaded machine crashy may exit before the node's handshake is done: the
		// reason is then the handshake's, and the next exit shows crashy's own.
		testkit.Eventually(t, 15*time.Second, func() string {
			st := bundleStatus(t, n, "crashy")
			if st.State != node.StateCrashLoop {
				return fmt.Sprintf("crashy is %+v", st)
			}
			if _, ok := n.Catalog().Lookup("crashy.echo"); ok {
				return "the crash-looping bundle's tools are still listed"
			}
			if !strings.Contains(st.LastError, "exit status 3") || st.FailuresInARow < 5 || st.Restarts < 5 || st.RetryAt == "" {
				return fmt.Sprintf("the crash loop is not shown with its reason, count and next try: %+v", st)
			}
			return ""
		})
		if got, _ := call(t, n, s, "steady.echo", map[string]any{"text": "ok"}); got != "steady:ok" {
			t.Errorf("steady answered %q", got)
		}
		if err := os.Remove(filepath.Join(dir, "crashy", "crash")); err != nil {
			t.Fatal(err)
		}
		// The next try comes after the backoff reached so far, MaxBackoff at most.
		testkit.Eventually(t, 20*time.Second, func() string {
			res, err := callWithin(t, n, s, 10*time.Second, "crashy.echo", map[string]any{"text": "back"})
			if err != nil || res.IsError || res.text() != "crashy:back" {
				return fmt.Sprintf("crashy answered %v %v; status %+v", res, err, bundleStatus(t, n, "crashy"))
			}
			return ""
		})
		if st := bundleStatus(t, n, "crashy"); st.State != node.StateReady {
			t.Errorf("crashy answers but its state is %+v", st)
		}
	})

	t.Run("a hanging call is cancelled at its timeout and the bundle told", func(t *testing.T) {
		got, isErr := call(t, n, s, "slowpoke.sleep", map[string]any{"ms": 10000})
		if !isErr || !strings.Contains(got, "showed no progress for 300ms") {
			t.Errorf("got %q (isError %v), want a timeout error", got, isErr)
		}
		logs.WaitFor(t, 2*time.Second, "fake bundle slowpoke: cancelled")
	})

	t.Run("a pool spreads calls over its processes", func(t *testing.T) {
		var wg sync.WaitGroup
		pids := make(chan string, 4)
		for i := range 4 {
			wg.Add(1)
			token := fmt.Sprintf("pool-%d", i)
			go func() {
				defer wg.Done()
				raw, err := n.Call(context.Background(), s, json.RawMessage(`{"name":"pool.sleep","arguments":{"ms":2000},"_meta":{"progressToken":"`+token+`"}}`))
				var r result
				if err == nil {
					err = json.Unmarshal(raw, &r)
				}
				if err != nil {
					t.Errorf("pool.sleep: %v", err)
				}
				pids <- r.text()
			}()
			// Each call is in its process, which says so, before the next comes, as calls
			// read one after another from a client's connection do. The calls last 2 s, so
			// that the four are in flight at once even on a loaded machine.
			s.WaitFor(t, 10*time.Second, `"progressToken":"`+token+`"`)
		}
		wg.Wait()
		close(pids)
		distinct := map[string]bool{}
		for p := range pids {
			distinct[p] = true
		}
		if len(distinct) != 4 {
			t.Errorf("4 slow calls ran on %d processes (%v), want 4", len(distinct), distinct)
		}
		if st := bundleStatus(t, n, "pool"); len(st.PIDs) != 4 {
			t.Errorf("pool status: %+v", st)
		}
	})
}

// A call that shows progress runs past its timeout: each progress starts the timeout over.
// The progress comes ten times per timeout, so that a loaded machine's pauses do not end
// the call, and the call lasts half as long again as its timeout.
func TestProgressExtendsTheTimeout(t *testing.T) {
	t.Parallel()
	n, _ := startMemory(t, node.Config{}, testkit.Memory{Name: "ticky", Manifest: `"timeouts": {"call": "1s"}`})
	if got, isErr := call(t, n, &testkit.Session{}, "ticky.ticker", map[string]any{"ms": 1500, "every": 100}); isErr {
		t.Errorf("a call showing progress every 100ms timed out: %q", got)
	}
}

// TestCallLimitsRunByTheNodesClock: a call's time limit is kept on the clock the node is
// given, as its idle_stop is: a call that would sleep ten minutes past its one-minute limit
// times out once that clock passes the minute, with no real minute waited.
func TestCallLimitsRunByTheNodesClock(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC))
	n, _ := startMemory(t, node.Config{Clock: clk}, testkit.Memory{Name: "slow", Manifest: `"timeouts": {"call": "1m"}`})
	s := &testkit.Session{}
	type answer struct {
		r   result
		err error
	}
	got := make(chan answer, 1)
	go func() {
		r, err := callWithin(t, n, s, 30*time.Second, "slow.sleep", map[string]any{"ms": 600000})
		got <- answer{r, err}
	}()
	// The clock may move before the call is sent: its deadline counts from when it is.
	var a answer
	testkit.Eventually(t, 10*time.Second, func() string {
		clk.Advance(10 * time.Second)
		select {
		case a = <-got:
			return ""
		default:
			return "the call is still in flight"
		}
	})
	if a.err != nil || !a.r.IsError || !strings.Contains(a.r.text(), "showed no progress for 1m0s") {
		t.Fatalf("the call ended with %+v, %v; want its idle limit passed", a.r, a.err)
	}
}

func TestABundleThatStopsAnsweringPingsIsRestarted(t *testing.T) {
	t.Parallel()
	n, logs := startFakes(t, node.Config{Supervision: node.Supervision{PingEvery: 200 * time.Millisecond, PingTimeout: 200 * time.Millisecond}},
		testkit.Fake{Name: "wedged", Extra: `"timeouts": {"call": "2s"}`})
	s := &testkit.Session{}
	first, _ := call(t, n, s, "wedged.pid", nil)
	// The call itself hangs until its timeout; meanwhile a ping goes unanswered.
	frozen := make(chan struct{})
	go func() {
		defer close(frozen)
		callWithin(t, n, s, 10*time.Second, "wedged.freeze", nil)
	}()
	testkit.Eventually(t, 10*time.Second, func() string {
		res, err := callWithin(t, n, s, 10*time.Second, "wedged.pid", nil)
		if err != nil || res.IsError {
			return fmt.Sprintf("call failed: %v", err)
		}
		if res.text() == first {
			return "still the wedged process"
		}
		return ""
	})
	if !strings.Contains(logs.String(), "did not answer a ping; killing it") {
		t.Error("the restart was not for the missed ping")
	}
	<-frozen
}

// TestNoDaemonOfABundleOutlivesItsProcess: a bundle that starts a setsid daemon (out of
// its process group and session) each time it starts. When the bundle is killed and
// restarted, the daemon of the killed one is gone; when the node stops, the daemon of the
// last one is gone too. Checked in /proc: not running, not a zombie.
func TestNoDaemonOfABundleOutlivesItsProcess(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("only Linux lets the node follow daemons that left the group")
	}
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("setsid(1) is not installed: cannot start a daemon that leaves the group")
	}
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "daemonic",
		Prelude: "setsid sh -c 'echo $$ >> daemons; exec sleep 300' </dev/null >/dev/null 2>&1 &"})
	daemons := filepath.Join(dir, "daemonic", "daemons")
	n, _ := startNodeWith(t, node.Config{Manifests: testkit.Manifests(t, dir, "daemonic")})
	s := &testkit.Session{}

	first, _ := call(t, n, s, "daemonic.pid", nil)
	pid, err := strconv.Atoi(first)
	if err != nil {
		t.Fatalf("pid %q: %v", first, err)
	}
	daemon1 := testkit.PidFile(t, daemons, 1)
	if !testkit.Alive(daemon1) {
		t.Fatalf("the first daemon %d is not running", daemon1)
	}
	testkit.Kill(pid)
	testkit.Eventually(t, 10*time.Second, func() string {
		if got, _ := call(t, n, s, "daemonic.pid", nil); got == first {
			return "still the killed process"
		}
		return ""
	})
	daemon2 := testkit.PidFile(t, daemons, 2)
	if !daemonGone(daemon1) {
		t.Errorf("the daemon %d of the killed bundle is left after its restart", daemon1)
	}
	if !testkit.Alive(daemon2) {
		t.Fatalf("the second daemon %d is not running", daemon2)
	}
	n.Close(context.Background())
	if !daemonGone(daemon2) {
		t.Errorf("the daemon %d is left after the node stopped", daemon2)
	}
}

// daemonGone reports whether the daemon pid is gone: ended and, where the node reaps what
// it adopted, reaped (elsewhere init reaps orphans, in its own time). A daemon is killed
// at the last step of a stop, so it is given a while to go (a long one on a loaded machine).
func daemonGone(pid int) bool {
	if testkit.Subreaper {
		return testkit.Reaped(pid, 10*time.Second)
	}
	return testkit.Exited(pid, 10*time.Second)
}
