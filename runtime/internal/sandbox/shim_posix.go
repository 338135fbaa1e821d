//go:build linux || darwin

package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strings"
	"syscall"
)

// Checked at init, as package proc checks for its reaper, so that every binary that starts
// processes through this package (the node's, and test binaries acting as one) is its own
// shim.
func init() {
	if v, ok := os.LookupEnv(shimVar); ok {
		err := runShim(v)
		fmt.Fprintf(os.Stderr, "toolnode sandbox: %v\n", err)
		os.Exit(126)
	}
}

// runShim applies the spec to this process and execs the command; it returns only on
// failure.
func runShim(v string) error {
	var s shimSpec
	if err := json.Unmarshal([]byte(v), &s); err != nil {
		return fmt.Errorf("read the sandbox spec: %w", err)
	}
	env := make([]string, 0, len(os.Environ()))
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, shimVar+"=") {
			env = append(env, kv)
		}
	}
	if err := joinCgroups(s.Cgroups); err != nil {
		return err
	}
	if s.Loopback {
		if err := loopbackUp(); err != nil {
			return err
		}
	}
	for _, r := range s.Rlimits {
		lim := syscall.Rlimit{Cur: r.Max, Max: r.Max}
		if err := syscall.Setrlimit(r.Resource, &lim); err != nil {
			return fmt.Errorf("set rlimit %d to %d: %w", r.Resource, r.Max, err)
		}
	}
	// no_new_privs and Landlock hold for this thread, which execs: never unlocked.
	runtime.LockOSThread()
	if err := restrictThread(s); err != nil {
		return err
	}
	if err := syscall.Exec(s.Path, os.Args, env); err != nil {
		return fmt.Errorf("exec %s: %w", s.Path, err)
	}
	return nil
}
