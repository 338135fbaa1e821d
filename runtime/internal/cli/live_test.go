package cli_test

import (
	"github.com/toolnode/toolnode/runtime/internal/testkit"

	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// eventually retries check every 20ms until it returns "" or the time runs out, and fails
// with its last complaint.
func eventually(t *testing.T, within time.Duration, check func() string) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		msg := check()
		if msg == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", within, msg)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// listChanges counts notifications/tools/list_changed received by a client.
type listChanges struct {
	mu sync.Mutex
	n  int
}

func (l *listChanges) options() *mcp.ClientOptions {
	return &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		l.mu.Lock()
		l.n++
		l.mu.Unlock()
	}}
}

func (l *listChanges) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n
}

func status(t *testing.T, s *mcp.ClientSession) map[string]map[string]any {
	t.Helper()
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "toolnode.status"})
	if err != nil {
		t.Fatal(err)
	}
	var st struct{ Bundles []map[string]any }
	b, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(b, &st)
	out := map[string]map[string]any{}
	for _, b := range st.Bundles {
		out[b["name"].(string)] = b
	}
	return out
}

func TestHotReload(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "keeper"})
	var changes listChanges
	run := startNode(t, changes.options(), nil, "--bundles", dir)

	t.Run("a new bundle directory starts and its tools appear", func(t *testing.T) {
		before := changes.count()
		// Copy it in the way people do: the directory first, the manifest later, after
		// the node has reloaded for the empty directory already.
		os.MkdirAll(filepath.Join(dir, "newcomer"), 0o755)
		time.Sleep(700 * time.Millisecond)
		testkit.Write(t, dir, testkit.Fake{Name: "newcomer"})
		eventually(t, 5*time.Second, func() string {
			if toolNames(t, run.session)["newcomer.echo"] == nil {
				return "newcomer.echo not listed"
			}
			return ""
		})
		if got, _ := callText(t, run.session, "newcomer.echo", map[string]any{"text": "hi"}); got != "newcomer:hi" {
			t.Errorf("newcomer answered %q", got)
		}
		eventually(t, 2*time.Second, func() string {
			if changes.count() == before {
				return "no tools/list_changed received"
			}
			return ""
		})
	})

	t.Run("an edited manifest restarts the bundle", func(t *testing.T) {
		testkit.Write(t, dir, testkit.Fake{Name: "newcomer", Env: map[string]string{"FAKE_NAME": "renamed"}})
		eventually(t, 5*time.Second, func() string {
			if got, _ := callText(t, run.session, "newcomer.echo", map[string]any{"text": "x"}); got != "renamed:x" {
				return fmt.Sprintf("still answering %q", got)
			}
			return ""
		})
	})

	t.Run("a manifest that turns invalid leaves the bundle running", func(t *testing.T) {
		os.WriteFile(filepath.Join(dir, "newcomer", "bundle.json"), []byte(`{"name": "newcomer", "oops": `), 0o644)
		eventually(t, 5*time.Second, func() string {
			if !strings.Contains(run.logs.String(), "manifest turned invalid; the bundle keeps running as it was") {
				return "the broken manifest was not logged"
			}
			return ""
		})
		if got, _ := callText(t, run.session, "newcomer.echo", map[string]any{"text": "y"}); got != "renamed:y" {
			t.Errorf("after the manifest broke, newcomer answered %q", got)
		}
	})

	t.Run("a removed directory stops the bundle and fails its calls in flight", func(t *testing.T) {
		done := make(chan string, 1)
		go func() {
			res, err := run.session.CallTool(context.Background(), &mcp.CallToolParams{Name: "newcomer.sleep", Arguments: map[string]any{"ms": 30000}})
			if err != nil {
				done <- err.Error()
				return
			}
			done <- res.Content[0].(*mcp.TextContent).Text
		}()
		time.Sleep(200 * time.Millisecond)
		os.RemoveAll(filepath.Join(dir, "newcomer"))
		select {
		case got := <-done:
			if !strings.Contains(got, `"newcomer"`) || !strings.Contains(got, "stopped") {
				t.Errorf("call in flight ended with %q, want an error saying the bundle stopped", got)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the call in flight to a removed bundle hung")
		}
		eventually(t, 5*time.Second, func() string {
			if toolNames(t, run.session)["newcomer.echo"] != nil {
				return "newcomer.echo still listed"
			}
			return ""
		})
		if got, _ := callText(t, run.session, "keeper.echo", map[string]any{"text": "z"}); got != "keeper:z" {
			t.Errorf("the other bundle answered %q", got)
		}
	})
}

func TestReplacedExecutableRestartsTheBundle(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	script := func(comment string) {
		os.WriteFile(filepath.Join(dir, "scripted", "run"), []byte("#!/bin/sh\n# "+comment+"\nexec "+exe+"\n"), 0o755)
	}
	testkit.Write(t, dir, testkit.Fake{Name: "scripted", Command: []string{"./run"}})
	script("first")
	run := startNode(t, nil, nil, "--bundles", dir)
	first, _ := callText(t, run.session, "scripted.pid", nil)
	// Replace the program the way a build does: write a new file and rename it over.
	tmp := filepath.Join(dir, "scripted", "run.new")
	os.WriteFile(tmp, []byte("#!/bin/sh\n# second build\nexec "+exe+"\n"), 0o755)
	os.Rename(tmp, filepath.Join(dir, "scripted", "run"))
	eventually(t, 5*time.Second, func() string {
		if pid, _ := callText(t, run.session, "scripted.pid", nil); pid == first {
			return "still the first process"
		}
		return ""
	})
}

func TestSupervision(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "steady"})
	// crashy exits 30ms after its handshake for as long as its folder holds the file
	// "crash": removing it is the fix, with no change to the manifest or the program.
	writeWrappedFake(t, dir, "crashy", "[ -e crash ] && export FAKE_EXIT_AFTER_MS=30")
	os.WriteFile(filepath.Join(dir, "crashy", "crash"), nil, 0o644)
	testkit.Write(t, dir, testkit.Fake{Name: "slowpoke", Extra: `"timeouts": {"call": "300ms"}`})
	testkit.Write(t, dir, testkit.Fake{Name: "pool", Extra: `"instances": 4`})
	run := startNode(t, nil, nil, "--bundles", dir)

	t.Run("a killed bundle is restarted and serves the next call", func(t *testing.T) {
		pidText, _ := callText(t, run.session, "steady.pid", nil)
		var pid int
		fmt.Sscan(pidText, &pid)
		killProcess(pid)
		eventually(t, 5*time.Second, func() string {
			res, err := run.session.CallTool(context.Background(), &mcp.CallToolParams{Name: "steady.pid"})
			if err != nil || res.IsError {
				return fmt.Sprintf("call failed: %v %v", err, res)
			}
			if got := res.Content[0].(*mcp.TextContent).Text; got == pidText {
				return "answered by the killed process"
			}
			return ""
		})
		if st := status(t, run.session)["steady"]; st["restarts"].(float64) < 1 || st["state"] != "ready" {
			t.Errorf("status after the restart: %v", st)
		}
	})

	t.Run("a crash-looping bundle shows its loop, the others serve, and it comes back once fixed", func(t *testing.T) {
		eventually(t, 15*time.Second, func() string {
			if st := status(t, run.session)["crashy"]; st["state"] != "crash-loop" {
				return fmt.Sprintf("crashy is %v", st)
			}
			return ""
		})
		st := status(t, run.session)["crashy"]
		if !strings.Contains(st["last_error"].(string), "exit status 3") || st["failures_in_a_row"].(float64) < 5 ||
			st["restarts"].(float64) < 5 || st["retry_at"] == nil {
			t.Errorf("the crash loop is not shown with its reason, count and next try: %v", st)
		}
		if toolNames(t, run.session)["crashy.echo"] != nil {
			t.Error("the crash-looping bundle's tools are still listed")
		}
		if got, _ := callText(t, run.session, "steady.echo", map[string]any{"text": "ok"}); got != "steady:ok" {
			t.Errorf("steady answered %q", got)
		}
		if err := os.Remove(filepath.Join(dir, "crashy", "crash")); err != nil {
			t.Fatal(err)
		}
		// The next try comes after the backoff reached so far, a few seconds here.
		eventually(t, 20*time.Second, func() string {
			res, err := run.session.CallTool(context.Background(), &mcp.CallToolParams{Name: "crashy.echo", Arguments: map[string]any{"text": "back"}})
			if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != "crashy:back" {
				return fmt.Sprintf("crashy answered %v %v; status %v", res, err, status(t, run.session)["crashy"])
			}
			return ""
		})
		if st := status(t, run.session)["crashy"]; st["state"] != "ready" {
			t.Errorf("crashy answers but its state is %v", st)
		}
	})

	t.Run("a hanging call is cancelled at its timeout and the bundle told", func(t *testing.T) {
		got, isErr := callText(t, run.session, "slowpoke.sleep", map[string]any{"ms": 10000})
		if !isErr || !strings.Contains(got, "showed no progress for 300ms") {
			t.Errorf("got %q (isError %v), want a timeout error", got, isErr)
		}
		eventually(t, 2*time.Second, func() string {
			if !strings.Contains(run.logs.String(), "fake bundle slowpoke: cancelled") {
				return "the bundle was not sent notifications/cancelled"
			}
			return ""
		})
	})

	t.Run("progress extends the timeout", func(t *testing.T) {
		got, isErr := callText(t, run.session, "slowpoke.ticker", map[string]any{"ms": 1000, "every": 100})
		if isErr {
			t.Errorf("a call showing progress every 100ms timed out: %q", got)
		}
	})

	t.Run("a pool spreads calls over its processes", func(t *testing.T) {
		var wg sync.WaitGroup
		pids := make(chan string, 4)
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got, _ := callText(t, run.session, "pool.sleep", map[string]any{"ms": 500})
				pids <- got
			}()
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
		if st := status(t, run.session)["pool"]; len(st["pids"].([]any)) != 4 {
			t.Errorf("pool status: %v", st)
		}
	})
}

func TestABundleThatStopsAnsweringPingsIsRestarted(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "wedged", Extra: `"timeouts": {"call": "2s"}`})
	run := startNode(t, nil, nil, "--bundles", dir, "--ping-every", "200ms")
	first, _ := callText(t, run.session, "wedged.pid", nil)
	// The call itself hangs until its timeout; meanwhile a ping goes unanswered.
	go run.session.CallTool(context.Background(), &mcp.CallToolParams{Name: "wedged.freeze"})
	eventually(t, 10*time.Second, func() string {
		res, err := run.session.CallTool(context.Background(), &mcp.CallToolParams{Name: "wedged.pid"})
		if err != nil || res.IsError {
			return fmt.Sprintf("call failed: %v", err)
		}
		if got := res.Content[0].(*mcp.TextContent).Text; got == first {
			return "still the wedged process"
		}
		return ""
	})
	if !strings.Contains(run.logs.String(), "did not answer a ping; killing it") {
		t.Error("the restart was not for the missed ping")
	}
}
