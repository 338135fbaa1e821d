package cli_test

import (
	"github.com/toolnode/toolnode/runtime/internal/testkit"

	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestNoDaemonOfABundleOutlivesItsProcess: a bundle that starts a setsid daemon (out of
// its process group and session) each time it starts. When the bundle is killed and
// restarted, the daemon of the killed one is gone; when the node exits, the daemon of the
// last one is gone too. Checked in /proc: not running, not a zombie.
func TestNoDaemonOfABundleOutlivesItsProcess(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("only Linux lets the node follow daemons that left the group")
	}
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("setsid(1) is not installed: cannot start a daemon that leaves the group")
	}
	dir := t.TempDir()
	writeWrappedFake(t, dir, "daemonic", "setsid sh -c 'echo $$ >> daemons; exec sleep 300' </dev/null >/dev/null 2>&1 &")
	daemons := filepath.Join(dir, "daemonic", "daemons")
	run := startNode(t, nil, nil, "--bundles", dir)

	first, _ := callText(t, run.session, "daemonic.pid", nil)
	pid, err := strconv.Atoi(first)
	if err != nil {
		t.Fatalf("pid %q: %v", first, err)
	}
	daemon1 := nthPid(t, daemons, 1)
	if !procAlive(daemon1) {
		t.Fatalf("the first daemon %d is not running", daemon1)
	}
	killProcess(pid)
	eventually(t, 10*time.Second, func() string {
		if got, _ := callText(t, run.session, "daemonic.pid", nil); got == first {
			return "still the killed process"
		}
		return ""
	})
	daemon2 := nthPid(t, daemons, 2)
	if procLeft(daemon1) {
		t.Errorf("the daemon %d of the killed bundle is left after its restart", daemon1)
	}
	if !procAlive(daemon2) {
		t.Fatalf("the second daemon %d is not running", daemon2)
	}
	run.session.Close()
	if procLeft(daemon2) {
		t.Errorf("the daemon %d is left after the node exited", daemon2)
	}
}

// writeWrappedFake writes the fake bundle name whose command is a shell script running
// prelude in the bundle's folder, then the fake bundle itself.
func writeWrappedFake(t *testing.T, dir, name, prelude string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	testkit.Write(t, dir, testkit.Fake{Name: name, Command: []string{"./run"}})
	if err := os.WriteFile(filepath.Join(dir, name, "run"), []byte("#!/bin/sh\n"+prelude+"\nexec "+exe+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// nthPid waits for the file to hold n pids and returns the nth.
func nthPid(t *testing.T, path string, n int) int {
	t.Helper()
	var pids []string
	eventually(t, 5*time.Second, func() string {
		b, _ := os.ReadFile(path)
		if pids = strings.Fields(string(b)); len(pids) < n {
			return fmt.Sprintf("%d daemons started, want %d", len(pids), n)
		}
		return ""
	})
	pid, err := strconv.Atoi(pids[n-1])
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// procLeft reports whether pid is still in /proc, running or, where the node reaps what
// it adopted, as a zombie (elsewhere init reaps orphans, in its own time); a daemon is
// killed at the last step of a stop, so it is given a moment to go (a long one on a loaded
// machine).
func procLeft(pid int) bool {
	for range 500 {
		if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err != nil || !subreaper && !procAlive(pid) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

func procAlive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i > 0 && !strings.HasPrefix(string(b[i+1:]), " Z")
}
