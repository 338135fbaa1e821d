package cli_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnode/toolnode/runtime/internal/proc"
	"github.com/toolnode/toolnode/runtime/internal/testkit"
)

// children lists the live bundle processes (those carrying proc.TagVar) whose parent is
// pid, from /proc: the node's other children, such as the macOS supervision's watchdog,
// are not bundles.
func children(t *testing.T, pid int) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip("no /proc to count the bundles' processes in:", err)
	}
	var out []int
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		i := strings.LastIndexByte(string(b), ')')
		fields := strings.Fields(string(b[i+1:])) // state, ppid, ...
		if len(fields) > 1 && fields[0] != "Z" && fields[1] == strconv.Itoa(pid) {
			env, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
			if bytes.Contains(env, []byte(proc.TagVar+"=")) {
				out = append(out, child)
			}
		}
	}
	return out
}

// states counts the bundles of a node by state.
func states(t *testing.T, s *mcp.ClientSession) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, b := range status(t, s) {
		out[b["state"].(string)]++
	}
	return out
}

// fillSurfaces runs a node over dir until each of its want bundles has shown its surface
// and gone to sleep, then stops it: the state directory then holds every surface.
func fillSurfaces(t *testing.T, dir, state string, want int, args ...string) {
	t.Helper()
	r := startNode(t, nil, nil, append([]string{"--bundles", dir, "--state-dir", state, "--watch=false"}, args...)...)
	eventually(t, time.Minute, func() string {
		if st := states(t, r.session); st["asleep"] != want {
			return fmt.Sprintf("bundle states %v, want %d asleep", st, want)
		}
		if kids := children(t, r.cmd.Process.Pid); len(kids) != 0 {
			return fmt.Sprintf("bundle processes %v still run after going to sleep", kids)
		}
		return ""
	})
	r.session.Close()
}

// TestFiftyLazyBundlesCostNothingUntilCalled: with their surfaces cached, 50 lazy
// bundles are listed with no process of theirs running, and a call starts exactly one.
func TestFiftyLazyBundlesCostNothingUntilCalled(t *testing.T) {
	dir, state := t.TempDir(), t.TempDir()
	const n = 50
	for i := range n {
		testkit.Write(t, dir, testkit.Fake{Name: fmt.Sprintf("lz%02d", i), Extra: `"start": "lazy"`})
	}
	fillSurfaces(t, dir, state, n)

	r := startNode(t, nil, nil, "--bundles", dir, "--state-dir", state, "--watch=false")
	tools := toolNames(t, r.session)
	for i := range n {
		if tools[fmt.Sprintf("lz%02d.echo", i)] == nil {
			t.Fatalf("lz%02d.echo is not listed; %d tools", i, len(tools))
		}
	}
	if kids := children(t, r.cmd.Process.Pid); len(kids) != 0 {
		t.Fatalf("%d tools listed, but bundle processes %v run", len(tools), kids)
	}
	if st := states(t, r.session); st["asleep"] != n {
		t.Fatalf("bundle states %v, want %d asleep", st, n)
	}
	if got, isErr := callText(t, r.session, "lz07.echo", map[string]any{"text": "hi"}); isErr || got != "lz07:hi" {
		t.Fatalf("lz07.echo: %q (error %v)", got, isErr)
	}
	if kids := children(t, r.cmd.Process.Pid); len(kids) != 1 {
		t.Fatalf("after one call, bundle processes %v, want exactly one", kids)
	}
	st := status(t, r.session)
	if st["lz07"]["state"] != "ready" || st["lz08"]["state"] != "asleep" {
		t.Errorf("lz07 is %v and lz08 %v, want ready and asleep", st["lz07"]["state"], st["lz08"]["state"])
	}
}

// TestAStaleSurfaceIsRefreshed: a cached surface that no longer matches what the bundle
// shows is replaced when the bundle starts, and clients are told the list changed; one
// cached for another manifest is not used at all.
func TestAStaleSurfaceIsRefreshed(t *testing.T) {
	dir, state := t.TempDir(), t.TempDir()
	surface := map[string]string{"FAKE_SURFACE": "1"}
	testkit.Write(t, dir, testkit.Fake{Name: "lazy", Extra: `"start": "lazy"`, Env: surface})
	fillSurfaces(t, dir, state, 1)
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

	var changes listChanges
	r := startNode(t, changes.options(), nil, "--bundles", dir, "--state-dir", state, "--watch=false")
	schema := func() string {
		tool := toolNames(t, r.session)["lazy.echo"]
		if tool == nil {
			t.Fatal("lazy.echo is not listed")
		}
		return fmt.Sprint(tool.InputSchema)
	}
	if got := schema(); !strings.Contains(got, "boolean") {
		t.Fatalf("before any call the schema should come from the cache, got %s", got)
	}
	// Its prompts and resources are listed from the cache too, and a read wakes it.
	if ps := collect(t, r.session.Prompts(context.Background(), nil)); len(ps) != 1 || ps[0].Name != "lazy.greet" {
		t.Fatalf("prompts of the asleep bundle: %v", ps)
	}
	if kids := children(t, r.cmd.Process.Pid); len(kids) != 0 {
		t.Fatalf("listing started bundle processes %v", kids)
	}
	read, err := r.session.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "fake://lazy/readme"})
	if err != nil || len(read.Contents) != 1 || read.Contents[0].Text != "read by lazy" {
		t.Fatalf("read of the asleep bundle's resource: %v %v", read, err)
	}
	if got, isErr := callText(t, r.session, "lazy.echo", map[string]any{"text": "x"}); isErr || got != "lazy:x" {
		t.Fatalf("lazy.echo: %q (error %v)", got, isErr)
	}
	eventually(t, 10*time.Second, func() string {
		if changes.count() == 0 {
			return "no tools/list_changed after the bundle showed another surface"
		}
		return ""
	})
	if got := schema(); !strings.Contains(got, "string") {
		t.Errorf("after the start the schema is %s, want the bundle's", got)
	}
	if b, _ := os.ReadFile(files[0]); !strings.Contains(string(b), real) {
		t.Errorf("the cache was not replaced:\n%s", b)
	}
	r.session.Close()

	// A changed manifest makes the cache stale: the bundle starts once to show its surface.
	testkit.Write(t, dir, testkit.Fake{Name: "lazy", Extra: `"start": "lazy"`, Env: map[string]string{"FAKE_SURFACE": "1", "FAKE_ECHO_TYPE": "integer"}})
	fillSurfaces(t, dir, state, 1)
	r = startNode(t, nil, nil, "--bundles", dir, "--state-dir", state, "--watch=false")
	if got := schema(); !strings.Contains(got, "integer") {
		t.Errorf("after the manifest changed the schema is %s, want integer", got)
	}
}

// TestAnIdleBundleSleepsAndWakesOnDemand: a bundle with an idle_stop is stopped after that
// long without calls, never during one, shows as asleep, and starts again for a call.
func TestAnIdleBundleSleepsAndWakesOnDemand(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "napper", Extra: `"idle_stop": "400ms"`})
	r := startNode(t, nil, nil, "--bundles", dir, "--state-dir", t.TempDir(), "--watch=false")
	first, _ := callText(t, r.session, "napper.pid", nil)
	// A call longer than idle_stop keeps it awake throughout.
	if got, isErr := callText(t, r.session, "napper.sleep", map[string]any{"ms": 900}); isErr {
		t.Fatalf("a call longer than idle_stop failed: %s", got)
	}
	if again, _ := callText(t, r.session, "napper.pid", nil); again != first {
		t.Fatalf("the bundle was restarted during or right after a call: pid %s then %s", first, again)
	}
	eventually(t, 10*time.Second, func() string {
		st := status(t, r.session)["napper"]
		if st["state"] != "asleep" {
			return fmt.Sprintf("state %v, want asleep", st["state"])
		}
		if kids := children(t, r.cmd.Process.Pid); len(kids) != 0 {
			return fmt.Sprintf("asleep, but processes %v run", kids)
		}
		return ""
	})
	if !strings.Contains(r.logs.String(), "bundle idle; stopping it") {
		t.Errorf("the log does not say why the bundle stopped")
	}
	second, isErr := callText(t, r.session, "napper.pid", nil)
	if isErr || second == first || second == "" {
		t.Fatalf("after waking: pid %q (error %v), first pid %s", second, isErr, first)
	}
	if st := status(t, r.session)["napper"]; st["state"] != "ready" {
		t.Errorf("after waking the state is %v", st["state"])
	}
}
