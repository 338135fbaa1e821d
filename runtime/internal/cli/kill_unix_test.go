//go:build unix

package cli_test

import (
	"os/exec"
	"syscall"
)

// ownGroup makes cmd lead a process group of its own, for killGroup.
func ownGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// killGroup ends the process group pid leads.
func killGroup(pid int) { _ = syscall.Kill(-pid, syscall.SIGKILL) }
