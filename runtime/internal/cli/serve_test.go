package cli_test

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/cli"
	"github.com/toolnode/toolnode/runtime/internal/proc"
	"github.com/toolnode/toolnode/runtime/internal/testkit"
	"github.com/toolnode/toolnode/runtime/internal/testkit/nodekit"
	"github.com/toolnode/toolnode/runtime/internal/upstream/upstreamtest"
)

// What these tests hold needs the binary as a whole: its flags, signals, its exit, the
// memory of its process, and peers that are programs. The behaviour of the node and its
// fronts is tested beside their packages, in process.

// mainEnv makes the test binary run as toolnode itself.
const mainEnv = "TOOLNODE_TEST_MAIN"

// The test binary doubles as the node (mainEnv) and as a bundle (testkit's fake bundle, or
// upstreamtest's, built with the official Go SDK), so the tests run real processes without
// a separate build.
func TestMain(m *testing.M) {
	testkit.RunIfChild()
	upstreamtest.RunIfChild()
	if os.Getenv(mainEnv) == "1" {
		os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// toolnode is the command `toolnode args...`, run by the test binary.
func toolnode(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), mainEnv+"=1")
	return cmd
}

func TestNoBundleProcessOutlivesTheNode(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, how := range []string{"stdin EOF", "SIGTERM", "SIGINT", "SIGKILL"} {
		t.Run(how, func(t *testing.T) {
			if how == "SIGKILL" && testkit.Subreaper && !proc.Contained() {
				t.Skip("the node cannot make cgroups here (no writable cgroup v2 hierarchy): a killed node's bundle processes get the parent-death signal, and their own children nothing (proc's TestNodeKilledLeavesNoBundleRunning checks that much)")
			}
			dir := t.TempDir()
			k, v := testkit.Mark(t)
			// A wrapper that leaves a grandchild behind, as `npx` or `sh -c` may.
			testkit.Write(t, dir, testkit.Fake{Name: "wrapped", Env: map[string]string{k: v},
				Command: []string{"/bin/sh", "-c", `sleep 600 & "$0"`, exe}})
			testkit.Write(t, dir, testkit.Fake{Name: "direct", Env: map[string]string{k: v}})
			session, run := nodekit.ChildStdio(t, toolnode(t, "serve", "--bundles", dir), "", nil)
			if got, _ := nodekit.CallText(t, session, "wrapped.echo", map[string]any{"text": "up"}); got != "wrapped:up" {
				t.Fatalf("wrapped bundle answered %q", got)
			}
			if n := len(testkit.Marked(k, v)); n < 3 {
				t.Fatalf("found %d marked processes before exit, want at least 3 (sh, sleep, bundles)", n)
			}
			switch how {
			case "stdin EOF":
				session.Close()
			case "SIGTERM":
				run.Cmd.Process.Signal(syscall.SIGTERM)
			case "SIGINT":
				run.Cmd.Process.Signal(os.Interrupt)
			case "SIGKILL":
				// The node stops nothing: its watchdog stops every bundle after their grace.
				run.Cmd.Process.Kill()
			}
			// The Go SDK's transport owns the process and reaps it; watch it from /proc
			// instead of waiting on it a second time.
			if !testkit.Exited(run.Pid(), 20*time.Second) {
				run.Cmd.Process.Signal(syscall.SIGQUIT) // the node dumps its goroutines to the log and exits
				testkit.Exited(run.Pid(), 5*time.Second)
				t.Fatal("node did not exit")
			}
			session.Close()
			if how == "SIGKILL" {
				// Nothing tells when the watchdog (the reaper, on Linux) has stopped the
				// bundles, after their grace.
				testkit.Until(20*time.Second, func() bool { return len(testkit.Marked(k, v)) == 0 })
			}
			if left := testkit.Marked(k, v); len(left) > 0 {
				t.Errorf("processes left after the node exited: %v", left)
				for _, pid := range left {
					testkit.Kill(pid)
				}
			}
		})
	}
}
