//go:build unix && !linux

package rawio

import "golang.org/x/sys/unix"

// Write and Read are write(2) and read(2) on a non-blocking descriptor. Elsewhere than on
// Linux they go through the system's usual calls.
func Write(fd uintptr, b []byte) (int, error) { return unix.Write(int(fd), b) }

// Read is read(2) on a non-blocking descriptor; see Write.
func Read(fd uintptr, b []byte) (int, error) { return unix.Read(int(fd), b) }
