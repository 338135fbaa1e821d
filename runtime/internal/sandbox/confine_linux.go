package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	llsyscall "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

func probe() Enforcement {
	h := cgroupsHere()
	e := Enforcement{Files: "rlimit", NoNewPrivs: "prctl"}
	e.Memory = h.mechanism("memory")
	if e.Memory == "" {
		e.Memory = "rlimit (address space)"
	}
	e.CPU = h.mechanism("cpu")
	e.Pids = h.mechanism("pids")
	if e.Pids == "" && os.Geteuid() != 0 {
		e.Pids = "rlimit (per user)"
	}
	abi, _ := llsyscall.LandlockGetABIVersion()
	if abi > 0 {
		e.Paths = "landlock ABI " + strconv.Itoa(abi)
	}
	switch {
	case os.Geteuid() == 0:
		e.Network = "network namespace"
	case userNamespaces():
		e.Network = "user and network namespaces"
	case abi >= 4:
		e.Network = "landlock (TCP only)"
	}
	return e
}

// userNamespaces reports whether this process may start a child in user and network
// namespaces of its own, by starting /bin/true so.
func userNamespaces() bool {
	cmd := exec.Command("/bin/true")
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	addUserNS(cmd.SysProcAttr)
	cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWNET
	return cmd.Run() == nil
}

// addUserNS puts a child in a user namespace of its own where it is root, mapped to this
// process's user and group, so that it may bring its network namespace's loopback up.
func addUserNS(a *syscall.SysProcAttr) {
	a.Cloneflags |= syscall.CLONE_NEWUSER
	a.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}}
	a.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}
	a.GidMappingsEnableSetgroups = false
}

// Confined is a command prepared to run under a Policy, and what was made for it (cgroups,
// a temporary directory), which Close removes. Its methods are safe to call once the
// process has started; Close may be called many times.
type Confined struct {
	policy   Policy
	enforced Enforcement
	spec     shimSpec
	v1       []string // the cgroup v1 directories made for the process
	memDir   string   // the cgroup whose memory is bounded, "" without one
	memV2    bool
	pidsDir  string // the cgroup whose processes are bounded, "" without one
	tmp      string
	newNet   bool
}

// Confine prepares a start of program (resolved, absolute) in dir under p. cgroup is the
// cgroup v2 directory the process will start in (package proc makes one where it may), or
// "": its memory, pids and cpu limits are written there where the controllers are
// enabled, else cgroup v1 directories are made for the shim to join, else rlimits are
// set. A setting this machine cannot enforce is left out (Enforced says which), unless p
// requires it: then Confine refuses. Apply the result to the exec.Cmd before its start.
func Confine(p Policy, program, dir, cgroup string) (*Confined, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	e := Probe()
	if cgroup == "" {
		// Without a cgroup of its own the process cannot use v2 limits: what is left.
		if e.Memory == "cgroup v2" {
			e.Memory = "rlimit (address space)"
		}
		if e.CPU == "cgroup v2" {
			e.CPU = ""
		}
		if e.Pids == "cgroup v2" {
			e.Pids = ""
			if os.Geteuid() != 0 {
				e.Pids = "rlimit (per user)"
			}
		}
	}
	if err := e.RequireError(p); err != nil {
		return nil, err
	}
	c := &Confined{policy: p, enforced: e, spec: shimSpec{Path: program}}
	if err := c.limits(cgroup); err != nil {
		c.Close()
		return nil, err
	}
	if p.NoNetwork() && e.Network != "landlock (TCP only)" && e.Network != "" {
		c.newNet, c.spec.Loopback = true, true
	}
	c.spec.NoTCP = p.NoNetwork() && e.Network == "landlock (TCP only)"
	if p.ConfinesFiles() && e.Paths != "" {
		tmp, err := os.MkdirTemp("", "toolnode-sandbox-")
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("make the sandbox's temporary directory: %w", err)
		}
		c.tmp = tmp
		read, write := p.Paths(dir, program)
		c.spec.Landlock, c.spec.Read, c.spec.Write = true, read, append(write, tmp)
	}
	return c, nil
}

// limits writes the memory, cpu and pids limits into cgroup (v2) or v1 cgroups made for
// the process, and sets the rlimits of the rest.
func (c *Confined) limits(cgroup string) error {
	p, e := c.policy, c.enforced
	set := func(ctrl, mech string, write func(dir string) error) error {
		switch mech {
		case "cgroup v2":
			if err := writeFile(filepath.Dir(cgroup), "cgroup.subtree_control", "+"+ctrl); err != nil {
				return err
			}
			return write(cgroup)
		case "cgroup v1":
			dir, err := newV1(ctrl)
			if err != nil {
				return err
			}
			c.v1 = append(c.v1, dir)
			c.spec.Cgroups = append(c.spec.Cgroups, dir)
			return write(dir)
		}
		return nil
	}
	if p.Memory > 0 {
		mem := strconv.FormatInt(p.Memory, 10)
		err := set("memory", e.Memory, func(dir string) error {
			c.memDir, c.memV2 = dir, e.Memory == "cgroup v2"
			if c.memV2 {
				// No swap either: the bound is of memory, not of what fits in RAM.
				_ = writeFile(dir, "memory.swap.max", "0")
				return writeFile(dir, "memory.max", mem)
			}
			if err := writeFile(dir, "memory.limit_in_bytes", mem); err != nil {
				return err
			}
			if _, err := os.Stat(filepath.Join(dir, "memory.memsw.limit_in_bytes")); err == nil {
				return writeFile(dir, "memory.memsw.limit_in_bytes", mem)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("bound memory: %w", err)
		}
		if e.Memory == "rlimit (address space)" {
			c.spec.Rlimits = append(c.spec.Rlimits, rlimit{syscall.RLIMIT_AS, uint64(p.Memory)})
		}
	}
	if p.Pids > 0 {
		err := set("pids", e.Pids, func(dir string) error {
			c.pidsDir = dir
			return writeFile(dir, "pids.max", strconv.Itoa(p.Pids))
		})
		if err != nil {
			return fmt.Errorf("bound processes: %w", err)
		}
		if e.Pids == "rlimit (per user)" {
			c.spec.Rlimits = append(c.spec.Rlimits, rlimit{rlimitNproc, uint64(p.Pids)})
		}
	}
	if p.CPU > 0 {
		const period = 100000
		quota := strconv.FormatInt(int64(p.CPU*period), 10)
		err := set("cpu", e.CPU, func(dir string) error {
			if e.CPU == "cgroup v2" {
				return writeFile(dir, "cpu.max", quota+" "+strconv.Itoa(period))
			}
			if err := writeFile(dir, "cpu.cfs_period_us", strconv.Itoa(period)); err != nil {
				return err
			}
			return writeFile(dir, "cpu.cfs_quota_us", quota)
		})
		if err != nil {
			return fmt.Errorf("bound cpu: %w", err)
		}
	}
	if p.Files > 0 {
		c.spec.Rlimits = append(c.spec.Rlimits, rlimit{syscall.RLIMIT_NOFILE, uint64(p.Files)})
	}
	return nil
}

// Apply makes cmd run under c: the shim first (the node's own binary), with the spec in
// its environment and the namespaces it needs.
func (c *Confined) Apply(cmd *exec.Cmd) error {
	var set []string
	if c.tmp != "" {
		set = append(set, "TMPDIR="+c.tmp)
	}
	if err := c.spec.wrap(cmd, set...); err != nil {
		return err
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	if c.newNet {
		cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWNET
		if os.Geteuid() != 0 {
			addUserNS(cmd.SysProcAttr)
		}
	}
	return nil
}

// Enforced says what this machine enforces of the Policy (see Enforcement.Describe).
func (c *Confined) Enforced() Enforcement { return c.enforced }

// Ended says why the process ended, where its sandbox knows: "killed at its memory bound
// of 64 MiB" when the kernel killed a process in its cgroup at the bound, "refused 3 forks
// at its pids bound of 20" when the kernel refused forks at that bound; else "". Call it
// once the process has exited and before Close.
func (c *Confined) Ended() string {
	if c == nil {
		return ""
	}
	var why []string
	if c.memDir != "" && oomKills(c.memDir, c.memV2) > 0 {
		why = append(why, "killed at its memory bound of "+Size(c.policy.Memory).String())
	}
	if c.pidsDir != "" {
		if n := eventCount(c.pidsDir, "pids.events", "max"); n > 0 {
			why = append(why, fmt.Sprintf("refused %d forks at its pids bound of %d", n, c.policy.Pids))
		}
	}
	return strings.Join(why, " and ")
}

// Close ends what is left in the v1 cgroups made for the process and removes them, and
// the temporary directory. Call it once the process has been stopped.
func (c *Confined) Close() {
	if c == nil {
		return
	}
	for _, dir := range c.v1 {
		removeV1(dir)
	}
	c.v1 = nil
	if c.tmp != "" {
		_ = os.RemoveAll(c.tmp)
		c.tmp = ""
	}
}
