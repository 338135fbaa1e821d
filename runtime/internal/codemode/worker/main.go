package worker

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
)

// A process whose environment has workerVar is a worker: checked at init, as package proc
// checks for its reaper, so that every binary that links the node (the node's own, and
// test binaries acting as one) can be started as a worker without a flag of its own.
func init() {
	if v, ok := os.LookupEnv(workerVar); ok {
		limit, _ := strconv.ParseInt(v, 10, 64)
		os.Exit(Main(os.Stdin, os.Stdout, os.Stderr, limit))
	}
}

// Main is a worker process: it bounds itself (see restrict), then serves the node's runs
// read from in, answering on out, until in ends, and returns its exit code; errors go to
// errOut. limit is its memory bound in bytes, which the node had the kernel hold; 0 for
// none.
func Main(in io.Reader, out, errOut io.Writer, limit int64) int {
	soft := int64(0)
	if limit > 0 {
		// The garbage collector works harder as the heap nears three quarters of the
		// bound, and a program whose live data passes it is stopped with the bound's
		// error (watchHeap) before the kernel has to end the process.
		soft = limit / 4 * 3
		debug.SetMemoryLimit(soft)
	}
	if err := restrict(); err != nil {
		fmt.Fprintf(errOut, "toolnode run-worker: %v\n", err)
		return 1
	}
	if err := Serve(in, out, soft, limit); err != nil {
		fmt.Fprintf(errOut, "toolnode run-worker: %v\n", err)
		return 1
	}
	return 0
}
