//go:build !unix

package bundle

import (
	"context"
	"os"
)

// ServeStdio serves the client on the process's stdin and stdout, as Serve does. Unlike on
// Unix, stray prints to os.Stdout are not moved out of the way: do not print to stdout.
func (s *Server) ServeStdio(ctx context.Context) error {
	return s.Serve(ctx, os.Stdin, os.Stdout)
}
