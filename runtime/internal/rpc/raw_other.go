//go:build unix && !linux

package rpc

import "golang.org/x/sys/unix"

// rawWrite and rawRead are write(2) and read(2) on a non-blocking descriptor. Elsewhere
// than on Linux they go through the system's usual calls.
func rawWrite(fd uintptr, b []byte) (int, error) { return unix.Write(int(fd), b) }

func rawRead(fd uintptr, b []byte) (int, error) { return unix.Read(int(fd), b) }
