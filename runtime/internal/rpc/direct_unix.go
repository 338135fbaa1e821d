//go:build unix

package rpc

import (
	"io"
	"os"

	"golang.org/x/sys/unix"

	"github.com/toolnode/toolnode/runtime/internal/rawio"
)

// directWriter returns a function that writes as much of b as w takes without waiting, when
// w is a non-blocking descriptor (a pipe made by os.Pipe, or one NonBlocking prepared);
// nil otherwise. Its writes are rawio's, which never wake the scheduler's monitor thread.
// Calls of the function must not overlap (an Outbox makes them under its lock): they share
// one rawio.Op, so that a write allocates nothing.
func directWriter(w io.Writer) func([]byte) (int, error) {
	rc := rawio.RawConn(w)
	if rc == nil {
		return nil
	}
	x := rawio.NewWrite(rc, false)
	return func(b []byte) (int, error) {
		n, werr, err := x.Run(b)
		if werr == unix.EAGAIN || werr == unix.EINTR {
			werr = nil // no room now: the rest is queued
		}
		if err != nil {
			return n, err
		}
		return n, werr
	}
}

// pollableReader returns a reader of r's descriptor that reads with rawio, when r is a
// non-blocking descriptor; nil otherwise. Such a descriptor must have been non-blocking
// when its *os.File was made (os.Pipe, NonBlocking): that is what makes the runtime's
// poller wait on it.
func pollableReader(r io.Reader) io.Reader {
	rc := rawio.RawConn(r)
	if rc == nil {
		return nil
	}
	return rawio.NewRead(rc)
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
