//go:build linux

package rawio

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// Write and Read are write(2) and read(2) on a non-blocking descriptor, made with
// RawSyscall: the scheduler is not told, so its monitor thread is not woken (see the
// package's doc).
func Write(fd uintptr, b []byte) (int, error) { return call(unix.SYS_WRITE, fd, b) }

// Read is read(2) on a non-blocking descriptor; see Write.
func Read(fd uintptr, b []byte) (int, error) { return call(unix.SYS_READ, fd, b) }

// call makes the read(2) or write(2) trap names on fd with b.
func call(trap, fd uintptr, b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	n, _, errno := unix.RawSyscall(trap, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}
