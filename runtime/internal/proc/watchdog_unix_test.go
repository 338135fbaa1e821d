//go:build darwin || (linux && toolnode_darwin_proc)

package proc

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/testkit"
)

// startTagged starts script in a process group of its own with tag in its environment, as
// Start would, but without telling this process's watchdog.
func startTagged(t *testing.T, dir, script, tag string) (*exec.Cmd, int64) {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), tag}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	e, ok := sysTable{}.entry(cmd.Process.Pid)
	if !ok {
		t.Fatalf("process %d is not in the process table", cmd.Process.Pid)
	}
	return cmd, e.start
}

// TestWatchdogStopsTheFamiliesLeftWhenThePipeEnds drives runWatchdog as the node does, with
// lines it must skip among them, and ends the pipe as the node's death would: the family
// still registered is stopped, daemon included; the one removed before is left alone.
func TestWatchdogStopsTheFamiliesLeftWhenThePipeEnds(t *testing.T) {
	dir := t.TempDir()
	const tagA, tagB = TagVar + "=aaaa", TagVar + "=bbbb"
	a, startA := startTagged(t, dir, `setsid sh -c 'echo $$ > daemon; exec sleep 300' </dev/null >/dev/null 2>&1 & exec sleep 300`, tagA)
	b, startB := startTagged(t, dir, `exec sleep 300`, tagB)
	daemon := testkit.PidFile(t, filepath.Join(dir, "daemon"), 1)

	r, w := io.Pipe()
	done := make(chan int, 1)
	go func() { done <- runWatchdog(r, os.Getppid(), sysTable{}) }()
	for _, line := range []string{
		"junk\n",
		strings.Repeat("+ 1 ", 400) + "\n", // longer than any line of the node's
		fmt.Sprintf("+ %d %d 100 NOT_THE_TAG=aaaa\n", a.Process.Pid, startA),
		"+ -4 0 100 " + tagA + "\n",
		fmt.Sprintf("+ %d %d 100 %s\n", a.Process.Pid, startA, tagA),
		fmt.Sprintf("+ %d %d 100 %s\n", b.Process.Pid, startB, tagB),
		fmt.Sprintf("- %d\n", b.Process.Pid),
	} {
		if _, err := io.WriteString(w, line); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("the watchdog exited with %d", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the watchdog did not finish within 10s of the pipe's end")
	}
	for what, pid := range map[string]int{"the bundle": a.Process.Pid, "its daemon": daemon} {
		if running(pid) {
			t.Errorf("%s (%d) still runs", what, pid)
		}
	}
	if !running(b.Process.Pid) {
		t.Error("the family removed from the watchdog was stopped too")
	}
}

// TestWatchdogComesBackAndGoes: a watchdog that is killed is replaced while bundles run, and
// none runs once the last bundle is stopped.
func TestWatchdogComesBackAndGoes(t *testing.T) {
	p, err := Start(Config{Path: "/bin/sh", Args: []string{"-c", "exec sleep 300"}, Env: []string{"PATH=" + os.Getenv("PATH")},
		Grace: 100 * time.Millisecond, TrackEvery: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(context.Background())
	current := func() (*os.Process, chan struct{}) {
		theWatchdog.mu.Lock()
		defer theWatchdog.mu.Unlock()
		return theWatchdog.proc, theWatchdog.exited
	}
	first, exited := current()
	if first == nil || !running(first.Pid) {
		t.Fatal("no watchdog runs beside a bundle")
	}
	first.Kill()
	<-exited
	testkit.Eventually(t, 10*time.Second, func() string {
		if next, _ := current(); next == nil || next.Pid == first.Pid || !running(next.Pid) {
			return "no new watchdog since the first one's death"
		}
		return ""
	})
	_, exited = current()
	p.Stop(context.Background())
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatal("the watchdog still runs 10s after the last bundle stopped")
	}
}
