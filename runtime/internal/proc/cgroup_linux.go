//go:build linux && !toolnode_darwin_proc

package proc

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/sandbox"
)

// Where the node can write the cgroup v2 hierarchy (as root, or in a subtree systemd
// delegated to it), each bundle process starts in a cgroup of its own, under one of the
// node's: <the node's cgroup>/toolnode-<pid>-<start>/p<n>. A process cannot leave its cgroup
// by forking, setsid or clearing its environment, so what a bundle started, however far it
// went, is found there: Stop ends it (cgroup.kill), and if the node dies without stopping
// its bundles, the reaper below does. Elsewhere the family is followed as before: by tree,
// tag and group.

// reaperVar, in the environment of the node's binary, makes it the reaper of the node's
// cgroups: "PID DIR", the node and its cgroup directory.
const reaperVar = "TOOLNODE_PROC_REAPER"

// Checked here, as the watchdog is on macOS, so that every binary that starts bundles
// through this package (the node's, and test binaries acting as one) is its own reaper.
func init() {
	if v, ok := os.LookupEnv(reaperVar); ok {
		pid, dir, _ := strings.Cut(v, " ")
		node, _ := strconv.Atoi(pid)
		os.Exit(runReaper(os.Stdin, node, dir))
	}
}

// nodeCgroup is the node's cgroup directory, made at the first start, or "" where the node
// cannot make one.
var nodeCgroup = sync.OnceValue(func() string {
	mount, base := sandbox.CgroupV2()
	if base == "" {
		return ""
	}
	cgroupMount = mount
	for _, dir := range sandbox.DeadNodeDirs(base) {
		endCgroups(dir, 0, 100*time.Millisecond) // what a node killed with its reaper left
	}
	dir := filepath.Join(base, sandbox.NodeDirName())
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return ""
	}
	if err := startReaper(dir); err != nil {
		_ = os.Remove(dir)
		return ""
	}
	return dir
})

var cgroups atomic.Int64 // names the processes' cgroups: p1, p2, ...

// newCgroup makes a cgroup for one process, and opens it for clone3's CLONE_INTO_CGROUP;
// "" and -1 where the node has none.
func newCgroup() (string, int) {
	parent := nodeCgroup()
	if parent == "" {
		return "", -1
	}
	dir := filepath.Join(parent, "p"+strconv.FormatInt(cgroups.Add(1), 10))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", -1
	}
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		_ = os.Remove(dir)
		return "", -1
	}
	return dir, fd
}

// cgroupMount is where the cgroup v2 hierarchy is mounted, once nodeCgroup found it.
var cgroupMount string

// inCgroup reports whether process pid (a zombie too) is in the cgroup dir.
func inCgroup(pid int, dir string) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rel, ok := strings.CutPrefix(line, "0::"); ok {
			return filepath.Join(cgroupMount, rel) == dir
		}
	}
	return false
}

// cgroupProcs lists the processes in the cgroup dir and in those under it (a bundle that is
// itself a node makes cgroups under its own).
func cgroupProcs(dir string) []int {
	var out []int
	for _, d := range cgroupTree(dir) {
		b, err := os.ReadFile(filepath.Join(d, "cgroup.procs"))
		if err != nil {
			continue
		}
		for _, s := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(s); err == nil {
				out = append(out, pid)
			}
		}
	}
	return out
}

// cgroupTree is dir and the cgroups under it, each after those under it.
func cgroupTree(dir string) []string {
	var out []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, cgroupTree(filepath.Join(dir, e.Name()))...)
		}
	}
	return append(out, dir)
}

// signalCgroup sends sig to every process in dir and under it. SIGKILL goes through
// cgroup.kill where the kernel has it (5.14), which no fork can race.
func signalCgroup(dir string, sig syscall.Signal) {
	if sig == syscall.SIGKILL && os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0) == nil {
		return
	}
	for _, pid := range cgroupProcs(dir) {
		_ = syscall.Kill(pid, sig)
	}
}

// removeCgroup removes dir and the cgroups under it once their processes are gone, waiting
// up to wait for them.
func removeCgroup(dir string, wait time.Duration) {
	for deadline := time.Now().Add(wait); ; time.Sleep(10 * time.Millisecond) {
		for _, d := range cgroupTree(dir) {
			_ = os.Remove(d)
		}
		if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) || time.Now().After(deadline) {
			return
		}
	}
}

// endCgroups stops every process in the cgroups under dir as Stop would (SIGTERM, grace,
// SIGKILL), and removes them, dir included, waiting up to wait for the killed to go.
func endCgroups(dir string, grace, wait time.Duration) {
	if len(cgroupProcs(dir)) > 0 {
		signalCgroup(dir, syscall.SIGTERM)
		for deadline := time.Now().Add(grace); len(cgroupProcs(dir)) > 0 && time.Now().Before(deadline); {
			time.Sleep(50 * time.Millisecond)
		}
		signalCgroup(dir, syscall.SIGKILL)
	}
	removeCgroup(dir, wait)
}

// reaperProc is the node's reaper: its pid, and the write end of its pipe.
type reaperProc struct {
	mu  sync.Mutex
	pid int
	w   int
}

var reaper reaperProc

// startReaper starts the reaper of the node's cgroups in dir.
func startReaper(dir string) error {
	reaper.mu.Lock()
	defer reaper.mu.Unlock()
	return reaper.startLocked(dir)
}

// ensureReaper starts the reaper again should it have died (killed alone, say), as each
// family's look asks, so that a node killed later still has its bundles ended.
func ensureReaper() {
	dir := nodeCgroup()
	if dir == "" {
		return
	}
	reaper.mu.Lock()
	defer reaper.mu.Unlock()
	if st, ok := readStat(reaper.pid); ok && !st.zombie && st.ppid == os.Getpid() {
		return
	}
	if reaper.pid > 0 { // never 0 or -1: those would wait for other children
		var ws syscall.WaitStatus
		_, _ = syscall.Wait4(reaper.pid, &ws, syscall.WNOHANG, nil)
		reaper.pid = 0
	}
	if reaper.w > 0 {
		_ = syscall.Close(reaper.w)
		reaper.w = 0
	}
	_ = reaper.startLocked(dir) // tried again at the next look
}

// startLocked starts the reaper: the node's own binary in a session of its own, so that
// signals meant for the node's terminal or group miss it. Its stdin is a pipe whose write
// end the node holds, as a bare descriptor no finalizer closes, and never writes: its
// closing, however the node ends, is what the reaper waits for.
func (rp *reaperProc) startLocked(dir string) error {
	var fds [2]int
	if err := syscall.Pipe2(fds[:], syscall.O_CLOEXEC); err != nil {
		return fmt.Errorf("start the reaper that ends bundles if the node dies: %w", err)
	}
	r := os.NewFile(uintptr(fds[0]), "reaper")
	defer r.Close()
	cmd, err := startSelf("reaper that ends bundles if the node dies",
		reaperVar+"="+strconv.Itoa(os.Getpid())+" "+dir, r)
	if err != nil {
		_ = syscall.Close(fds[1])
		return err
	}
	rp.pid, rp.w = cmd.Process.Pid, fds[1]
	// Not waited for by exec: it exits after the node, or ensureReaper reaps it.
	_ = cmd.Process.Release()
	return nil
}

// runReaper waits for the node to end (its pipe closes, or node is no longer its parent),
// then ends every process in the node's cgroups in dir, and returns the exit code.
func runReaper(in *os.File, node int, dir string) int {
	closed := make(chan struct{})
	go func() {
		var b [64]byte
		for {
			if _, err := in.Read(b[:]); err != nil {
				close(closed)
				return
			}
		}
	}()
	parent := time.NewTicker(time.Second)
	defer parent.Stop()
wait:
	for {
		select {
		case <-closed:
			break wait
		case <-parent.C:
			if os.Getppid() != node {
				break wait
			}
		}
	}
	endCgroups(dir, 3*time.Second, 5*time.Second)
	return 0
}

// Contained reports whether this node starts each bundle process in a cgroup of its own,
// which nothing the process starts can leave, and ends them all should the node die.
func Contained() bool { return nodeCgroup() != "" }
