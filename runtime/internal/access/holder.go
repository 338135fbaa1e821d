package access

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/toolnode/toolnode/runtime/internal/reload"
)

// Holder keeps the policy of an access file current: Reload (or Watch) reads the file
// again, and a file that has turned bad leaves the last good policy in place, with the
// reason logged once. It is safe for concurrent use.
type Holder struct {
	path     string
	log      hclog.Logger
	onChange func(*Policy)
	cur      atomic.Pointer[Policy]

	mu       sync.Mutex // serialises reloads
	lastData []byte     // the file as last read, good or bad
}

// Open loads the access file at path, which must be good: a node must not start with a
// policy it cannot read. onChange, when not nil, is called with each new policy a reload
// installs (not with the first).
func Open(path string, log hclog.Logger, onChange func(*Policy)) (*Holder, error) {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	data, p, err := readFile(path)
	if err != nil {
		return nil, err
	}
	h := &Holder{path: path, log: log, onChange: onChange, lastData: data}
	h.cur.Store(p)
	return h, nil
}

// Policy returns the current policy.
func (h *Holder) Policy() *Policy { return h.cur.Load() }

// Reload reads the file again. An unchanged file is left alone. A good new file replaces
// the policy; a bad one is logged (once, until it changes) and the last good policy stays.
// It returns whether the policy changed, and the file's problem if it is bad.
func (h *Holder) Reload() (bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	data, p, err := readFile(h.path)
	if data == nil {
		if h.lastData != nil {
			h.log.Error("cannot read the access file; keeping the last good one", "file", h.path, "error", err)
			h.lastData = nil
		}
		return false, err
	}
	if bytes.Equal(data, h.lastData) {
		return false, nil
	}
	h.lastData = data
	if err != nil {
		h.log.Error("access file is bad; keeping the last good one", "file", h.path, "error", err)
		return false, err
	}
	h.cur.Store(p)
	h.log.Info("access file reloaded", "file", h.path, "clients", len(p.Clients()))
	if h.onChange != nil {
		h.onChange(p)
	}
	return true, nil
}

// Watch reloads the file whenever it changes, until ctx ends. It watches the file's folder,
// so an editor that saves by writing a new file and renaming it over the old one is seen;
// changes are taken once the folder has been still for quiet (reload.DefaultQuiet when 0).
func (h *Holder) Watch(ctx context.Context, quiet time.Duration) error {
	w, err := reload.NewWatcher(h.log, quiet)
	if err != nil {
		return fmt.Errorf("watch access file: %w", err)
	}
	w.Watch([]string{filepath.Dir(h.path)})
	w.Run(ctx, func() { _, _ = h.Reload() })
	return nil
}
