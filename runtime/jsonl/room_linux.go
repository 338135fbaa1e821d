package jsonl

import (
	"os"

	"golang.org/x/sys/unix"
)

// pipeRoom returns how many bytes can be written to the pipe f without blocking, or false
// when f is not a pipe or the kernel will not say. TIOCINQ (FIONREAD) on a pipe counts the
// bytes not yet read whichever end asks.
func pipeRoom(f *os.File) (int, bool) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, false
	}
	var size, unread int
	var sizeErr, unreadErr error
	if rc.Control(func(fd uintptr) {
		size, sizeErr = unix.FcntlInt(fd, unix.F_GETPIPE_SZ, 0)
		unread, unreadErr = unix.IoctlGetInt(int(fd), unix.TIOCINQ)
	}) != nil || sizeErr != nil || unreadErr != nil {
		return 0, false
	}
	// A page of margin: the kernel fills a pipe by pages, not bytes.
	return size - unread - os.Getpagesize(), true
}
