package telemetry

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// ProfileEnv names the variable that makes a process write a CPU profile: to the file it
// names, with the process's id after it (FILE.PID), so that the node, the bench's floor and
// its least relays can share one value. `make bench-http-profile` sets it.
const ProfileEnv = "TOOLNODE_CPUPROFILE"

// StartCPUProfile starts the CPU profile ProfileEnv asks for, and returns what ends it
// and closes its file; without the variable it does nothing.
func StartCPUProfile() (stop func(), err error) {
	path := os.Getenv(ProfileEnv)
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(fmt.Sprintf("%s.%d", path, os.Getpid()))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ProfileEnv, err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", ProfileEnv, err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
