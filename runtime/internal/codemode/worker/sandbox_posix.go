//go:build linux || darwin

package worker

import (
	"fmt"

	"github.com/toolnode/toolnode/runtime/internal/proc"
	"github.com/toolnode/toolnode/runtime/internal/sandbox"
)

// supported says workers run on this platform; elsewhere every program runs in the node.
const supported = true

// policy is what a worker may take and touch: its memory bound, and no network. Its files
// are taken by the worker itself once it has started (restrict), as are the open files.
// Where only an address-space rlimit can bound memory, the bound is raised by what the
// worker reserves at start (see goReserve), and the worker holds its heap to the bound
// itself (watchHeap), a program that takes much at once being ended by the rlimit.
func policy(cfg Config) sandbox.Policy {
	mem := cfg.MaxMemory
	if addressSpaceOnly() {
		mem += goReserve
	}
	return sandbox.Policy{Memory: mem, Network: sandbox.NetworkNone}
}

// goReserve is the address space a worker reserves beyond its heap, as measured: the
// node's binary (cgo's threads, the Go runtime's arenas) does not start under an RLIMIT_AS
// of 1.25 GiB, and starts under 2 GiB, where Starlark runs without the 4 GiB it reserves
// for small integers when it can (it says so on stderr).
const goReserve = 2 << 30

// addressSpaceOnly reports whether only an address-space rlimit can bound a worker's memory
// here: no cgroup v1 memory controller, and no cgroup v2 one the node may place it in.
func addressSpaceOnly() bool {
	switch sandbox.Probe().Memory {
	case "cgroup v1":
		return false
	case "cgroup v2":
		return !proc.Contained()
	}
	return true
}

// enforced says how this machine bounds a worker, as toolnode.status and the log say it.
func enforced(cfg Config) string {
	s := sandbox.Probe().Describe(policy(cfg))
	if addressSpaceOnly() {
		s += fmt.Sprintf(" (%s of heap, held by the worker; the rest is what the Go runtime reserves)", Size(cfg.MaxMemory))
	}
	return s + ", files none (landlock, in the worker), sockets none (seccomp, in the worker), no_new_privs"
}

// selfPolicy is what a worker takes from itself once it runs: every file (Landlock with no
// path allowed), TCP, the signals and abstract sockets of other processes, new privileges,
// and all but a few open files; denySockets then takes every new socket.
var selfPolicy = sandbox.Policy{Network: sandbox.NetworkNone, Read: []string{}, Write: []string{}, Files: 16}

// restrict takes from the worker process what a program needs none of.
func restrict() error {
	if _, err := sandbox.RestrictSelf(selfPolicy); err != nil {
		return fmt.Errorf("restrict the worker: %w", err)
	}
	return denySockets()
}
