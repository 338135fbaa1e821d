//go:build linux && !toolnode_darwin_proc

package proc

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// adoptsOrphans: the node is a child subreaper, to which its bundles' orphans come back and
// by which they are reaped.
const adoptsOrphans = true

func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{
		Setpgid: true,
		// If the node dies without stopping it, the bundle is told rather than orphaned.
		Pdeathsig: syscall.SIGTERM,
	}
}

// family follows the descendants of one process. The node is a child subreaper, so a
// descendant whose parent exits is re-parented to the node rather than to init: every
// descendant stays in the node's process tree, under the leader or, once orphaned, under
// the node itself, where the tag or an earlier sighting says whose it is.
type family struct {
	self        int
	tag         []byte // TagVar=<random>, as it appears in /proc/PID/environ
	cgroup      string // the leader's own cgroup, which holds every descendant; "" without
	cgroupFD    int    // cgroup open for the leader's start; -1 once started
	leader      int
	leaderStart uint64 // against the leader's pid being reused once it is reaped

	mu        sync.Mutex
	known     map[int]uint64 // descendants seen, by pid, with their start time against pid reuse
	strangers map[int]uint64 // children of the node found not to be of the family, likewise

	ticking
}

// newFamily makes the node a subreaper and returns the family of a process about to be
// started with env, and env with the family's tag added.
func newFamily(env []string, _ time.Duration) (*family, []string, error) {
	// Per process and idempotent: setting it again for each start costs one system call.
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return nil, nil, fmt.Errorf("become a child subreaper: %w", err)
	}
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, nil, fmt.Errorf("family tag: %w", err)
	}
	tag := TagVar + "=" + hex.EncodeToString(b[:])
	f := &family{self: os.Getpid(), tag: []byte(tag), known: map[int]uint64{}, strangers: map[int]uint64{}, ticking: newTicking()}
	f.cgroup, f.cgroupFD = newCgroup()
	return f, append(env[:len(env):len(env)], tag), nil
}

// place makes the leader start in the family's cgroup, where there is one.
func (f *family) place(attr *syscall.SysProcAttr) {
	if f.cgroupFD >= 0 {
		attr.UseCgroupFD, attr.CgroupFD = true, f.cgroupFD
	}
}

// cgroupDir is the cgroup the leader starts in, "" without one.
func (f *family) cgroupDir() string { return f.cgroup }

// unplace gives the family's cgroup up, before any process is in it, and reports whether
// there was one.
func (f *family) unplace() bool {
	if f.cgroup == "" {
		return false
	}
	f.closeCgroupFD()
	_ = os.Remove(f.cgroup)
	f.cgroup = ""
	return true
}

func (f *family) closeCgroupFD() {
	if f.cgroupFD >= 0 {
		_ = syscall.Close(f.cgroupFD)
		f.cgroupFD = -1
	}
}

// follow starts following the descendants of leader every d, reaping those that were
// orphaned and exited.
func (f *family) follow(leader int, d time.Duration) {
	f.leader = leader
	f.closeCgroupFD()
	if st, ok := readStat(leader); ok {
		f.leaderStart = st.start
	}
	f.start(d, func() {
		f.members()
		ensureReaper()
	})
}

// close stops following, and removes the family's cgroup once it is empty. Safe to call
// many times.
func (f *family) close() {
	f.halt()
	if f.cgroup != "" {
		removeCgroup(f.cgroup, time.Second)
	}
}

// signal sends sig to the leader's group and to every living member of the family.
func (f *family) signal(sig syscall.Signal) {
	_ = syscall.Kill(-f.leader, sig)
	for _, pid := range f.members() {
		_ = syscall.Kill(pid, sig)
	}
	if f.cgroup != "" {
		signalCgroup(f.cgroup, sig)
	}
}

// reapLater waits, each in a goroutine of its own, for the members the node adopted that
// are still there after a SIGKILL, so that they do not stay zombies of the node.
func (f *family) reapLater() {
	for _, pid := range f.members() {
		if st, ok := readStat(pid); ok && st.ppid == f.self && pid != f.leader {
			go func() {
				var ws unix.WaitStatus
				_, _ = unix.Wait4(pid, &ws, 0, nil)
			}()
		}
	}
}

// alive reports whether a member of the family or of the leader's group still runs.
func (f *family) alive() bool {
	return len(f.members()) > 0 || f.groupAlive()
}

// members walks the family, reaps the orphans of it that exited, and returns the pids of
// the living ones (the leader included while it runs).
func (f *family) members() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	queue := []int{f.leader}
	strangers := map[int]uint64{}
	for _, c := range children(f.self) {
		if c == f.leader {
			continue
		}
		st, ok := readStat(c)
		switch {
		case !ok:
		case f.strangers[c] == st.start:
			strangers[c] = st.start
		case f.known[c] == st.start || f.tagged(c) || f.cgroup != "" && inCgroup(c, f.cgroup):
			// In the family's cgroup: whatever it did to leave the tree, group and tag.
			queue = append(queue, c)
		default:
			// A tag is inherited at fork: a child of the node without it never gets it.
			strangers[c] = st.start
		}
	}
	f.strangers = strangers
	if f.cgroup != "" {
		queue = append(queue, cgroupProcs(f.cgroup)...)
	}
	seen := map[int]uint64{}
	var live []int
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		st, ok := readStat(pid)
		if !ok {
			continue
		}
		if _, dup := seen[pid]; dup || pid == f.leader && st.start != f.leaderStart {
			continue
		}
		seen[pid] = st.start
		if st.zombie {
			// The leader is reaped by its Wait; an orphan of the family is the node's to reap.
			if st.ppid == f.self && pid != f.leader {
				var ws unix.WaitStatus
				_, _ = unix.Wait4(pid, &ws, unix.WNOHANG, nil)
			}
			continue
		}
		live = append(live, pid)
		queue = append(queue, children(pid)...)
	}
	f.known = seen
	return live
}

func (f *family) tagged(pid int) bool { return environHas(pid, f.tag) }

// groupAlive reports whether a process of the leader's group is still running, reaping
// its members the node adopted. kill(-pgid, 0) alone would count zombies; /proc tells them
// apart.
func (f *family) groupAlive() bool {
	if syscall.Kill(-f.leader, 0) != nil {
		return false
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return true
	}
	alive := false
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, ok := readStat(pid)
		if !ok || st.pgrp != f.leader {
			continue
		}
		if !st.zombie {
			alive = true
		} else if st.ppid == f.self && pid != f.leader {
			var ws unix.WaitStatus
			_, _ = unix.Wait4(pid, &ws, unix.WNOHANG, nil)
		}
	}
	return alive
}

// children lists the children of pid, from every thread's children file (a child belongs
// to the thread that forked it), or from a scan of /proc where the kernel has no such file.
func children(pid int) []int {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile(filepath.Join(dir, t.Name(), "children"))
		if os.IsNotExist(err) {
			return childrenByScan(pid)
		}
		for _, s := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(s); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
}

func childrenByScan(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		c, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, ok := readStat(c); ok && st.ppid == pid {
			out = append(out, c)
		}
	}
	return out
}
