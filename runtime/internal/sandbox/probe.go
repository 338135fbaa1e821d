package sandbox

import (
	"fmt"
	"os"
	"strings"
	"sync"
)

// Enforcement names, for each setting of a Policy, the mechanism this machine enforces it
// with, or "" where it has none.
type Enforcement struct {
	// Memory: "cgroup v2", "cgroup v1" or "rlimit (address space)".
	Memory string `json:"memory"`
	// CPU: "cgroup v2" or "cgroup v1"; rlimits cannot bound cores.
	CPU string `json:"cpu"`
	// Pids: "cgroup v2", "cgroup v1", or "rlimit (per user)" where the node is not root
	// (root is exempt from RLIMIT_NPROC).
	Pids string `json:"pids"`
	// Files (open files): "rlimit".
	Files string `json:"files"`
	// Network none: "network namespace", "user and network namespaces", or "landlock (TCP
	// only)" where namespaces are missing.
	Network string `json:"network"`
	// Paths (read and write): "landlock ABI N".
	Paths string `json:"paths"`
	// NoNewPrivs: "prctl" on Linux.
	NoNewPrivs string `json:"no_new_privs"`
}

var probed = sync.OnceValue(probe)

// WithoutVar names settings ("cpu,paths") that Probe reports as not enforced whatever the
// machine has, or "cgroup" for what is left without cgroups (rlimits): to see, on a
// machine that has them, how a bundle fares on one without.
const WithoutVar = "TOOLNODE_SANDBOX_WITHOUT"

// Probe reports what this machine enforces, found once per process, less the settings
// WithoutVar names.
func Probe() Enforcement {
	e := probed()
	for _, s := range strings.Split(os.Getenv(WithoutVar), ",") {
		switch strings.TrimSpace(s) {
		case "cgroup": // what is left without cgroups: rlimits
			e.Memory, e.CPU, e.Pids = "rlimit (address space)", "", ""
			if os.Geteuid() != 0 {
				e.Pids = "rlimit (per user)"
			}
		case "memory":
			e.Memory = ""
		case "cpu":
			e.CPU = ""
		case "pids":
			e.Pids = ""
		case "files":
			e.Files = ""
		case "network":
			e.Network = ""
		case "paths":
			e.Paths = ""
		}
	}
	return e
}

// Unenforced names the settings of p that e cannot enforce ("memory", "network"...).
func (e Enforcement) Unenforced(p Policy) []string {
	var out []string
	for _, s := range e.settings(p) {
		if s.mech == "" {
			out = append(out, s.name)
		}
	}
	return out
}

// Describe says, for each setting p makes, what enforces it here: "memory 512 MiB (cgroup
// v1), network none (not enforced on this machine)"; "off" for a Policy that bounds nothing.
func (e Enforcement) Describe(p Policy) string {
	ss := e.settings(p)
	if len(ss) == 0 {
		return "off"
	}
	parts := make([]string, len(ss))
	for i, s := range ss {
		mech := s.mech
		if mech == "" {
			mech = "NOT ENFORCED on this machine"
		}
		parts[i] = fmt.Sprintf("%s %s (%s)", s.name, s.value, mech)
	}
	return strings.Join(parts, ", ")
}

// setting is one setting a Policy makes, its value and what enforces it.
type setting struct{ name, value, mech string }

func (e Enforcement) settings(p Policy) []setting {
	var out []setting
	if p.Memory > 0 {
		out = append(out, setting{"memory", Size(p.Memory).String(), e.Memory})
	}
	if p.CPU > 0 {
		cores := fmt.Sprintf("%g cores", p.CPU)
		if p.CPU == 1 {
			cores = "1 core"
		}
		out = append(out, setting{"cpu", cores, e.CPU})
	}
	if p.Pids > 0 {
		out = append(out, setting{"pids", fmt.Sprint(p.Pids), e.Pids})
	}
	if p.Files > 0 {
		out = append(out, setting{"files", fmt.Sprint(p.Files), e.Files})
	}
	if p.NoNetwork() {
		out = append(out, setting{"network", NetworkNone, e.Network})
	}
	if p.ConfinesFiles() {
		out = append(out, setting{"paths", fmt.Sprintf("read %d, write %d besides the defaults", len(p.Read), len(p.Write)), e.Paths})
	}
	return out
}

// RequireError is the refusal of a Policy that requires settings this machine cannot
// enforce.
func (e Enforcement) RequireError(p Policy) error {
	if !p.Require {
		return nil
	}
	if missing := e.Unenforced(p); len(missing) > 0 {
		return fmt.Errorf("the sandbox requires %s, which this machine does not enforce (%s); remove \"require\" to start it anyway", strings.Join(missing, ", "), e.Describe(p))
	}
	return nil
}
