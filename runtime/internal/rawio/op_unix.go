//go:build unix

package rawio

import (
	"io"
	"syscall"

	"golang.org/x/sys/unix"
)

// Op makes one read or one write at a time on a non-blocking descriptor with Read or Write,
// its state bound once so that none allocates. Calls of Run must not overlap.
type Op struct {
	via  func(func(fd uintptr) bool) error // the descriptor's RawConn Read or Write
	op   func(fd uintptr) bool             // x.read or x.write, bound once
	wait bool                              // a write with no room waits for some
	b    []byte
	n    int
	err  error
}

// NewRead returns an Op that reads rc, waiting in the runtime's poller while it has nothing
// to give (and no longer than its read deadline).
func NewRead(rc syscall.RawConn) *Op {
	x := &Op{}
	x.via, x.op = rc.Read, x.read
	return x
}

// NewWrite returns an Op that writes rc. With wait, a write finding no room waits in the
// poller for some (and no longer than the write deadline), as a socket's writer must;
// without, it returns at once having written nothing, as a writer that queues the rest
// (rpc's Outbox) wants.
func NewWrite(rc syscall.RawConn, wait bool) *Op {
	x := &Op{wait: wait}
	x.via, x.op = rc.Write, x.write
	return x
}

// Run reads into or writes b once: how many bytes, the system call's error (EAGAIN for a
// write without wait that found no room), and the descriptor's own (closed, past its
// deadline), which RawConn gives as a *net.OpError or an *os.PathError.
func (x *Op) Run(b []byte) (n int, opErr, err error) {
	x.b = b
	err = x.via(x.op)
	n, opErr = x.n, x.err
	x.b, x.n, x.err = nil, 0, nil
	if opErr != nil {
		n = 0
	}
	return n, opErr, err
}

// Read reads into b once, as an io.Reader does: what the descriptor has, waiting for it
// when it has nothing; io.EOF at its end; else the descriptor's error or the system call's
// (a syscall.Errno). An Op made by NewRead is so an io.Reader.
func (x *Op) Read(b []byte) (int, error) {
	n, opErr, err := x.Run(b)
	switch {
	case err != nil:
		return 0, err
	case opErr != nil:
		return 0, opErr
	case n == 0 && len(b) > 0:
		return 0, io.EOF
	}
	return n, nil
}

func (x *Op) write(fd uintptr) bool {
	for {
		x.n, x.err = Write(fd, x.b)
		if x.err != unix.EINTR {
			return !x.wait || x.err != unix.EAGAIN // no room: wait in the poller, or return
		}
	}
}

func (x *Op) read(fd uintptr) bool {
	for {
		x.n, x.err = Read(fd, x.b)
		if x.err != unix.EINTR {
			return x.err != unix.EAGAIN // nothing yet: wait in the poller
		}
	}
}

// RawConn returns the raw descriptor of v when it is a non-blocking one (a pipe made by
// os.Pipe, a socket of the net package); nil otherwise.
func RawConn(v any) syscall.RawConn {
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
