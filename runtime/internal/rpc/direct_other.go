//go:build !unix

package rpc

import (
	"io"
	"os"
)

// directWriter: without non-blocking descriptors every write goes through Run.
func directWriter(io.Writer) func([]byte) (int, error) { return nil }

// NonBlocking returns f: this system has no non-blocking descriptors for Outbox.
func NonBlocking(f *os.File) *os.File { return f }

// pollableReader: without non-blocking descriptors a Conn reads r itself.
func pollableReader(io.Reader) io.Reader { return nil }
