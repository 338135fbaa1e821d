//go:build darwin || (linux && toolnode_darwin_proc)

package proc

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"slices"
	"sync"
	"syscall"
	"time"
)

// The supervision macOS gets. Without a child subreaper, a descendant whose parent exits is
// adopted by launchd, out of the node's reach in the process tree; without the
// parent-death signal, a bundle is not told when the node dies. So the family is found in
// the process table: the leader's tree, plus the processes started since the leader that
// carry its tag or were seen in the tree before; and a watchdog process (watchdog_unix.go)
// stops the families the node leaves behind when it dies.
//
// Only the process table (procTable) differs between macOS and the Linux build of this file
// under the toolnode_darwin_proc tag, so that everything else here runs in the tests on Linux.

// adoptsOrphans: the bundles' orphans go to launchd (or init), which reaps them.
const adoptsOrphans = false

// place and unplace have nothing to do: processes are not put in cgroups here.
func (f *family) place(*syscall.SysProcAttr) {}

func (f *family) unplace() bool { return false }

func (f *family) cgroupDir() string { return "" }

func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// procEntry is one process as the process table shows it.
type procEntry struct {
	pid, ppid, pgid int
	// start is when the process started, in the table's own unit: compared only with other
	// starts of the same table, against pids being reused.
	start  int64
	zombie bool
}

// procTable is what the supervision needs of the system's process table, and the only part
// of it that is macOS's own: sysctl(3) there (table_darwin.go), /proc on Linux
// (table_linux.go).
type procTable interface {
	// list returns every process of the system the node can see.
	list() ([]procEntry, error)
	// entry returns the process pid, if it exists.
	entry(pid int) (procEntry, bool)
	// hasEnv reports whether kv ("K=V") is in the environment pid was started with.
	hasEnv(pid int, kv []byte) bool
}

// family follows the descendants of one process in the process table.
type family struct {
	table       procTable
	self        int    // the node (or the watchdog): never a member
	tag         []byte // TagVar=<random>
	grace       time.Duration
	leader      int
	leaderStart int64 // against the leader's pid being reused once it is reaped

	mu        sync.Mutex
	known     map[int]int64 // members seen, by pid, with their start
	strangers map[int]int64 // processes started since the leader found not to be members

	ticking
}

// newFamily returns the family of a process about to be started with env, and env with the
// family's tag added. grace is the bundle's, for the watchdog's stop.
func newFamily(env []string, grace time.Duration) (*family, []string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, nil, fmt.Errorf("family tag: %w", err)
	}
	if err := theWatchdog.ready(); err != nil {
		return nil, nil, err
	}
	tag := TagVar + "=" + hex.EncodeToString(b[:])
	f := newFamilyOf(sysTable{}, []byte(tag), grace)
	return f, append(env[:len(env):len(env)], tag), nil
}

// newFamilyOf is the family tagged tag in table, whose leader the caller sets.
func newFamilyOf(table procTable, tag []byte, grace time.Duration) *family {
	return &family{table: table, self: os.Getpid(), tag: tag, grace: grace,
		known: map[int]int64{}, strangers: map[int]int64{}, ticking: newTicking()}
}

// follow starts following the descendants of leader every d, and hands the family to the
// watchdog; each look also starts a new watchdog should the last one have died.
func (f *family) follow(leader int, d time.Duration) {
	f.leader = leader
	if e, ok := f.table.entry(leader); ok {
		f.leaderStart = e.start
	}
	theWatchdog.add(f)
	f.start(d, func() {
		f.members()
		theWatchdog.ensure()
	})
}

// close stops following, and takes the family from the watchdog: Stop closes it once no
// process of the family is left. Safe to call many times.
func (f *family) close() {
	f.halt()
	theWatchdog.remove(f) // which forgets a family it has removed
}

// reapLater has nothing to do: the orphans left belong to launchd, which reaps them.
func (f *family) reapLater() {}

// signal sends sig to the leader's group, while it holds a process of the family, and to
// every living member.
func (f *family) signal(sig syscall.Signal) {
	live, group := f.walk()
	if group {
		_ = syscall.Kill(-f.leader, sig)
	}
	for _, pid := range live {
		_ = syscall.Kill(pid, sig)
	}
}

// alive reports whether a member of the family or of the leader's group still runs.
func (f *family) alive() bool {
	live, group := f.walk()
	return len(live) > 0 || group
}

// members returns the pids of the living members, the leader included while it runs.
func (f *family) members() []int {
	live, _ := f.walk()
	return live
}

// walk reads the process table once and returns the living members of the family, and
// whether the leader's group still holds a living process that is the family's (so that a
// signal to the group cannot reach another one that took its number).
func (f *family) walk() (live []int, group bool) {
	procs, err := f.table.list()
	if err != nil {
		// Without a table, the group is all that can be signalled; kill(-pgid, 0) counts its
		// zombies too, which then keeps a stop waiting no longer than its grace.
		return nil, syscall.Kill(-f.leader, 0) == nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	byPid := make(map[int]procEntry, len(procs))
	kids := map[int][]int{}
	for _, e := range procs {
		byPid[e.pid] = e
		kids[e.ppid] = append(kids[e.ppid], e.pid)
	}
	seen := map[int]int64{}
	var queue []int
	mark := func(root int) {
		queue = append(queue[:0], root)
		for len(queue) > 0 {
			pid := queue[0]
			queue = queue[1:]
			e := byPid[pid]
			if _, dup := seen[pid]; dup || pid == f.self {
				continue
			}
			seen[pid] = e.start
			if !e.zombie {
				live = append(live, pid)
			}
			queue = append(queue, kids[pid]...)
		}
	}
	if e, ok := byPid[f.leader]; ok && e.start == f.leaderStart {
		mark(f.leader)
	}
	// A member that left the tree was adopted by launchd (or whichever process adopts
	// orphans): it started after the leader, and was seen before or carries the tag. Oldest
	// first, so that an adopted daemon's own children join as its subtree.
	var later []procEntry
	for _, e := range procs {
		if e.start >= f.leaderStart && e.pid != f.self {
			later = append(later, e)
		}
	}
	slices.SortFunc(later, func(a, b procEntry) int { return cmp.Compare(a.start, b.start) })
	strangers := map[int]int64{}
	for _, e := range later {
		if _, in := seen[e.pid]; in || e.zombie {
			continue
		}
		was, stranger := f.strangers[e.pid]
		start, known := f.known[e.pid]
		switch {
		case stranger && was == e.start:
			strangers[e.pid] = e.start
		case known && start == e.start || f.table.hasEnv(e.pid, f.tag):
			mark(e.pid)
		default:
			// A tag is inherited at fork: a process without it never gets it.
			strangers[e.pid] = e.start
		}
	}
	f.strangers = strangers
	f.known = seen
	for _, e := range procs {
		if e.pgid == f.leader && !e.zombie {
			if _, ours := seen[e.pid]; ours || f.table.hasEnv(e.pid, f.tag) {
				group = true
				break
			}
		}
	}
	return live, group
}
