package proc

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/testkit"
)

// TestStopLeavesNoDescendant runs bundles that leave daemons behind in the ways real ones
// do and checks in /proc that Stop ends and reaps every one of them.
func TestStopLeavesNoDescendant(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("setsid(1) is not installed: cannot start a daemon that leaves the group")
	}
	tests := []struct {
		name   string
		script string // writes the daemon's pid to the file "pid", then serves until stdin closes
	}{
		{"a setsid daemon beside a live bundle", `setsid sh -c 'echo $$ > pid; exec sleep 300' </dev/null >/dev/null 2>&1 & exec cat`},
		{"an orphaned setsid daemon whose parent exited", `setsid sh -c 'sleep 300 & echo $! > pid' </dev/null >/dev/null 2>&1; exec cat`},
		{"a daemon of a bundle that exits on its own", `setsid sh -c 'echo $$ > pid; exec sleep 300' </dev/null >/dev/null 2>&1 & sleep 0.2; exit 3`},
		{"a daemon that ignores SIGTERM", `setsid sh -c 'trap "" TERM; echo $$ > pid; while :; do sleep 1; done' </dev/null >/dev/null 2>&1 & exec cat`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			p, err := Start(Config{Path: "/bin/sh", Args: []string{"-c", tt.script}, Dir: dir,
				Env: []string{"PATH=" + os.Getenv("PATH")}, Grace: 300 * time.Millisecond, TrackEvery: 20 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			daemon := testkit.PidFile(t, filepath.Join(dir, "pid"), 1)
			if !running(daemon) {
				t.Fatalf("the daemon %d is not running before Stop", daemon)
			}
			if err := p.Stop(context.Background()); err != nil {
				t.Fatal(err)
			}
			// Where the node adopts orphans it reaps them too; elsewhere init does.
			if _, err := os.Stat("/proc/" + strconv.Itoa(daemon)); err == nil && (adoptsOrphans || running(daemon)) {
				st, _ := os.ReadFile("/proc/" + strconv.Itoa(daemon) + "/stat")
				t.Errorf("the daemon is left after Stop: %s", st)
			}
			if running(p.Pid()) {
				t.Errorf("the bundle %d is left after Stop", p.Pid())
			}
		})
	}
}

// TestOrphansThatExitAreReapedWhileTheBundleRuns: a bundle whose detached helpers exit
// must not leave zombies in the node until it stops.
func TestOrphansThatExitAreReapedWhileTheBundleRuns(t *testing.T) {
	if !adoptsOrphans {
		t.Skip("a Linux-only guarantee: the node reaps its bundles' orphans as their subreaper; under the macOS supervision (toolnode_darwin_proc) init adopts and reaps them")
	}
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("setsid(1) is not installed: cannot start a daemon that leaves the group")
	}
	dir := t.TempDir()
	p, err := Start(Config{Path: "/bin/sh", Args: []string{"-c", `setsid sh -c 'sleep 0.1 & echo $! > pid' </dev/null >/dev/null 2>&1; exec cat`},
		Dir: dir, Env: []string{"PATH=" + os.Getenv("PATH")}, TrackEvery: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(context.Background())
	helper := testkit.PidFile(t, filepath.Join(dir, "pid"), 1)
	if !testkit.Reaped(helper, 5*time.Second) {
		st, _ := os.ReadFile("/proc/" + strconv.Itoa(helper) + "/stat")
		t.Fatalf("the exited helper is still there while the bundle runs: %s", st)
	}
	if !running(p.Pid()) {
		t.Error("the bundle itself is gone")
	}
}
