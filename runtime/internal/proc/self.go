//go:build darwin || linux

package proc

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// startSelf starts the node's own binary again, env its whole environment and stdin the
// read end of a pipe whose write end only the node holds, in a session of its own so that
// signals meant for the node's terminal or group miss it: how the watchdog (macOS) and the
// reaper of the node's cgroups (Linux) are started, each waiting for that pipe to close.
// what names it in an error.
func startSelf(what, env string, stdin *os.File) (*exec.Cmd, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("start the %s: %w", what, err)
	}
	cmd := exec.Command(exe)
	cmd.Env = []string{env}
	cmd.Stdin = stdin
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the %s: %w", what, err)
	}
	return cmd, nil
}
