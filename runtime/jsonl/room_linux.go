package jsonl

import (
	"os"

	"golang.org/x/sys/unix"
)

// pipeRoom returns how many bytes can be written to the pipe f without blocking, or false
// when f is not a pipe or the kernel will not say. TIOCINQ (FIONREAD) on a pipe counts the
// bytes not yet read whichever end asks. size caches the pipe's capacity (0: not asked yet).
func pipeRoom(f *os.File, size *int) (int, bool) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, false
	}
	var unread int
	var sizeErr, unreadErr error
	if rc.Control(func(fd uintptr) {
		if *size == 0 {
			*size, sizeErr = unix.FcntlInt(fd, unix.F_GETPIPE_SZ, 0)
		}
		unread, unreadErr = unix.IoctlGetInt(int(fd), unix.TIOCINQ)
	}) != nil || sizeErr != nil || unreadErr != nil {
		*size = 0
		return 0, false
	}
	// A page of margin: the kernel fills a pipe by pages, not bytes.
	return *size - unread - os.Getpagesize(), true
}
