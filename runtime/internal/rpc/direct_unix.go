//go:build unix

package rpc

import (
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// directWriter returns a function that writes as much of b as w takes without waiting, when
// w is a non-blocking descriptor (a pipe made by os.Pipe, or one NonBlocking prepared);
// nil otherwise. Calls of the function must not overlap (an Outbox makes them under its
// lock): they share one rawIO, so that a write allocates nothing.
func directWriter(w io.Writer) func([]byte) (int, error) {
	rc := nonBlockingConn(w)
	if rc == nil {
		return nil
	}
	x := newRawIO(rc, false)
	return func(b []byte) (int, error) {
		n, werr, err := x.run(b)
		if werr == unix.EAGAIN || werr == unix.EINTR {
			werr = nil // no room now: the rest is queued
		}
		if err != nil {
			return n, err
		}
		return n, werr
	}
}

// nonBlockingConn returns the raw descriptor of v when it is a non-blocking one; nil
// otherwise.
func nonBlockingConn(v any) syscall.RawConn {
	sc, ok := v.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	nonblock := false
	_ = rc.Control(func(fd uintptr) {
		fl, err := unix.FcntlInt(fd, unix.F_GETFL, 0)
		nonblock = err == nil && fl&unix.O_NONBLOCK != 0
	})
	if !nonblock {
		return nil
	}
	return rc
}

// rawIO makes one read or one write at a time on a non-blocking descriptor (see rawRead),
// its state bound once so that none allocates. Calls must not overlap: an Outbox writes
// under its lock, and a Conn reads on one goroutine.
type rawIO struct {
	via func(func(fd uintptr) bool) error // the descriptor's RawConn Read or Write
	op  func(fd uintptr) bool             // x.read or x.write, bound once
	b   []byte
	n   int
	err error
}

func newRawIO(rc syscall.RawConn, reading bool) *rawIO {
	x := &rawIO{}
	if reading {
		x.via, x.op = rc.Read, x.read
	} else {
		x.via, x.op = rc.Write, x.write
	}
	return x
}

// run reads into or writes b once: how many bytes, the system call's error, and the
// descriptor's own (closed, for one).
func (x *rawIO) run(b []byte) (n int, opErr, err error) {
	x.b = b
	err = x.via(x.op)
	n, opErr = x.n, x.err
	x.b, x.n, x.err = nil, 0, nil
	if opErr != nil {
		n = 0
	}
	return n, opErr, err
}

func (x *rawIO) write(fd uintptr) bool {
	x.n, x.err = rawWrite(fd, x.b)
	return true // one attempt: never wait for room
}

func (x *rawIO) read(fd uintptr) bool {
	for {
		x.n, x.err = rawRead(fd, x.b)
		if x.err != unix.EINTR {
			return x.err != unix.EAGAIN // nothing yet: wait in the poller
		}
	}
}

// pollReader reads a non-blocking descriptor, waiting in the runtime's poller when it has
// nothing to give.
type pollReader struct{ x *rawIO }

// pollableReader returns a reader of r's descriptor that reads with rawRead, when r is a
// non-blocking descriptor; nil otherwise. Such a descriptor must have been non-blocking
// when its *os.File was made (os.Pipe, NonBlocking): that is what makes the runtime's
// poller wait on it.
func pollableReader(r io.Reader) io.Reader {
	rc := nonBlockingConn(r)
	if rc == nil {
		return nil
	}
	return pollReader{newRawIO(rc, true)}
}

// Read reads what the descriptor has, waiting for it when it has nothing.
func (r pollReader) Read(b []byte) (int, error) {
	n, rerr, err := r.x.run(b)
	switch {
	case err != nil:
		return 0, err
	case rerr != nil:
		return 0, rerr
	case n == 0 && len(b) > 0:
		return 0, io.EOF
	}
	return n, nil
}

// NonBlocking returns a descriptor for f's file that Outbox can write to without waiting,
// when f is a pipe or a socket; otherwise f itself. Terminals and files are left alone:
// their non-blocking flag would be shared with other processes.
func NonBlocking(f *os.File) *os.File {
	fi, err := f.Stat()
	if err != nil || fi.Mode()&(os.ModeNamedPipe|os.ModeSocket) == 0 {
		return f
	}
	fd, err := unix.Dup(int(f.Fd()))
	if err != nil {
		return f
	}
	unix.CloseOnExec(fd)
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return f
	}
	return os.NewFile(uintptr(fd), f.Name())
}
