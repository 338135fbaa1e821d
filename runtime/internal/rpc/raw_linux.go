//go:build linux

package rpc

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// rawWrite and rawRead are write(2) and read(2) on a non-blocking descriptor, which never
// wait, made without telling the scheduler that a system call may block: it then never
// wakes its monitor thread for them. Without this, each message a pipe carries wakes that
// thread, which then polls every 20 µs for a millisecond or more; on the node's relay path
// that polling was a fifth of the node's CPU.
func rawWrite(fd uintptr, b []byte) (int, error) { return rawIOCall(unix.SYS_WRITE, fd, b) }

func rawRead(fd uintptr, b []byte) (int, error) { return rawIOCall(unix.SYS_READ, fd, b) }

// rawIOCall makes the read(2) or write(2) trap names on fd with b.
func rawIOCall(trap, fd uintptr, b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	n, _, errno := unix.RawSyscall(trap, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}
