//go:build unix

package main

import (
	"os/exec"
	"syscall"
)

// ownGroup makes cmd lead a process group of its own, for signalGroup.
func ownGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// signalGroup sends the group pid leads SIGTERM, or SIGKILL when kill is set.
func signalGroup(pid int, kill bool) {
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	_ = syscall.Kill(-pid, sig)
}
