package sandbox

import (
	"fmt"
	"os/exec"
	"path/filepath"
)

// Command returns a command that runs path with args under p, ready to Start, and what
// Close must remove once it has ended. The process has no cgroup v2 of its own (use
// package proc's Config.Sandbox for one); the v1 controllers or rlimits bound it.
func Command(p Policy, path string, args ...string) (*exec.Cmd, *Confined, error) {
	cmd := exec.Command(path, args...)
	if cmd.Err != nil {
		return nil, nil, fmt.Errorf("start under a sandbox: %w", cmd.Err)
	}
	if !filepath.IsAbs(cmd.Path) {
		abs, err := filepath.Abs(cmd.Path)
		if err != nil {
			return nil, nil, fmt.Errorf("start under a sandbox: %w", err)
		}
		cmd.Path = abs
	}
	c, err := Confine(p, cmd.Path, "", "")
	if err != nil {
		return nil, nil, err
	}
	if err := c.Apply(cmd); err != nil {
		c.Close()
		return nil, nil, err
	}
	return cmd, c, nil
}
