package cli

import (
	"os"
	"runtime"
)

// oneClientProcs runs the Go scheduler on one processor when the node serves one stdio
// client and nothing else, unless GOMAXPROCS is set in the environment. Such a node only
// relays: each call costs it a few microseconds, and its bundles and its client, processes
// of their own, need the machine's cores more than it does. With more processors the
// scheduler wakes an idle thread for nearly every message that arrives, which costs more
// than the parallelism brings: under 8 calls in flight on 2 cores, the node spent about a
// fifth less CPU per relayed call on one, and relayed 10 to 20% more calls per second
// (docs/PERFORMANCE.md says how that is measured).
func oneClientProcs() {
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
}
