//go:build linux && !toolnode_darwin_proc

package proc

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/testkit"
)

// inCgroups reports whether this node starts its bundles in cgroups of their own.
func inCgroups() bool { return nodeCgroup() != "" }

// escape is a bundle whose grandchild gets away in every way a process can without
// privileges: the tag cleared, a session of its own (setsid), and double-forked so that its
// parent has exited and the node adopted it. It writes the grandchild's pid to "pid".
const escape = `env -u ` + TagVar + ` setsid sh -c 'sleep 300 </dev/null >/dev/null 2>&1 & echo $! > pid' </dev/null >/dev/null 2>&1; exec cat`

func needCgroups(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("setsid(1) is not installed: cannot start a daemon that leaves the group")
	}
	if !inCgroups() {
		t.Skip("this node cannot make cgroups (no writable cgroup v2 hierarchy): a process that clears its tag, leaves its group and is orphaned before the node sees it is not told apart from the node's other children")
	}
}

func TestStopEndsAGrandchildThatClearedItsTagLeftItsSessionAndWasOrphaned(t *testing.T) {
	needCgroups(t)
	dir := t.TempDir()
	// Looked for only at Stop: the grandchild is never seen while its parent lives.
	p, err := Start(Config{Path: "/bin/sh", Args: []string{"-c", escape}, Dir: dir,
		Env: []string{"PATH=" + os.Getenv("PATH")}, Grace: 300 * time.Millisecond, TrackEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	grandchild := testkit.PidFile(t, filepath.Join(dir, "pid"), 1)
	t.Cleanup(func() { _ = exec.Command("kill", "-9", strconv.Itoa(grandchild)).Run() })
	if st, ok := readStat(grandchild); !ok || st.zombie || environHas(grandchild, []byte(TagVar)) {
		t.Fatalf("the grandchild %d is not running before Stop (%+v)", grandchild, st)
	}
	if err := p.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("/proc/" + strconv.Itoa(grandchild)); err == nil {
		st, _ := os.ReadFile("/proc/" + strconv.Itoa(grandchild) + "/stat")
		t.Errorf("the escaped grandchild is left after Stop: %s", st)
	}
}

func TestNodeKilledLeavesNoGrandchildThatClearedItsTagLeftItsSessionAndWasOrphaned(t *testing.T) {
	needCgroups(t)
	dir := t.TempDir()
	node, leader := startNode(t, dir, escape)
	grandchild := testkit.PidFile(t, filepath.Join(dir, "pid"), 1)
	t.Cleanup(func() {
		for _, pid := range []int{leader, grandchild} {
			if running(pid) {
				_ = exec.Command("kill", "-9", strconv.Itoa(pid)).Run()
			}
		}
	})
	if !running(grandchild) {
		t.Fatalf("the grandchild %d is not running", grandchild)
	}
	if err := node.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	node.Wait()
	testkit.Eventually(t, 15*time.Second, func() string {
		if running(grandchild) {
			return "the escaped grandchild " + strconv.Itoa(grandchild) + " still runs after the node was killed"
		}
		return ""
	})
}

func TestAReaperKilledAloneIsStartedAgain(t *testing.T) {
	needCgroups(t)
	dir := t.TempDir()
	p, err := Start(Config{Path: "/bin/sh", Args: []string{"-c", "exec cat"}, Dir: dir,
		Env: []string{"PATH=" + os.Getenv("PATH")}, Grace: 300 * time.Millisecond, TrackEvery: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(context.Background())
	reaper.mu.Lock()
	first := reaper.pid
	reaper.mu.Unlock()
	if !running(first) {
		t.Fatalf("no reaper runs (pid %d)", first)
	}
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 10*time.Second, func() string {
		reaper.mu.Lock()
		now := reaper.pid
		reaper.mu.Unlock()
		if now == first || !running(now) {
			return fmt.Sprintf("the reaper %d killed alone was not started again (now %d)", first, now)
		}
		return ""
	})
	if _, err := os.Stat("/proc/" + strconv.Itoa(first)); err == nil {
		t.Errorf("the killed reaper %d is left a zombie", first)
	}
}
