//go:build unix

package bundle

import (
	"context"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// ServeStdio serves the client on the process's stdin and stdout, as Serve does.
//
// While it runs, file descriptor 1 (os.Stdout, and what C code or child processes print)
// points at stderr, and the protocol goes to a private copy of the real stdout: a stray
// print then lands in the log instead of corrupting the stream. Stdout is restored on
// return. Only one ServeStdio may run at a time.
func (s *Server) ServeStdio(ctx context.Context) error {
	fd, err := unix.Dup(1)
	if err != nil {
		return fmt.Errorf("bundle: keeping stdout for the protocol: %w", err)
	}
	unix.CloseOnExec(fd)
	out := os.NewFile(uintptr(fd), "mcp-stdout")
	defer out.Close()
	if err := unix.Dup2(2, 1); err != nil {
		return fmt.Errorf("bundle: pointing stdout at stderr: %w", err)
	}
	defer unix.Dup2(fd, 1)
	return s.Serve(ctx, os.Stdin, out)
}
