package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// The cgroups of a confined process. Under cgroup v2 the process's own cgroup is made by
// package proc (it starts the process there with CLONE_INTO_CGROUP); this package writes
// its limits. Under cgroup v1 this package makes, per controller, <the node's cgroup>/
// toolnode-<pid>-<start>/s<n>, which the shim joins before it execs the command.

// hierarchies are where this process's cgroups are: the v2 directory, and the v1 directory
// of each controller the node may write ("memory", "pids", "cpu").
type hierarchies struct {
	v2mount string // where the v2 hierarchy is mounted, with v2
	v2      string // the node's own v2 cgroup, "" without one it may write
	v1      map[string]string
}

var cgroupsHere = sync.OnceValue(findHierarchies)

// findHierarchies reads /proc/self/mountinfo and /proc/self/cgroup.
func findHierarchies() hierarchies {
	h := hierarchies{v1: map[string]string{}}
	mounts := map[string]string{} // "cgroup2" or a v1 controller -> mount point
	if f, err := os.Open("/proc/self/mountinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			// "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory"
			pre, post, ok := strings.Cut(sc.Text(), " - ")
			f, p := strings.Fields(pre), strings.Fields(post)
			if !ok || len(f) < 5 || f[3] != "/" || len(p) < 3 {
				continue
			}
			switch p[0] {
			case "cgroup2":
				if mounts["cgroup2"] == "" {
					mounts["cgroup2"] = f[4]
				}
			case "cgroup":
				for _, opt := range strings.Split(p[2], ",") {
					mounts[opt] = f[4]
				}
			}
		}
		f.Close()
	}
	b, _ := os.ReadFile("/proc/self/cgroup")
	for _, line := range strings.Split(string(b), "\n") {
		// "4:memory:/process_api/c809", "0::/"
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[1] == "" && mounts["cgroup2"] != "" {
			dir := filepath.Join(mounts["cgroup2"], parts[2])
			if writable(dir) {
				h.v2, h.v2mount = dir, mounts["cgroup2"]
			}
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			if c != "memory" && c != "pids" && c != "cpu" || mounts[c] == "" {
				continue
			}
			if dir := filepath.Join(mounts[c], parts[2]); writable(dir) {
				h.v1[c] = dir
			}
		}
	}
	return h
}

func writable(dir string) bool { return syscall.Access(dir, 2 /* W_OK */) == nil }

// v2Controllers are the controllers ("memory", "pids", "cpu") the cgroups under the
// node's may use: those enabled for them in the node's cgroup, or that the node enables
// there, which the kernel refuses where that cgroup holds processes (as a delegated
// subtree's leaf does not). Found at the first sandbox, not before: enabling is a change
// to the node's cgroup that a node without sandboxes should not make. Never at the root
// of the hierarchy, where it would change every cgroup of the host.
var v2Controllers = sync.OnceValue(func() map[string]bool {
	out := map[string]bool{}
	h := cgroupsHere()
	if h.v2 == "" {
		return out
	}
	avail, _ := os.ReadFile(filepath.Join(h.v2, "cgroup.controllers"))
	enabled, _ := os.ReadFile(filepath.Join(h.v2, "cgroup.subtree_control"))
	for _, c := range strings.Fields(string(avail)) {
		if c != "memory" && c != "pids" && c != "cpu" {
			continue
		}
		out[c] = slices.Contains(strings.Fields(string(enabled)), c) ||
			h.v2 != h.v2mount && writeFile(h.v2, "cgroup.subtree_control", "+"+c) == nil
	}
	return out
})

// mechanism names what bounds controller c here: "cgroup v2", "cgroup v1" or "".
func (h hierarchies) mechanism(c string) string {
	switch {
	case h.v2 != "" && v2Controllers()[c]:
		return "cgroup v2"
	case h.v1[c] != "":
		return "cgroup v1"
	}
	return ""
}

var v1Count atomic.Int64

// v1Mu orders the making of the node's v1 directories against their removal once empty.
var v1Mu sync.Mutex

// nodeV1 is, per v1 controller, the node's own directory toolnode-<pid>-<start>, found
// once, after the directories of dead nodes are swept. It is made when a process needs it
// and removed when its last process's cgroup is.
var nodeV1 = sync.OnceValue(func() map[string]string {
	out := map[string]string{}
	for c, base := range cgroupsHere().v1 {
		sweepV1(base)
		out[c] = filepath.Join(base, NodeDirName())
	}
	return out
})

// newV1 makes a cgroup for one process under the node's directory of controller c.
func newV1(c string) (string, error) {
	parent := nodeV1()[c]
	if parent == "" {
		return "", fmt.Errorf("no cgroup v1 %s hierarchy the node may write", c)
	}
	v1Mu.Lock()
	defer v1Mu.Unlock()
	if err := os.Mkdir(parent, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return "", fmt.Errorf("make the node's %s cgroup: %w", c, err)
	}
	dir := filepath.Join(parent, "s"+strconv.FormatInt(v1Count.Add(1), 10))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", fmt.Errorf("make the %s cgroup: %w", c, err)
	}
	return dir, nil
}

// writeFile writes one value into a cgroup file, naming both in its error.
func writeFile(dir, file, value string) error {
	if err := os.WriteFile(filepath.Join(dir, file), []byte(value), 0); err != nil {
		return fmt.Errorf("set %s to %s: %w", file, value, err)
	}
	return nil
}

// procsOf lists the processes in a cgroup directory.
func procsOf(dir string) []int {
	b, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	var out []int
	for _, s := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(s); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// removeV1 kills what is left in a v1 cgroup (v1 has no cgroup.kill) and removes it,
// waiting up to a second for the killed to go, and then the node's directory above it if
// that was its last.
func removeV1(dir string) {
	for deadline := time.Now().Add(time.Second); ; time.Sleep(10 * time.Millisecond) {
		for _, pid := range procsOf(dir) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		if err := os.Remove(dir); err == nil || errors.Is(err, os.ErrNotExist) || time.Now().After(deadline) {
			break
		}
	}
	v1Mu.Lock()
	_ = os.Remove(filepath.Dir(dir)) // refused while another process's cgroup is there
	v1Mu.Unlock()
}

// CgroupV2 says where the cgroup v2 hierarchy is mounted and this process's cgroup in it,
// when this process may write that cgroup; "", "" otherwise.
func CgroupV2() (mount, dir string) {
	h := cgroupsHere()
	return h.v2mount, h.v2
}

// NodeDirName names this node's directory in a cgroup hierarchy: toolnode-<pid>-<start>,
// the start time telling a node apart from a later process with its pid.
func NodeDirName() string {
	return fmt.Sprintf("toolnode-%d-%d", os.Getpid(), startTime(os.Getpid()))
}

// DeadNodeDirs lists the directories under base that NodeDirName named for nodes no longer
// running.
func DeadNodeDirs(base string) []string {
	var out []string
	entries, _ := os.ReadDir(base)
	for _, e := range entries {
		var pid int
		var start uint64
		if _, err := fmt.Sscanf(e.Name(), "toolnode-%d-%d", &pid, &start); err != nil || !e.IsDir() {
			continue
		}
		if startTime(pid) != start {
			out = append(out, filepath.Join(base, e.Name()))
		}
	}
	return out
}

// sweepV1 removes what nodes that died left under base.
func sweepV1(base string) {
	for _, dir := range DeadNodeDirs(base) {
		subs, _ := os.ReadDir(dir)
		for _, s := range subs {
			if s.IsDir() {
				removeV1(filepath.Join(dir, s.Name()))
			}
		}
		_ = os.Remove(dir) // one without processes' cgroups
	}
}

// startTime is a process's start time in clock ticks (field 22 of /proc/PID/stat), against
// pid reuse; 0 when it is gone.
func startTime(pid int) uint64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return 0
	}
	n, _ := strconv.ParseUint(f[19], 10, 64)
	return n
}

// oomKills reads how many processes the kernel killed in a memory cgroup at its bound:
// memory.events (v2) or memory.oom_control (v1), both "oom_kill N".
func oomKills(dir string, v2 bool) int {
	if v2 {
		return eventCount(dir, "memory.events", "oom_kill")
	}
	return eventCount(dir, "memory.oom_control", "oom_kill")
}

// eventCount reads the count "key N" of a cgroup's events file, 0 where there is none.
func eventCount(dir, file, key string) int {
	b, _ := os.ReadFile(filepath.Join(dir, file))
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, key+" "); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}
