//go:build linux || darwin

package proc

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/testkit"
)

// TestNodeKilledLeavesNoBundleRunning kills a node (this test binary as nodeHelper) with
// SIGKILL, so that it stops nothing itself, and checks what the system does with its bundle:
// a wrapper script that started a daemon out of its group. Linux's parent-death signal
// ends the bundle's own process; the macOS watchdog ends its whole family.
func TestNodeKilledLeavesNoBundleRunning(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("setsid(1) is not installed: cannot start a daemon that leaves the group")
	}
	dir := t.TempDir()
	node, leader := startNode(t, dir,
		`setsid sh -c 'echo $$ > daemon; exec sleep 300' </dev/null >/dev/null 2>&1 & sleep 300 & echo $! > child; exec sleep 300`)
	daemon := testkit.PidFile(t, filepath.Join(dir, "daemon"), 1)
	child := testkit.PidFile(t, filepath.Join(dir, "child"), 1)
	t.Cleanup(func() {
		for _, pid := range []int{leader, daemon, child} {
			if p, err := os.FindProcess(pid); err == nil && running(pid) {
				p.Kill()
			}
		}
	})
	if err := node.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	node.Wait()

	want := map[string]int{"the bundle": leader, "its child in the group": child, "its daemon out of the group": daemon}
	if adoptsOrphans && !inCgroups() {
		// Without cgroups, Linux signals the node's children only: the rest is left to the bundle.
		want = map[string]int{"the bundle": leader}
	}
	testkit.Eventually(t, 15*time.Second, func() string {
		var left []string
		for what, pid := range want {
			if running(pid) {
				left = append(left, fmt.Sprintf("%s (%d)", what, pid))
			}
		}
		if len(left) > 0 {
			return fmt.Sprintf("%s still run after the node was killed", strings.Join(left, ", "))
		}
		return ""
	})
}

// startNode starts this test binary as a node (nodeHelper) whose bundle is the shell script
// script in the folder dir, and returns it with the pid of its bundle.
func startNode(t *testing.T, dir, script string) (*exec.Cmd, int) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	node := exec.Command(exe)
	node.Env = append(os.Environ(), helperEnv+"=node", "PROC_TEST_DIR="+dir, "PROC_TEST_SCRIPT="+script)
	out, err := node.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := node.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "started ") {
		node.Process.Kill()
		node.Wait()
		t.Fatalf("the node did not start its bundle: %q %v", line, err)
	}
	var leader int
	if _, err := fmt.Sscan(strings.TrimPrefix(line, "started "), &leader); err != nil {
		t.Fatal(err)
	}
	return node, leader
}
