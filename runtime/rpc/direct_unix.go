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
	rc := nonBlockingConn(w)
	if rc == nil {
		return nil
	}
	a := &attempt{rc: rc}
	a.try = a.write
	return a.do
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

// attempt is one write to a non-blocking descriptor that never waits for room.
type attempt struct {
	rc  syscall.RawConn
	try func(fd uintptr) bool // a.write, bound once
	b   []byte
	n   int
	err error
}

func (a *attempt) write(fd uintptr) bool {
	a.n, a.err = rawWrite(fd, a.b)
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

// pollReader reads a non-blocking descriptor, waiting in the runtime's poller when it has
// nothing to give.
type pollReader struct {
	rc  syscall.RawConn
	try func(fd uintptr) bool // r.read, bound once
	b   []byte
	n   int
	err error
}

// pollableReader returns a reader of r's descriptor that reads with rawRead, when r is a
// non-blocking descriptor; nil otherwise. Such a descriptor must have been non-blocking
// when its *os.File was made (os.Pipe, NonBlocking): that is what makes the runtime's
// poller wait on it.
func pollableReader(r io.Reader) io.Reader {
	rc := nonBlockingConn(r)
	if rc == nil {
		return nil
	}
	pr := &pollReader{rc: rc}
	pr.try = pr.read
	return pr
}

func (r *pollReader) read(fd uintptr) bool {
	for {
		r.n, r.err = rawRead(fd, r.b)
		if r.err != unix.EINTR {
			return r.err != unix.EAGAIN
		}
	}
}

// Read reads what the descriptor has, waiting for it when it has nothing.
func (r *pollReader) Read(b []byte) (int, error) {
	r.b = b
	err := r.rc.Read(r.try)
	n, rerr := r.n, r.err
	r.b, r.n, r.err = nil, 0, nil
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
