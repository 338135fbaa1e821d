package cli_test

import (
	"os/exec"
	"syscall"

	"github.com/toolnode/toolnode/runtime/internal/testkit"
)

// ownGroup makes cmd lead a process group of its own.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}

// killGroup ends pid: Windows has no signal for a group.
func killGroup(pid int) { _ = testkit.Kill(pid) }
