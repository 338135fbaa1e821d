// Package sandbox bounds what a process the node starts may take and touch: memory, CPU,
// processes, open files, the network, and the files it may read and write. A Policy says
// what; Probe says which of it this machine enforces and by which mechanism; Confine
// prepares a command to start under a Policy; RestrictSelf bounds the calling process.
//
// On Linux the bounds come from the kernel: cgroup v2 where the node may write a cgroup
// with the memory, pids and cpu controllers, else the cgroup v1 memory, pids and cpu
// controllers, else rlimits; Landlock for files; a network namespace of its own for
// network "none"; no_new_privs always. Landlock and no_new_privs are applied inside the
// child, before it runs the command: the child is first the node's own binary (a shim, see
// shim_posix.go), which joins the cgroups, sets the rlimits, restricts itself and then
// execs the command. Elsewhere (macOS) only rlimits apply; docs/sandbox.md says what that
// leaves open.
package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Network settings of a Policy.
const (
	// NetworkHost leaves the network as the node has it.
	NetworkHost = "host"
	// NetworkNone gives the process a network of its own with only its own loopback.
	NetworkNone = "none"
)

// Policy is what a sandboxed process may take and touch; the zero Policy bounds nothing
// (the profile "off"). It is the `sandbox` object of bundle.json.
type Policy struct {
	// Memory bounds the memory of the process and every process it starts, in bytes; 0 for
	// no bound. Written "512MiB", "1GiB", "100MB" or a number of bytes.
	Memory int64
	// CPU bounds the processor time, in cores (1.5 is one and a half); 0 for no bound.
	CPU float64
	// Pids bounds how many processes and threads may run at once; 0 for no bound.
	Pids int
	// Files bounds the open files of each process (RLIMIT_NOFILE); 0 for no bound.
	Files int
	// Network is NetworkHost ("" too) or NetworkNone.
	Network string
	// Read and Write are the paths the process may read, and read and write, relative to
	// its directory or absolute. When either is non-nil, every other file is denied but
	// those any program needs (DefaultRead, DefaultWrite, the directory and the program,
	// read-only, and a private temporary directory, writable: $TMPDIR). Both nil: files are
	// not confined.
	Read, Write []string
	// Require refuses to start the process when this machine cannot enforce a setting.
	Require bool
}

// DefaultRead are the paths every confined process may read (and execute): the system's
// programs, libraries and configuration, and the parts of /proc, /sys and /dev a runtime
// reads at start. Missing ones are skipped. Not /proc whole, where the node's environment
// and other bundles' would be readable: "/proc/self" is resolved once, to the process the
// sandbox starts, so the processes it starts cannot read their own /proc/self.
var DefaultRead = []string{
	"/usr", "/lib", "/lib32", "/lib64", "/bin", "/sbin", "/etc", "/opt",
	"/proc/self", "/proc/cpuinfo", "/proc/meminfo", "/proc/stat", "/proc/filesystems", "/proc/sys",
	"/sys/devices/system/cpu", "/sys/fs/cgroup", "/sys/kernel/mm/transparent_hugepage",
	"/dev/urandom", "/dev/random",
}

// DefaultWrite are the paths every confined process may write besides its temporary
// directory.
var DefaultWrite = []string{"/dev/null", "/dev/zero", "/dev/tty"}

// Off is the profile "off": nothing bounded, today's behaviour.
var Off = Policy{}

// Standard is the profile "standard": 1 GiB of memory, 2 cores, 512 processes, 1024 open
// files, the host's network, and files confined to the defaults (the bundle's directory
// and the system read-only, a private temporary directory writable).
var Standard = Policy{Memory: 1 << 30, CPU: 2, Pids: 512, Files: 1024, Network: NetworkHost, Read: []string{}, Write: []string{}}

// Profile returns the profile named name: "off" or "standard".
func Profile(name string) (Policy, error) {
	switch name {
	case "", "off":
		return Off, nil
	case "standard":
		return Standard, nil
	}
	return Policy{}, fmt.Errorf("unknown sandbox profile %q: use off or standard", name)
}

// Zero reports whether p bounds nothing.
func (p Policy) Zero() bool {
	return p.Memory == 0 && p.CPU == 0 && p.Pids == 0 && p.Files == 0 && !p.NoNetwork() && !p.ConfinesFiles()
}

// NoNetwork reports whether p takes the network away.
func (p Policy) NoNetwork() bool { return p.Network == NetworkNone }

// ConfinesFiles reports whether p confines files to its Read and Write paths.
func (p Policy) ConfinesFiles() bool { return p.Read != nil || p.Write != nil }

// Paths resolves p's Read and Write against dir, each list with its defaults, the
// directory and the program (read-only) added; both nil when p does not confine files.
func (p Policy) Paths(dir, program string) (read, write []string) {
	if !p.ConfinesFiles() {
		return nil, nil
	}
	abs := func(ps []string) []string {
		out := make([]string, 0, len(ps))
		for _, s := range ps {
			if !filepath.IsAbs(s) {
				s = filepath.Join(dir, s)
			}
			out = append(out, filepath.Clean(s))
		}
		return out
	}
	read = append(abs(p.Read), DefaultRead...)
	if dir != "" {
		read = append(read, dir)
	}
	if program != "" {
		read = append(read, program)
		if inst := installation(program); inst != "" {
			read = append(read, inst)
		}
	}
	return read, append(abs(p.Write), DefaultWrite...)
}

// installation is the folder a program in a bin/ or shims/ folder was installed with, which
// holds what it runs on (pyenv's and nvm's interpreters and their libraries, a virtual
// environment's): the folder above. Not a home folder, nor ~/.local (other programs'
// data), nor the root.
func installation(program string) string {
	bin := filepath.Dir(program)
	if b := filepath.Base(bin); b != "bin" && b != "shims" {
		return ""
	}
	inst := filepath.Dir(bin)
	home, _ := os.UserHomeDir()
	switch {
	case inst == "/" || inst == "/root" || inst == home || inst == filepath.Join(home, ".local"):
		return ""
	case filepath.Dir(inst) == "/home" || inst == "/usr" || inst == "/usr/local":
		return "" // someone's home; a system folder, read already
	}
	return inst
}

// policyJSON is the `sandbox` object as written.
type policyJSON struct {
	Memory  json.RawMessage `json:"memory,omitempty"`
	CPU     float64         `json:"cpu,omitempty"`
	Pids    int             `json:"pids,omitempty"`
	Files   int             `json:"files,omitempty"`
	Network string          `json:"network,omitempty"`
	Read    []string        `json:"read,omitempty"`
	Write   []string        `json:"write,omitempty"`
	Require bool            `json:"require,omitempty"`
}

// UnmarshalJSON reads the `sandbox` object of bundle.json, refusing unknown keys and
// values out of range with an error that names them.
func (p *Policy) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var j policyJSON
	if err := dec.Decode(&j); err != nil {
		return fmt.Errorf("sandbox: %w (keys: memory, cpu, pids, files, network, read, write, require)", err)
	}
	q := Policy{CPU: j.CPU, Pids: j.Pids, Files: j.Files, Network: j.Network, Read: j.Read, Write: j.Write, Require: j.Require}
	if len(j.Memory) > 0 {
		m, err := parseMemory(j.Memory)
		if err != nil {
			return fmt.Errorf("sandbox: memory: %w", err)
		}
		q.Memory = m
	}
	// An explicit empty list confines files to the defaults: keep it non-nil.
	var keys map[string]json.RawMessage
	_ = json.Unmarshal(b, &keys)
	if _, ok := keys["read"]; ok && q.Read == nil {
		q.Read = []string{}
	}
	if _, ok := keys["write"]; ok && q.Write == nil {
		q.Write = []string{}
	}
	if err := q.Validate(); err != nil {
		return err
	}
	*p = q
	return nil
}

// MarshalJSON writes p as the `sandbox` object of bundle.json.
func (p Policy) MarshalJSON() ([]byte, error) {
	// Pointers, so that an empty list (files confined to the defaults) is written.
	j := struct {
		policyJSON
		Read  *[]string `json:"read,omitempty"`
		Write *[]string `json:"write,omitempty"`
	}{policyJSON: policyJSON{CPU: p.CPU, Pids: p.Pids, Files: p.Files, Network: p.Network, Require: p.Require}}
	if p.Memory > 0 {
		j.Memory, _ = json.Marshal(Size(p.Memory))
	}
	if p.Read != nil {
		j.Read = &p.Read
	}
	if p.Write != nil {
		j.Write = &p.Write
	}
	return json.Marshal(j)
}

// Validate checks p's values.
func (p Policy) Validate() error {
	switch {
	case p.Memory < 0:
		return errors.New("sandbox: memory must not be negative")
	case p.Memory > 0 && p.Memory < 4<<20:
		return fmt.Errorf("sandbox: memory %s is below the 4 MiB any program needs", Size(p.Memory))
	case p.CPU < 0 || math.IsNaN(p.CPU) || math.IsInf(p.CPU, 0):
		return fmt.Errorf("sandbox: cpu %v must be a number of cores above 0 (1.5 is one and a half)", p.CPU)
	case p.Pids < 0:
		return errors.New("sandbox: pids must not be negative")
	case p.Files < 0:
		return errors.New("sandbox: files must not be negative")
	case p.Network != "" && p.Network != NetworkHost && p.Network != NetworkNone:
		return fmt.Errorf("sandbox: network %q: use %q or %q", p.Network, NetworkHost, NetworkNone)
	}
	for _, s := range append(append([]string(nil), p.Read...), p.Write...) {
		if s == "" {
			return errors.New("sandbox: read and write paths must not be empty")
		}
	}
	return nil
}

// units are the suffixes a memory size may carry, longest first.
var units = []struct {
	suffix string
	mult   int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1},
}

// parseMemory reads a size: a JSON number of bytes or a string such as "512MiB".
func parseMemory(raw json.RawMessage) (int64, error) {
	var n int64
	if json.Unmarshal(raw, &n) == nil {
		return n, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return 0, fmt.Errorf("%s is neither a size such as \"512MiB\" nor a number of bytes", raw)
	}
	return ParseSize(s)
}

// ParseSize reads a size such as "512MiB", "1.5GiB", "100MB" or "65536".
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range units {
		if num, ok := strings.CutSuffix(t, u.suffix); ok {
			t, mult = strings.TrimSpace(num), u.mult
			break
		}
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || f < 0 || math.IsInf(f, 0) || f*float64(mult) > math.MaxInt64/2 {
		return 0, fmt.Errorf("%q is not a size: write a number with KiB, MiB or GiB (\"512MiB\")", s)
	}
	return int64(f * float64(mult)), nil
}

// Size is a number of bytes that prints as people write it: "512 MiB".
type Size int64

// String writes s in the largest binary unit that keeps it whole or to one decimal.
func (s Size) String() string {
	for _, u := range []struct {
		name string
		mult int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if int64(s) >= u.mult {
			v := float64(s) / float64(u.mult)
			if v == math.Trunc(v) {
				return fmt.Sprintf("%d %s", int64(v), u.name)
			}
			return fmt.Sprintf("%.1f %s", v, u.name)
		}
	}
	return fmt.Sprintf("%d B", int64(s))
}

// MarshalJSON writes s as bundle.json does: "512MiB".
func (s Size) MarshalJSON() ([]byte, error) {
	return json.Marshal(strings.ReplaceAll(s.String(), " ", ""))
}
