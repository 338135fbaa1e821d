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
// lock): they share one attempt's state, so that a write allocates nothing.
func directWriter(w io.Writer) func([]byte) (int, error) {
	sc, ok := w.(syscall.Conn)
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
	a := &attempt{rc: rc}
	a.try = a.write
	return a.do
}

// attempt is one write to a non-blocking descriptor that never waits for room.
type attempt struct {
	rc  syscall.RawConn
	try func(fd uintptr) bool // a.write, bound once
	b   []byte
	n   int
	err error
}

func (a *attempt) write(fd uintptr) bool {
	a.n, a.err = unix.Write(int(fd), a.b)
	return true // one attempt: never wait for room
}

func (a *attempt) do(b []byte) (int, error) {
	a.b = b
	err := a.rc.Write(a.try)
	n, werr := max(a.n, 0), a.err
	a.b, a.n, a.err = nil, 0, nil
	if werr == unix.EAGAIN || werr == unix.EINTR {
		werr = nil
	}
	if err != nil {
		return n, err
	}
	return n, werr
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
