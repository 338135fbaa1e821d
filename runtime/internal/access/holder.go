package access

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/toolnode/toolnode/runtime/internal/reload"
)

// Holder keeps the policy of an access file current: Reload (or Watch) reads the file
// again, and a file that has turned bad leaves the last good policy in place, with the
// reason logged once (see reload.File). It is safe for concurrent use.
type Holder struct {
	file *reload.File[*Policy]
	cur  atomic.Pointer[Policy]
}

// Open loads the access file at path, which must be good: a node must not start with a
// policy it cannot read. onChange, when not nil, is called with each new policy a reload
// installs (not with the first).
func Open(path string, log hclog.Logger, onChange func(*Policy)) (*Holder, error) {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	f, p, err := reload.OpenFile(path, "access file", log, readFile)
	if err != nil {
		return nil, err
	}
	h := &Holder{file: f}
	h.cur.Store(p)
	f.OnChange(func(p *Policy) {
		h.cur.Store(p)
		log.Info("access file reloaded", "file", path, "clients", len(p.Clients()))
		if onChange != nil {
			onChange(p)
		}
	})
	return h, nil
}

// Policy returns the current policy.
func (h *Holder) Policy() *Policy { return h.cur.Load() }

// Reload reads the file again. An unchanged file is left alone. A good new file replaces
// the policy; a bad one is logged (once, until it changes) and the last good policy stays.
// It returns whether the policy changed, and the file's problem if it is bad.
func (h *Holder) Reload() (bool, error) { return h.file.Reload() }

// Watch reloads the file whenever it changes, until ctx ends. It watches the file's folder,
// so an editor that saves by writing a new file and renaming it over the old one is seen;
// changes are taken once the folder has been still for quiet (reload.DefaultQuiet when 0).
func (h *Holder) Watch(ctx context.Context, quiet time.Duration) error {
	if err := h.file.Watch(ctx, quiet); err != nil {
		return fmt.Errorf("watch access file: %w", err)
	}
	return nil
}
