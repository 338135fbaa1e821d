package audit

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"

	"github.com/hashicorp/go-hclog"
)

// file is the audit file: appended to, and rotated when a line would take it past
// maxSize. Only the writer goroutine uses it (and Close, once the writer has stopped).
type file struct {
	path    string
	maxSize int64
	keep    int
	log     hclog.Logger

	f       *os.File // nil after a rotation failed to open the new file: tried again on the next write
	size    int64
	limit   int64 // the size that starts a rotation: maxSize, or more after a rotation failed
	rotates bool  // a regular file; a pipe or a device is written as it is
}

func openFile(path string, maxSize int64, keep int, log hclog.Logger) (*file, error) {
	f := &file{path: path, maxSize: maxSize, limit: maxSize, keep: keep, log: log}
	if err := f.open(); err != nil {
		return nil, err
	}
	return f, nil
}

// open opens the file at path for appending, creating it with mode 0600.
func (f *file) open() error {
	fh, err := os.OpenFile(f.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("open audit log: %w", err)
	}
	fi, err := fh.Stat()
	if err != nil {
		fh.Close()
		return fmt.Errorf("open audit log: %w", err)
	}
	f.f, f.size, f.rotates = fh, fi.Size(), fi.Mode().IsRegular()
	return nil
}

func (f *file) Write(p []byte) (int, error) {
	if f.f == nil {
		if err := f.open(); err != nil {
			return 0, err
		}
	}
	n, err := f.f.Write(p)
	f.size += int64(n)
	return n, err
}

// full reports whether a line of n bytes, after buffered bytes not yet written, would
// take the file past its size. An empty file is never full: it takes one line of any size.
func (f *file) full(buffered, n int) bool {
	pending := f.size + int64(buffered)
	return f.f != nil && f.rotates && pending > 0 && pending+int64(n) > f.limit
}

// rotate renames the file FILE.1, after FILE.1 to FILE.2 and so on up to FILE.keep (the
// one there before is removed), and starts a new FILE. When renaming FILE fails, it is
// appended to as it is, and the next try comes after another maxSize bytes, so that a
// failing rename is logged once per maxSize, not once per line. When the new file cannot
// be opened, Write tries again; until it succeeds nothing is rotated, so that the files
// kept are not shifted out one by one.
func (f *file) rotate() {
	if f.f == nil {
		return
	}
	if err := f.f.Close(); err != nil {
		f.log.Warn("closing the audit file before rotating it", "error", err)
	}
	f.f = nil
	oldest := f.rotated(f.keep)
	switch err := os.Remove(oldest); {
	case err == nil:
		f.log.Info("audit file removed by rotation: it was the oldest kept", "file", oldest, "keep", f.keep)
	case !errors.Is(err, fs.ErrNotExist):
		f.log.Warn("cannot remove the oldest audit file", "file", oldest, "error", err)
	}
	for i := f.keep - 1; i >= 1; i-- {
		if err := os.Rename(f.rotated(i), f.rotated(i+1)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			f.log.Warn("cannot rotate an audit file", "file", f.rotated(i), "error", err)
		}
	}
	renamed := os.Rename(f.path, f.rotated(1))
	if renamed != nil {
		f.log.Error("cannot rotate the audit file: appending to it past its size", "file", f.path, "error", renamed)
	}
	if err := f.open(); err != nil {
		f.log.Error("cannot open a new audit file after rotating", "file", f.path, "error", err)
		return
	}
	f.limit = f.maxSize
	if renamed != nil {
		f.limit = f.size + f.maxSize
	}
}

// rotated is the name of the i-th rotated file, 1 the newest.
func (f *file) rotated(i int) string { return f.path + "." + strconv.Itoa(i) }

// Close closes the file.
func (f *file) Close() error {
	if f.f == nil {
		return nil
	}
	return f.f.Close()
}
