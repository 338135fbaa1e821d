package node_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/node"
	"github.com/toolnode/toolnode/runtime/internal/sandbox"
	"github.com/toolnode/toolnode/runtime/internal/testkit"
)

func TestABundleKilledAtItsMemoryBoundIsRestartedAndItsCallSaysSo(t *testing.T) {
	t.Parallel()
	if mech := sandbox.Probe().Memory; !strings.HasPrefix(mech, "cgroup") {
		t.Skipf("this machine bounds memory by %q, not a cgroup: the kernel does not kill at the bound", mech)
	}
	n, logs := startFakes(t, node.Config{Supervision: node.Supervision{Backoff: 50 * time.Millisecond}},
		testkit.Fake{Name: "hog", Extra: `"sandbox": {"memory": "64MiB"}`})
	s := &testkit.Session{}
	before, _ := call(t, n, s, "hog.pid", nil)
	// 200 MB of text, and as much again to send it: far past the bound.
	res, err := callWithin(t, n, s, 30*time.Second, "hog.big", map[string]any{"bytes": 200 << 20})
	var said string
	switch {
	case err != nil:
		said = err.Error()
	case res.IsError:
		said = res.text()
	default:
		t.Fatalf("200 MB came back under a 64 MiB bound (%d bytes)", len(res.text()))
	}
	for _, want := range []string{"killed at its memory bound of 64 MiB", "may have acted"} {
		if !strings.Contains(said, want) {
			t.Errorf("the call's error %q does not say %q", said, want)
		}
	}
	logs.WaitFor(t, 10*time.Second, "bundle hog: killed at its memory bound of 64 MiB")
	testkit.Eventually(t, 10*time.Second, func() string {
		res, err := callWithin(t, n, s, 10*time.Second, "hog.pid", nil)
		if err != nil || res.IsError || res.text() == before {
			return fmt.Sprintf("no restarted process answers: %v %+v", err, res)
		}
		return ""
	})
	st := bundleStatus(t, n, "hog")
	if st.Restarts < 1 || !strings.Contains(st.LastError, "killed at its memory bound of 64 MiB") ||
		!strings.Contains(st.Sandbox, "memory 64 MiB (cgroup") {
		t.Errorf("status: %+v", st)
	}
}

func TestTheNodesSandboxProfileBoundsBundlesThatNameNone(t *testing.T) {
	t.Parallel()
	e := sandbox.Probe()
	if e.Paths == "" {
		t.Skip("this machine has no Landlock: the standard profile's files are not confined")
	}
	n, logs := startFakes(t, node.Config{Sandbox: sandbox.Standard},
		testkit.Fake{Name: "plain"}, testkit.Fake{Name: "own", Extra: `"sandbox": {"pids": 100}`})
	if st := bundleStatus(t, n, "plain"); !strings.Contains(st.Sandbox, "memory 1 GiB") || !strings.Contains(st.Sandbox, "paths") {
		t.Errorf("plain: %+v", st)
	}
	if st := bundleStatus(t, n, "own"); strings.Contains(st.Sandbox, "memory") || !strings.Contains(st.Sandbox, "pids 100") {
		t.Errorf("own: %+v", st)
	}
	if text, isErr := call(t, n, &testkit.Session{}, "plain.echo", map[string]any{"text": "hi"}); isErr || text != "plain:hi" {
		t.Errorf("a sandboxed fake answered %q", text)
	}
	if !strings.Contains(logs.String(), "sandbox") {
		t.Errorf("the start did not log the sandbox: %s", logs.String())
	}
}

func TestABundleRequiringWhatThisMachineLacksDoesNotStart(t *testing.T) {
	// Not parallel: it sets the environment of the test binary.
	t.Setenv(sandbox.WithoutVar, "cpu") // as on a machine without a cpu controller
	n, logs := startFakes(t, node.Config{}, testkit.Fake{Name: "strict", Extra: `"sandbox": {"cpu": 1, "require": true}`})
	st := bundleStatus(t, n, "strict")
	if len(st.PIDs) != 0 || !strings.Contains(st.LastError, "requires cpu") || len(st.SandboxNotEnforced) != 1 {
		t.Errorf("status: %+v", st)
	}
	if !strings.Contains(logs.String(), "not enforced on this machine: cpu") {
		t.Errorf("log: %s", logs.String())
	}
	if text, _ := call(t, n, &testkit.Session{}, "toolnode.status", nil); !strings.Contains(text, "sandbox: cpu 1 core (NOT ENFORCED on this machine)") {
		t.Errorf("toolnode.status says %s", text)
	}
}
