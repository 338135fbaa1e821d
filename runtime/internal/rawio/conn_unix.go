//go:build unix

package rawio

import (
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
)

// Listener returns ln with its TCP connections reading and writing by Op (see the package's
// doc); any other connection it accepts comes as it is.
func Listener(ln net.Listener) net.Listener { return listener{ln} }

type listener struct{ net.Listener }

func (l listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return c, err
	}
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c, nil
	}
	rc := RawConn(tc)
	if rc == nil {
		return c, nil
	}
	return &conn{TCPConn: tc, r: NewRead(rc), w: NewWrite(rc, true)}, nil
}

// conn is a TCP connection whose Read and Write are made by Op; the rest (deadlines, Close,
// CloseWrite, addresses) is the TCPConn's, which shares the descriptor and its place in
// the poller. Read and Write may overlap, as net.Conn allows; reads, as writes, are made one
// at a time, each whole, as a TCPConn's are.
type conn struct {
	*net.TCPConn
	rmu, wmu sync.Mutex
	r, w     *Op
}

func (c *conn) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	c.rmu.Lock()
	n, err := c.r.Read(b)
	c.rmu.Unlock()
	if err != nil && err != io.EOF {
		if errno, ok := err.(syscall.Errno); ok {
			err = os.NewSyscallError("read", errno)
		}
		return 0, c.opError("read", err)
	}
	return n, err
}

func (c *conn) Write(b []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	written := 0
	for written < len(b) {
		n, opErr, err := c.w.Run(b[written:])
		written += n
		switch {
		case err != nil:
			return written, c.opError("write", err)
		case opErr != nil:
			return written, c.opError("write", os.NewSyscallError("write", opErr))
		case n == 0:
			return written, c.opError("write", io.ErrShortWrite)
		}
	}
	return written, nil
}

// opError is err as a TCPConn's Read or Write (op) gives it: a *net.OpError naming op. The
// descriptor's own errors come from RawConn as OpErrors naming raw-read or raw-write, whose
// Timeout and the error they wrap (os.ErrDeadlineExceeded, net.ErrClosed) are kept.
func (c *conn) opError(op string, err error) error {
	if oe, ok := errors.AsType[*net.OpError](err); ok {
		e := *oe
		e.Op = op
		return &e
	}
	return &net.OpError{Op: op, Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
}
