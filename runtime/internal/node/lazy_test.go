package node_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/clock"
	"github.com/toolnode/toolnode/runtime/internal/manifest"
	"github.com/toolnode/toolnode/runtime/internal/node"
	"github.com/toolnode/toolnode/runtime/internal/testkit"
)

// waitState waits until bundle name of n is in state want.
func waitState(t *testing.T, n *node.Node, name string, want node.State) node.BundleStatus {
	t.Helper()
	var got node.BundleStatus
	testkit.Eventually(t, 20*time.Second, func() string {
		for _, st := range n.Status() {
			if got = st; st.Name == name && st.State == want {
				return ""
			}
		}
		return fmt.Sprintf("bundle %s never %s: %+v", name, want, n.Status())
	})
	return got
}

// TestLazyBundlesSleepWakeAndStopCleanly runs lazy bundles in-process through their whole
// life (shown once, asleep, woken by a call, asleep again when idle, listed from the cache
// by a second node) and checks with goleak that nothing is left behind.
func TestLazyBundlesSleepWakeAndStopCleanly(t *testing.T) {
	t.Parallel()
	dir, state := t.TempDir(), t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "a"})
	testkit.Write(t, dir, testkit.Fake{Name: "b"})
	load := func(name string, idle string) *manifest.Manifest {
		m, err := manifest.Load(dir + "/" + name + "/bundle.json")
		if err != nil {
			t.Fatal(err)
		}
		if idle != "" {
			_ = json.Unmarshal([]byte(`"`+idle+`"`), &m.IdleStop)
		}
		return m
	}
	ms := []*manifest.Manifest{load("a", "200ms"), load("b", "")}
	start := func() *node.Node {
		n := node.New(node.Config{Manifests: ms, Lazy: true, StateDir: state, Supervision: node.Supervision{PingEvery: -1}})
		n.Start()
		<-n.Ready()
		return n
	}
	n := start()
	waitState(t, n, "a", node.StateAsleep)
	waitState(t, n, "b", node.StateAsleep)
	if _, ok := n.Catalog().Lookup("b.echo"); !ok {
		t.Fatal("an asleep bundle's tools are not listed")
	}
	s := &testkit.Session{}
	res, err := n.Call(context.Background(), s, json.RawMessage(`{"name":"a.echo","arguments":{"text":"x"}}`))
	if err != nil || !strings.Contains(string(res), "a:x") {
		t.Fatalf("a.echo: %s %v", res, err)
	}
	if st := waitState(t, n, "a", node.StateReady); len(st.PIDs) != 1 {
		t.Errorf("woken bundle has pids %v", st.PIDs)
	}
	waitState(t, n, "a", node.StateAsleep) // idle_stop
	if st := waitState(t, n, "b", node.StateAsleep); len(st.PIDs) != 0 || st.Tools == 0 {
		t.Errorf("asleep bundle b: %+v", st)
	}
	// A bundle woken by a call is stopped by Close like any other.
	_, _ = n.Call(context.Background(), s, json.RawMessage(`{"name":"b.echo","arguments":{"text":"x"}}`))
	n.Close(context.Background())

	n = start()
	defer n.Close(context.Background())
	for _, st := range n.Status() {
		if st.State != node.StateAsleep || st.Tools == 0 {
			t.Errorf("from the cache, bundle %+v", st)
		}
	}
}

// lazyNode runs a node of the bundles in dir named names, caching their surfaces in state.
func lazyNode(t *testing.T, dir, state string, names ...string) (*node.Node, *testkit.SyncBuffer) {
	t.Helper()
	return startNodeWith(t, node.Config{Manifests: testkit.Manifests(t, dir, names...), StateDir: state})
}

// states counts the bundles of a node by state.
func states(n *node.Node) map[node.State]int {
	out := map[node.State]int{}
	for _, st := range n.Status() {
		out[st.State]++
	}
	return out
}

// fillSurfaces runs a node of the bundles named names in dir until each has shown its
// surface and gone to sleep, its processes (those with the mark) gone, then stops it: the
// state directory then holds every surface.
func fillSurfaces(t *testing.T, dir, state string, mark [2]string, names ...string) {
	t.Helper()
	n, _ := lazyNode(t, dir, state, names...)
	testkit.Eventually(t, time.Minute, func() string {
		if st := states(n); st[node.StateAsleep] != len(names) {
			return fmt.Sprintf("bundle states %v, want %d asleep", st, len(names))
		}
		if running := testkit.Marked(mark[0], mark[1]); len(running) != 0 {
			return fmt.Sprintf("bundle processes %v still run after going to sleep", running)
		}
		return ""
	})
	n.Close(context.Background())
}

// TestFiftyLazyBundlesCostNothingUntilCalled: with their surfaces cached, 50 lazy
// bundles are listed with no process of theirs running, and a call starts exactly one.
func TestFiftyLazyBundlesCostNothingUntilCalled(t *testing.T) {
	t.Parallel()
	dir, state := t.TempDir(), t.TempDir()
	k, v := testkit.Mark(t)
	const count = 50
	var names []string
	for i := range count {
		names = append(names, fmt.Sprintf("lz%02d", i))
		testkit.Write(t, dir, testkit.Fake{Name: names[i], Extra: `"start": "lazy"`, Env: map[string]string{k: v}})
	}
	fillSurfaces(t, dir, state, [2]string{k, v}, names...)

	n, _ := lazyNode(t, dir, state, names...)
	for _, name := range names {
		if _, ok := n.Catalog().Lookup(name + ".echo"); !ok {
			t.Fatalf("%s.echo is not listed; %d tools", name, n.Catalog().Len())
		}
	}
	if running := testkit.Marked(k, v); len(running) != 0 {
		t.Fatalf("%d tools listed, but bundle processes %v run", n.Catalog().Len(), running)
	}
	if st := states(n); st[node.StateAsleep] != count {
		t.Fatalf("bundle states %v, want %d asleep", st, count)
	}
	if got, isErr := call(t, n, &testkit.Session{}, "lz07.echo", map[string]any{"text": "hi"}); isErr || got != "lz07:hi" {
		t.Fatalf("lz07.echo: %q (error %v)", got, isErr)
	}
	if running := testkit.Marked(k, v); len(running) != 1 {
		t.Fatalf("after one call, bundle processes %v, want exactly one", running)
	}
	if a, b := bundleStatus(t, n, "lz07").State, bundleStatus(t, n, "lz08").State; a != node.StateReady || b != node.StateAsleep {
		t.Errorf("lz07 is %v and lz08 %v, want ready and asleep", a, b)
	}
}

// TestAStaleSurfaceIsRefreshed: a cached surface that no longer matches what the bundle
// shows is replaced when the bundle starts, and clients are told the list changed; one
// cached for another manifest is not used at all.
func TestAStaleSurfaceIsRefreshed(t *testing.T) {
	t.Parallel()
	dir, state := t.TempDir(), t.TempDir()
	k, v := testkit.Mark(t)
	mark := [2]string{k, v}
	testkit.Write(t, dir, testkit.Fake{Name: "lazy", Extra: `"start": "lazy"`, Surface: true, Env: map[string]string{k: v}})
	fillSurfaces(t, dir, state, mark, "lazy")
	files, _ := filepath.Glob(filepath.Join(state, "surfaces", "lazy-*.json"))
	if len(files) != 1 {
		t.Fatalf("cached surfaces %v, want one", files)
	}
	// The bundle now shows another schema than its cache says, its manifest unchanged.
	cached, _ := os.ReadFile(files[0])
	const real, old = `"text":{"type":"string"}`, `"text":{"type":"boolean"}`
	if !strings.Contains(string(cached), real) {
		t.Fatalf("the cache does not hold echo's schema:\n%s", cached)
	}
	if err := os.WriteFile(files[0], []byte(strings.Replace(string(cached), real, old, 1)), 0o644); err != nil {
		t.Fatal(err)
	}

	n, _ := lazyNode(t, dir, state, "lazy")
	s := &testkit.Session{}
	n.Attach(s)
	defer n.Detach(s)
	schema := func(n *node.Node) string {
		e, ok := n.Catalog().Lookup("lazy.echo")
		if !ok {
			t.Fatal("lazy.echo is not listed")
		}
		var tool struct{ InputSchema json.RawMessage }
		json.Unmarshal(e.JSON, &tool)
		return string(tool.InputSchema)
	}
	if got := schema(n); !strings.Contains(got, "boolean") {
		t.Fatalf("before any call the schema should come from the cache, got %s", got)
	}
	// Its prompts and resources are listed from the cache too, and a read wakes it.
	if ps := n.Prompts().Entries(); len(ps) != 1 || ps[0].Name != "lazy.greet" {
		t.Fatalf("prompts of the asleep bundle: %+v", ps)
	}
	if running := testkit.Marked(k, v); len(running) != 0 {
		t.Fatalf("listing started bundle processes %v", running)
	}
	req, rerr := node.ReadRequest("resources/read", json.RawMessage(`{"uri":"fake://lazy/readme"}`))
	if rerr != nil {
		t.Fatal(rerr)
	}
	read, err := n.ReadResource(context.Background(), node.Detached(s, node.Caller{}, nil), req).Answer()
	var contents struct{ Contents []struct{ Text string } }
	if err != nil || json.Unmarshal(read, &contents) != nil || len(contents.Contents) != 1 || contents.Contents[0].Text != "read by lazy" {
		t.Fatalf("read of the asleep bundle's resource: %s %v", read, err)
	}
	if got, isErr := call(t, n, s, "lazy.echo", map[string]any{"text": "x"}); isErr || got != "lazy:x" {
		t.Fatalf("lazy.echo: %q (error %v)", got, isErr)
	}
	s.WaitFor(t, 10*time.Second, "notifications/tools/list_changed") // the bundle showed another surface
	if got := schema(n); !strings.Contains(got, "string") {
		t.Errorf("after the start the schema is %s, want the bundle's", got)
	}
	if b, _ := os.ReadFile(files[0]); !strings.Contains(string(b), real) {
		t.Errorf("the cache was not replaced:\n%s", b)
	}
	n.Close(context.Background())

	// A changed manifest makes the cache stale: the bundle starts once to show its surface.
	testkit.Write(t, dir, testkit.Fake{Name: "lazy", Extra: `"start": "lazy"`, Surface: true, Env: map[string]string{k: v, "FAKE_ECHO_TYPE": "integer"}})
	fillSurfaces(t, dir, state, mark, "lazy")
	n, _ = lazyNode(t, dir, state, "lazy")
	if got := schema(n); !strings.Contains(got, "integer") {
		t.Errorf("after the manifest changed the schema is %s, want integer", got)
	}
}

// TestAnIdleBundleSleepsAndWakesOnDemand: a bundle with an idle_stop is stopped after that
// long without calls, never during one, shows as asleep, and starts again for a call. The
// node's clock is a fake one: idle_stop passes when the test says.
func TestAnIdleBundleSleepsAndWakesOnDemand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	k, v := testkit.Mark(t)
	testkit.Write(t, dir, testkit.Fake{Name: "napper", Extra: `"idle_stop": "1m"`, Env: map[string]string{k: v}})
	clk := clock.NewFake(time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC))
	n, logs := startNodeWith(t, node.Config{Manifests: testkit.Manifests(t, dir, "napper"), StateDir: t.TempDir(), Clock: clk})
	s := &testkit.Session{}
	first, _ := call(t, n, s, "napper.pid", nil)
	// A call longer than idle_stop keeps it awake throughout: twice idle_stop passes
	// while the call is in flight, and half of it after.
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := n.Call(context.Background(), s, json.RawMessage(`{"name":"napper.sleep","arguments":{"ms":300},"_meta":{"progressToken":"long"}}`)); err != nil {
			t.Error(err)
		}
	}()
	s.WaitFor(t, 10*time.Second, `"progressToken":"long"`)
	clk.Advance(2 * time.Minute)
	<-done
	clk.Advance(30 * time.Second)
	if st := bundleStatus(t, n, "napper"); st.State != node.StateReady {
		t.Fatalf("the bundle is %v during or right after a call", st.State)
	}
	if again, _ := call(t, n, s, "napper.pid", nil); again != first {
		t.Fatalf("the bundle was restarted during or right after a call: pid %s then %s", first, again)
	}
	testkit.Eventually(t, 10*time.Second, func() string {
		clk.Advance(time.Minute)
		if st := bundleStatus(t, n, "napper"); st.State != node.StateAsleep {
			return fmt.Sprintf("state %v, want asleep", st.State)
		}
		if running := testkit.Marked(k, v); len(running) != 0 {
			return fmt.Sprintf("asleep, but processes %v run", running)
		}
		return ""
	})
	if !strings.Contains(logs.String(), "bundle idle; stopping it") {
		t.Errorf("the log does not say why the bundle stopped")
	}
	second, isErr := call(t, n, s, "napper.pid", nil)
	if isErr || second == first || second == "" {
		t.Fatalf("after waking: pid %q (error %v), first pid %s", second, isErr, first)
	}
	if st := bundleStatus(t, n, "napper"); st.State != node.StateReady {
		t.Errorf("after waking the state is %v", st.State)
	}
}

// A bundle woken by a call that starts more slowly than its idle_stop serves that call:
// the call waiting for it keeps it awake, and its idle time counts from when it is ready.
// (The node that counted from the launch failed one of these calls in 4 of 10 runs.)
func TestABundleSlowerToStartThanItsIdleStopServesTheCallThatWokeIt(t *testing.T) {
	t.Parallel()
	n, _ := startMemory(t, node.Config{Lazy: true},
		testkit.Memory{Name: "slow", Manifest: `"idle_stop": "40ms"`, Delay: 200 * time.Millisecond})
	waitState(t, n, "slow", node.StateAsleep)
	for i := range 5 {
		if got, isErr := call(t, n, &testkit.Session{}, "slow.echo", map[string]any{"text": "x"}); isErr || got != "slow:x" {
			t.Fatalf("call %d: %q (error %v)", i, got, isErr)
		}
		waitState(t, n, "slow", node.StateAsleep)
	}
}
