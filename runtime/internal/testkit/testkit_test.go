package testkit

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"
)

// recorder is a testing.TB that notes a failure instead of ending the test, so that a wait
// that must fail can be seen failing.
type recorder struct {
	testing.TB
	failed chan string
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.failed <- fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// fails runs wait as a test of its own and returns what it failed with, or "" when it
// returned.
func fails(t *testing.T, wait func(tb testing.TB)) string {
	r := &recorder{TB: t, failed: make(chan string, 1)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		wait(r)
	}()
	<-done
	select {
	case why := <-r.failed:
		return why
	default:
		return ""
	}
}

// The waits return as soon as what they wait for comes, woken by it, and fail the test
// with what they waited for when it does not come.
func TestWaitsAreWokenAndFailWhenNothingComes(t *testing.T) {
	var logs SyncBuffer
	var inbox Inbox
	var s Session
	go func() {
		fmt.Fprintln(&logs, "bundle ready")
		inbox.Add("a")
		inbox.Add("b")
		s.Notify(context.Background(), "notifications/progress", map[string]any{"progress": 1})
	}()
	for _, tc := range []struct {
		name, fail string
		wait       func(tb testing.TB)
	}{
		{"a log line", "", func(tb testing.TB) { logs.WaitFor(tb, 10*time.Second, "bundle ready") }},
		{"two items", "", func(tb testing.TB) { inbox.Wait(tb, 10*time.Second, 2, nil) }},
		{"a notification", "", func(tb testing.TB) { s.WaitFor(tb, 10*time.Second, `"progress":1`) }},
		{"a log line that never comes", `does not say "never"`, func(tb testing.TB) { logs.WaitFor(tb, 50*time.Millisecond, "never") }},
		{"an item no other matches", "fewer than the 1 items", func(tb testing.TB) {
			inbox.Wait(tb, 50*time.Millisecond, 1, func(item string) bool { return item == "c" })
		}},
		{"a condition that stays false", "after 50ms: still false", func(tb testing.TB) {
			Eventually(tb, 50*time.Millisecond, func() string { return "still false" })
		}},
	} {
		if got := fails(t, tc.wait); tc.fail == "" && got != "" || tc.fail != "" && !strings.Contains(got, tc.fail) {
			t.Errorf("%s: failed with %q, want %q", tc.name, got, tc.fail)
		}
	}
	// Text that comes in two writes, the first looked at before the second comes, is found.
	var split SyncBuffer
	fmt.Fprint(&split, "the text comes ac")
	go func() {
		time.Sleep(10 * time.Millisecond) // a look at the first part comes first
		fmt.Fprint(&split, "ross two writes")
	}()
	if got := fails(t, func(tb testing.TB) { split.WaitFor(tb, 10*time.Second, "across two writes") }); got != "" {
		t.Errorf("text written in two parts: failed with %q", got)
	}
	if Until(20*time.Millisecond, func() bool { return false }) {
		t.Error("Until held a condition that never did")
	}
}

// A process given the mark is found by it, and seen to end.
func TestMarkedProcessesAreFoundAndSeenToEnd(t *testing.T) {
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		t.Skip("no /proc to find processes in:", err)
	}
	k, v := Mark(t)
	cmd := exec.Command("sleep", "60")
	cmd.Env = append(os.Environ(), k+"="+v)
	if err := cmd.Start(); err != nil {
		t.Skip("cannot start sleep(1):", err)
	}
	defer cmd.Wait()
	if got := Marked(k, v); len(got) != 1 || got[0] != cmd.Process.Pid {
		t.Fatalf("marked processes %v, want [%d]", got, cmd.Process.Pid)
	}
	if Exited(cmd.Process.Pid, 20*time.Millisecond) {
		t.Fatal("a running process was seen to end")
	}
	if err := Kill(cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	if !Exited(cmd.Process.Pid, 10*time.Second) || len(Marked(k, v)) != 0 {
		t.Errorf("the killed process is still seen running")
	}
}
