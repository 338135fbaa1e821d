package proc

import (
	"os"
	"syscall"
	"time"
)

// place and unplace have nothing to do: processes are not put in cgroups here.
func (f *family) place(*syscall.SysProcAttr) {}

func (f *family) unplace() bool { return false }

func (f *family) cgroupDir() string { return "" }

func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}

// family is the process alone: Windows has no signals to send a group, so each step of a
// stop past closing stdin kills the process.
type family struct{ p *os.Process }

func newFamily(env []string, _ time.Duration) (*family, []string, error) {
	return &family{}, env, nil
}

func (f *family) follow(leader int, _ time.Duration) { f.p, _ = os.FindProcess(leader) }

func (f *family) close() {}

// reapLater has nothing to do: the processes left belong to init, which reaps them.
func (f *family) reapLater() {}

func (f *family) signal(syscall.Signal) {
	if f.p != nil {
		_ = f.p.Kill()
	}
}

func (f *family) alive() bool { return false }
