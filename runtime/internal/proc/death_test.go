//go:build linux || darwin

package proc

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
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
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	node := exec.Command(exe)
	node.Env = append(os.Environ(), helperEnv+"=node", "PROC_TEST_DIR="+dir,
		`PROC_TEST_SCRIPT=setsid sh -c 'echo $$ > daemon; exec sleep 300' </dev/null >/dev/null 2>&1 & sleep 300 & echo $! > child; exec sleep 300`)
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
	daemon := waitPidFile(t, filepath.Join(dir, "daemon"))
	child := waitPidFile(t, filepath.Join(dir, "child"))
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
	if adoptsOrphans {
		// Linux signals the node's children only: the rest is left to the bundle.
		want = map[string]int{"the bundle": leader}
	}
	deadline := time.Now().Add(15 * time.Second)
	for what, pid := range want {
		for running(pid) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if running(pid) {
			t.Errorf("%s (%d) still runs after the node was killed", what, pid)
		}
	}
}

func waitPidFile(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(path); err == nil && strings.HasSuffix(string(b), "\n") {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatalf("pid file %q: %v", b, err)
			}
			return pid
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no pid in %s", path)
	return 0
}
