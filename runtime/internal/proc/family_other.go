//go:build unix && !linux && !darwin

package proc

import (
	"syscall"
	"time"
)

// place and unplace have nothing to do: processes are not put in cgroups here.
func (f *family) place(*syscall.SysProcAttr) {}

func (f *family) unplace() bool { return false }

func (f *family) cgroupDir() string { return "" }

func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// family is the leader's process group: on the Unix systems other than Linux and macOS, a
// daemon that left the group is not followed, nor is the node's death noticed.
type family struct{ pgid int }

func newFamily(env []string, _ time.Duration) (*family, []string, error) {
	return &family{}, env, nil
}

func (f *family) follow(leader int, _ time.Duration) { f.pgid = leader }

func (f *family) close() {}

// reapLater has nothing to do: the processes left belong to init, which reaps them.
func (f *family) reapLater() {}

func (f *family) signal(sig syscall.Signal) { _ = syscall.Kill(-f.pgid, sig) }

// alive reports whether a process of the group is left; it counts zombies, which the init
// that adopted them reaps soon.
func (f *family) alive() bool { return syscall.Kill(-f.pgid, 0) == nil }
