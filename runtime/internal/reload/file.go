package reload

import (
	"bytes"
	"context"
	"path/filepath"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
)

// File keeps what a file of the node's says (its access file, its lock file) in force as
// the file changes: read when opened, where it must be good, and again by Reload (or
// Watch), where a file that has turned bad or cannot be read leaves the last good content
// in force, the reason logged once until the file changes. It is safe for concurrent use.
type File[T any] struct {
	path, what string // what names the file in the log ("access file")
	log        hclog.Logger
	read       func(path string) ([]byte, T, error)

	mu    sync.Mutex // serialises reloads
	last  []byte     // the file as last read, good or bad
	apply func(T)
}

// OpenFile reads the file at path with read, which returns its bytes (nil when it cannot
// be read) and what they say, or why they say nothing good; the file must be good. A
// reload gives what a good new file says to apply (see OnChange).
func OpenFile[T any](path, what string, log hclog.Logger, read func(path string) ([]byte, T, error)) (*File[T], T, error) {
	data, v, err := read(path)
	if err != nil {
		return nil, v, err
	}
	return &File[T]{path: path, what: what, log: log, read: read, last: data}, v, nil
}

// OnChange sets what is given each good new content a reload reads (not the first).
func (f *File[T]) OnChange(apply func(T)) {
	f.mu.Lock()
	f.apply = apply
	f.mu.Unlock()
}

// Reload reads the file again. An unchanged file is left alone. A good new file is given to
// the OnChange function; a bad one is logged (once, until it changes) and the last good
// content stays. It returns whether the content changed, and the file's problem if it is
// bad.
func (f *File[T]) Reload() (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	data, v, err := f.read(f.path)
	if data == nil {
		if f.last != nil {
			f.log.Error("cannot read the "+f.what+"; keeping the last good one", "file", f.path, "error", err)
			f.last = nil
		}
		return false, err
	}
	if bytes.Equal(data, f.last) {
		return false, nil
	}
	f.last = data
	if err != nil {
		f.log.Error(f.what+" is bad; keeping the last good one", "file", f.path, "error", err)
		return false, err
	}
	if f.apply != nil {
		f.apply(v)
	}
	return true, nil
}

// Watch reloads the file whenever it changes, until ctx ends. It watches the file's folder,
// so an editor that saves by writing a new file and renaming it over the old one is seen;
// changes are taken once the folder has been still for quiet (DefaultQuiet when 0).
func (f *File[T]) Watch(ctx context.Context, quiet time.Duration) error {
	w, err := NewWatcher(f.log, quiet)
	if err != nil {
		return err
	}
	w.Watch([]string{filepath.Dir(f.path)})
	w.Run(ctx, func() { _, _ = f.Reload() })
	return nil
}
