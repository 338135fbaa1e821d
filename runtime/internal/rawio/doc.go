// Package rawio reads and writes non-blocking descriptors (pipes, sockets) with read(2) and
// write(2) made without telling the Go scheduler that a system call may block.
//
// Such a call never waits: a descriptor with nothing to read, or no room to write, answers
// EAGAIN at once, and the goroutine then waits in the runtime's poller as the os and net
// packages' own reads do. What is spared is the scheduler's bookkeeping around a call that
// may block: on Linux, the first such call after the process has been idle wakes the
// scheduler's monitor thread (sysmon), which then polls every 20 µs for a millisecond or
// more. A relay between a client and a bundle makes a handful of system calls per call and
// is idle in between: without this, that polling (and the wake-ups) was a fifth of the
// node's CPU per call over stdio, and a seventh over HTTP.
//
// Op makes one read or write on a descriptor's syscall.RawConn; Listener makes the
// connections a net.Listener accepts read and write so. On systems without non-blocking
// descriptors (Windows) Listener is the identity and Op is not made.
package rawio
