package cli_test

import (
	"github.com/toolnode/toolnode/runtime/internal/testkit"

	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnode/toolnode/runtime/internal/cli"
)

// The test binary doubles as the node (TOOLNODE_TEST_MAIN) and as a bundle (testkit's fake
// bundle, or TOOLNODE_GOSDK_BUNDLE for one built with the official Go SDK), so the tests
// run real processes without a separate build.
func TestMain(m *testing.M) {
	testkit.RunIfChild()
	switch {
	case os.Getenv("TOOLNODE_GOSDK_BUNDLE") == "1":
		goSDKBundle()
		os.Exit(0)
	case os.Getenv(tracedBundleEnv) == "1":
		if err := tracedBundle(); err != nil {
			fmt.Fprintln(os.Stderr, "traced bundle:", err)
			os.Exit(1)
		}
		os.Exit(0)
	case os.Getenv("TOOLNODE_TEST_MAIN") == "1":
		os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

type nodeRun struct {
	session *mcp.ClientSession
	cmd     *exec.Cmd
	logs    *testkit.SyncBuffer
}

// startNode runs `toolnode serve args...` as a child and connects the official Go SDK client
// to its stdio front.
func startNode(t *testing.T, opts *mcp.ClientOptions, env []string, args ...string) *nodeRun {
	t.Helper()
	return startNodeAt(t, "", opts, env, args...)
}

// startNodeAt is startNode with the client speaking protocol version (its latest when "").
func startNodeAt(t *testing.T, version string, opts *mcp.ClientOptions, env []string, args ...string) *nodeRun {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, append([]string{"serve"}, args...)...)
	cmd.Env = append(os.Environ(), append(env, "TOOLNODE_TEST_MAIN=1")...)
	logs := &testkit.SyncBuffer{}
	cmd.Stderr = logs
	client := mcp.NewClient(&mcp.Implementation{Name: "toolnode-test", Version: "1"}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sess, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect to node: %v\nnode log:\n%s", err, logs)
	}
	r := &nodeRun{session: sess, cmd: cmd, logs: logs}
	t.Cleanup(func() {
		sess.Close()
		if strings.Contains(logs.String(), "DATA RACE") {
			t.Error("the race detector found a data race in the node")
		}
		if t.Failed() {
			t.Logf("node log:\n%s", logs)
		}
	})
	return r
}

func callText(t *testing.T, s *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	var sb strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			sb.WriteString(tc.Text)
		}
	}
	return sb.String(), res.IsError
}

func toolNames(t *testing.T, s *mcp.ClientSession) map[string]*mcp.Tool {
	t.Helper()
	names := map[string]*mcp.Tool{}
	for tool, err := range s.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatalf("list tools: %v", err)
		}
		names[tool.Name] = tool
	}
	return names
}

func TestCallsRoutedWith32InFlightAcrossThreeBundles(t *testing.T) {
	dir := t.TempDir()
	bundles := []string{"alpha", "beta", "gamma"}
	for _, b := range bundles {
		testkit.Write(t, dir, testkit.Fake{Name: b})
	}
	run := startNode(t, nil, nil, "--bundles", dir)

	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for i := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := bundles[i%3]
			ms := (31 - i) * 5 // later calls answer first, so a crossed answer would show
			want := fmt.Sprintf("%s:call-%d", b, i)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if _, err := run.session.CallTool(ctx, &mcp.CallToolParams{Name: b + ".sleep", Arguments: map[string]any{"ms": ms}}); err != nil {
				errs <- err
				return
			}
			res, err := run.session.CallTool(ctx, &mcp.CallToolParams{Name: b + ".echo", Arguments: map[string]any{"text": fmt.Sprintf("call-%d", i)}})
			if err != nil {
				errs <- err
				return
			}
			if got := res.Content[0].(*mcp.TextContent).Text; got != want {
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

func TestNamesAndPassThrough(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "alpha", Seats: []string{"node-lamp"}})
	run := startNode(t, nil, nil, "--bundles", dir)
	tools := toolNames(t, run.session)
	for _, want := range []string{"node-lamp.on", "alpha.echo", "alpha.big", "alpha.sleep"} {
		if tools[want] == nil {
			t.Errorf("tool %q missing; have %v", want, keys(tools))
		}
	}
	if tools["alpha.bad name!"] != nil || tools["bad name!"] != nil {
		t.Errorf("a tool breaking the naming rule was listed")
	}
	if !strings.Contains(run.logs.String(), `tool "bad name!" of bundle "alpha" left out`) {
		t.Errorf("the refused name was not logged")
	}
	echo := tools["alpha.echo"]
	if echo.Title != "T echo" || echo.Annotations == nil || !echo.Annotations.ReadOnlyHint {
		t.Errorf("title or annotations changed: %+v", echo)
	}
	schema, _ := json.Marshal(echo.InputSchema)
	if string(schema) != `{"properties":{"text":{"type":"string"}},"type":"object"}` {
		t.Errorf("input schema changed: %s", schema)
	}
	ctx := context.Background()
	_, err := run.session.CallTool(ctx, &mcp.CallToolParams{Name: "nope.nothing"})
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams || !strings.Contains(rpcErr.Message, `"nope.nothing"`) {
		t.Errorf("unknown tool: got %v, want JSON-RPC -32602 naming the tool", err)
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestJunkOnStdoutIsSkipped(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "noisy", Env: map[string]string{"FAKE_JUNK": "1"}})
	run := startNode(t, nil, nil, "--bundles", dir)
	for i := range 3 {
		if got, _ := callText(t, run.session, "noisy.echo", map[string]any{"text": fmt.Sprint(i)}); got != fmt.Sprintf("noisy:%d", i) {
			t.Fatalf("call %d answered %q", i, got)
		}
	}
	if !strings.Contains(run.logs.String(), "skipped a stdout line that is not MCP") {
		t.Errorf("junk line not logged as a warning")
	}
}

func TestTenMiBResultPasses(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "big"})
	run := startNode(t, nil, nil, "--bundles", dir)
	const n = 10 << 20
	got, isErr := callText(t, run.session, "big.big", map[string]any{"bytes": n})
	if isErr || len(got) != n || strings.Trim(got, "x") != "" {
		t.Fatalf("got %d bytes (isError %v), want %d x's", len(got), isErr, n)
	}
}

func TestBundleKilledMidCallFailsTheCall(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "victim"})
	testkit.Write(t, dir, testkit.Fake{Name: "bystander"})
	run := startNode(t, nil, nil, "--bundles", dir)
	pidText, _ := callText(t, run.session, "victim.pid", nil)
	var pid int
	fmt.Sscan(pidText, &pid)

	type outcome struct {
		text  string
		isErr bool
		err   error
		at    time.Time
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := run.session.CallTool(context.Background(), &mcp.CallToolParams{Name: "victim.sleep", Arguments: map[string]any{"ms": 60000}})
		o := outcome{err: err, at: time.Now()}
		if err == nil {
			o.text, o.isErr = res.Content[0].(*mcp.TextContent).Text, res.IsError
		}
		done <- o
	}()
	time.Sleep(300 * time.Millisecond) // let the call reach the bundle
	killed := time.Now()
	if err := killProcess(pid); err != nil {
		t.Fatalf("kill bundle %d: %v", pid, err)
	}
	select {
	case o := <-done:
		if o.err != nil {
			t.Fatalf("call failed at the protocol level: %v", o.err)
		}
		if !o.isErr || !strings.Contains(o.text, `"victim"`) || !strings.Contains(o.text, "signal: killed") {
			t.Errorf("got %q (isError %v), want an error naming the bundle and its exit", o.text, o.isErr)
		}
		if d := o.at.Sub(killed); d > time.Second {
			t.Errorf("the call failed %v after the kill, want within a second", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("call still hanging 5s after its bundle was killed")
	}
	if got, _ := callText(t, run.session, "bystander.echo", map[string]any{"text": "ok"}); got != "bystander:ok" {
		t.Errorf("other bundle answered %q", got)
	}
}

func TestCollisionsResolvedTheSameWayEveryRun(t *testing.T) {
	// Each run starts the three bundles with different delays, so that they come up in
	// different orders; the winner must not change.
	delays := [][3]string{{"0", "150", "300"}, {"300", "150", "0"}, {"150", "0", "300"}}
	for i, d := range delays {
		dir := t.TempDir()
		for j, name := range []string{"lamp-b", "lamp-a", "lamp-c"} {
			testkit.Write(t, dir, testkit.Fake{Name: name, Seats: []string{"node-lamp"}, Env: map[string]string{"FAKE_DELAY_MS": d[j]}})
		}
		run := startNode(t, nil, nil, "--bundles", dir)
		if got, _ := callText(t, run.session, "node-lamp.on", nil); got != "lamp on by lamp-a" {
			t.Errorf("run %d: node-lamp.on served by %q, want lamp-a", i, got)
		}
		tools := toolNames(t, run.session)
		for _, fallback := range []string{"lamp-b.node-lamp.on", "lamp-c.node-lamp.on"} {
			if tools[fallback] == nil {
				t.Errorf("run %d: losing seat verb not exposed as %s", i, fallback)
			}
		}
		if !strings.Contains(run.logs.String(), `exposed as "lamp-b.node-lamp.on"`) {
			t.Errorf("run %d: collision not logged", i)
		}
		run.session.Close()
	}
}

func TestBadManifestsAndSlowBundlesDoNotStopTheOthers(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "good"})
	testkit.Write(t, dir, testkit.Fake{Name: "slow", Env: map[string]string{"FAKE_DELAY_MS": "10000"}, Extra: `"timeouts": {"start": "300ms"}`})
	testkit.Write(t, dir, testkit.Fake{Name: "typo", Extra: `"comand": ["x"]`})
	testkit.Write(t, dir, testkit.Fake{Name: "escape", Command: []string{"./../../bin/sh"}})
	run := startNode(t, nil, nil, "--bundles", dir, "--bundles", t.TempDir())
	if got, _ := callText(t, run.session, "good.echo", map[string]any{"text": "hi"}); got != "good:hi" {
		t.Errorf("good bundle answered %q", got)
	}
	tools := toolNames(t, run.session)
	if tools["slow.echo"] != nil {
		t.Errorf("a bundle past its start timeout was listed")
	}
	logs := run.logs.String()
	for _, want := range []string{
		filepath.Join(dir, "typo", "bundle.json") + `: unknown key \"comand\"`,
		`command \"./../../bin/sh\" escapes the bundle directory`,
		"start timeout of 300ms",
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("log lacks %q", want)
		}
	}
}

func TestProgressReachesTheCallerUnderItsToken(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "slow"})
	got := make(chan *mcp.ProgressNotificationParams, 4)
	run := startNode(t, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) { got <- r.Params },
	}, nil, "--bundles", dir)
	params := &mcp.CallToolParams{Name: "slow.sleep", Arguments: map[string]any{"ms": 50}}
	params.SetProgressToken("client-token-7")
	if _, err := run.session.CallTool(context.Background(), params); err != nil {
		t.Fatal(err)
	}
	select {
	case p := <-got:
		if p.ProgressToken != "client-token-7" || p.Progress != 1 || p.Total != 2 {
			t.Errorf("progress %+v, want token client-token-7, 1 of 2", p)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no progress notification reached the client")
	}
}

func TestBundlesSeeOnlyTheirEnvironment(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "plain", Env: map[string]string{"FAKE_SECRET_CHECK": "TOOLNODE_TEST_SECRET"}})
	testkit.Write(t, dir, testkit.Fake{Name: "listed", Env: map[string]string{"FAKE_SECRET_CHECK": "TOOLNODE_TEST_SECRET"},
		Extra: `"inherit_env": ["TOOLNODE_TEST_SECRET"]`})
	run := startNode(t, nil, []string{"TOOLNODE_TEST_SECRET=hunter2"}, "--bundles", dir)
	if got, _ := callText(t, run.session, "plain.env", nil); got != "false" {
		t.Errorf("a variable not listed in inherit_env reached the bundle")
	}
	if got, _ := callText(t, run.session, "listed.env", nil); got != "true" {
		t.Errorf("a variable listed in inherit_env did not reach the bundle")
	}
}

// exitedWithin reports whether the process ends (or is a zombie) within d.
func exitedWithin(pid int, d time.Duration) bool {
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil || strings.Contains(string(stat), ") Z ") {
			return true
		}
	}
	return false
}

// processesWithMark lists the pids whose environment holds mark.
func processesWithMark(t *testing.T, mark string) []string {
	t.Helper()
	entries, _ := os.ReadDir("/proc")
	var pids []string
	for _, e := range entries {
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err == nil && bytes.Contains(env, []byte(mark)) {
			stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
			if !strings.Contains(string(stat), ") Z ") { // zombies are gone already
				pids = append(pids, e.Name())
			}
		}
	}
	return pids
}

func TestNoBundleProcessOutlivesTheNode(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, how := range []string{"stdin EOF", "SIGTERM", "SIGINT", "SIGKILL"} {
		t.Run(how, func(t *testing.T) {
			if how == "SIGKILL" && subreaper {
				t.Skip("the watchdog's guarantee: on Linux a killed node's bundle processes get the parent-death signal, and their own children nothing (proc's TestNodeKilledLeavesNoBundleRunning checks that much)")
			}
			dir := t.TempDir()
			mark := fmt.Sprintf("TOOLNODE_MARK=%d-%s", time.Now().UnixNano(), strings.ReplaceAll(how, " ", ""))
			k, v, _ := strings.Cut(mark, "=")
			// A wrapper that leaves a grandchild behind, as `npx` or `sh -c` may.
			testkit.Write(t, dir, testkit.Fake{Name: "wrapped", Env: map[string]string{k: v},
				Command: []string{"/bin/sh", "-c", `sleep 600 & "$0"`, exe}})
			testkit.Write(t, dir, testkit.Fake{Name: "direct", Env: map[string]string{k: v}})
			run := startNode(t, nil, nil, "--bundles", dir)
			if got, _ := callText(t, run.session, "wrapped.echo", map[string]any{"text": "up"}); got != "wrapped:up" {
				t.Fatalf("wrapped bundle answered %q", got)
			}
			if n := len(processesWithMark(t, mark)); n < 3 {
				t.Fatalf("found %d marked processes before exit, want at least 3 (sh, sleep, bundles)", n)
			}
			switch how {
			case "stdin EOF":
				run.session.Close()
			case "SIGTERM":
				run.cmd.Process.Signal(syscall.SIGTERM)
			case "SIGINT":
				run.cmd.Process.Signal(os.Interrupt)
			case "SIGKILL":
				// The node stops nothing: its watchdog stops every bundle after their grace.
				run.cmd.Process.Kill()
			}
			// The Go SDK's transport owns the process and reaps it; watch it from /proc
			// instead of waiting on it a second time.
			if !exitedWithin(run.cmd.Process.Pid, 20*time.Second) {
				run.cmd.Process.Signal(syscall.SIGQUIT) // the goroutine dump lands in the log
				time.Sleep(time.Second)
				t.Fatal("node did not exit")
			}
			run.session.Close()
			if how == "SIGKILL" {
				for deadline := time.Now().Add(20 * time.Second); len(processesWithMark(t, mark)) > 0 && time.Now().Before(deadline); {
					time.Sleep(50 * time.Millisecond)
				}
			}
			if left := processesWithMark(t, mark); len(left) > 0 {
				t.Errorf("processes left after the node exited: %v", left)
				for _, p := range left {
					pid := 0
					fmt.Sscan(p, &pid)
					killProcess(pid)
				}
			}
		})
	}
}

func TestNamesForStrictClients(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "alpha", Seats: []string{"node-lamp"}})
	strict := regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	check := func(t *testing.T, s *mcp.ClientSession) {
		tools := toolNames(t, s)
		for name := range tools {
			if !strict.MatchString(name) {
				t.Errorf("tool %q breaks ^[a-zA-Z0-9_-]{1,64}$", name)
			}
		}
		if tools["node-lamp_on"] == nil || tools["alpha_echo"] == nil {
			t.Fatalf("want node-lamp_on and alpha_echo; have %v", keys(tools))
		}
		if got, _ := callText(t, s, "alpha_echo", map[string]any{"text": "x"}); got != "alpha:x" {
			t.Errorf("alpha_echo answered %q", got)
		}
	}
	t.Run("--names underscore", func(t *testing.T) {
		check(t, startNode(t, nil, nil, "--bundles", dir, "--names", "underscore").session)
	})
	t.Run("recognised client", func(t *testing.T) {
		exe, _ := os.Executable()
		cmd := exec.Command(exe, "serve", "--bundles", dir)
		cmd.Env = append(os.Environ(), "TOOLNODE_TEST_MAIN=1")
		client := mcp.NewClient(&mcp.Implementation{Name: "GitHub Copilot CLI", Version: "1"}, nil)
		s, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		check(t, s)
	})
	t.Run("others see canonical names", func(t *testing.T) {
		if toolNames(t, startNode(t, nil, nil, "--bundles", dir).session)["alpha.echo"] == nil {
			t.Error("alpha.echo missing")
		}
	})
}
