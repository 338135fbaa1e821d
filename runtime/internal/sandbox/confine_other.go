//go:build !linux

package sandbox

import (
	"fmt"
	"os"
	"os/exec"
)

// Outside Linux only rlimits bound a process (open files, address space, processes of the
// user); docs/sandbox.md says what that leaves open.
func probe() Enforcement {
	if !haveRlimits {
		return Enforcement{}
	}
	e := Enforcement{Files: "rlimit", Memory: "rlimit (address space)"}
	if os.Geteuid() != 0 {
		e.Pids = "rlimit (per user)"
	}
	return e
}

// Confined is a command prepared to run under a Policy. Close may be called many times.
type Confined struct {
	enforced Enforcement
	spec     shimSpec
}

// Confine prepares a start of program in dir under p: here rlimits only (cgroup is
// ignored). It refuses where p requires what rlimits cannot give.
func Confine(p Policy, program, _ string, _ string) (*Confined, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	e := Probe()
	if err := e.RequireError(p); err != nil {
		return nil, err
	}
	c := &Confined{enforced: e, spec: shimSpec{Path: program}}
	if p.Memory > 0 && e.Memory != "" {
		c.spec.Rlimits = append(c.spec.Rlimits, rlimit{rlimitAS, uint64(p.Memory)})
	}
	if p.Pids > 0 && e.Pids != "" {
		c.spec.Rlimits = append(c.spec.Rlimits, rlimit{rlimitNproc, uint64(p.Pids)})
	}
	if p.Files > 0 && e.Files != "" {
		c.spec.Rlimits = append(c.spec.Rlimits, rlimit{rlimitNofile, uint64(p.Files)})
	}
	return c, nil
}

// Apply makes cmd run under c: the shim first, which sets the rlimits and execs.
func (c *Confined) Apply(cmd *exec.Cmd) error {
	if len(c.spec.Rlimits) == 0 {
		return nil
	}
	return c.spec.wrap(cmd)
}

// Enforced says what this machine enforces of the Policy.
func (c *Confined) Enforced() Enforcement { return c.enforced }

// Ended says why the process ended where the sandbox knows: never here.
func (c *Confined) Ended() string { return "" }

// Close has nothing to remove here.
func (c *Confined) Close() {}

// RestrictSelf sets the open-files rlimit of p.Files; nothing else is available here.
func RestrictSelf(p Policy) (Enforcement, error) {
	var e Enforcement
	if p.Files > 0 && haveRlimits {
		if err := setRlimit(rlimitNofile, uint64(p.Files)); err != nil {
			return e, fmt.Errorf("set the open-files rlimit to %d: %w", p.Files, err)
		}
		e.Files = "rlimit"
	}
	return e, nil
}
