package serve

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/hashicorp/go-hclog"

	"github.com/toolnode/toolnode/runtime/internal/node"
	"github.com/toolnode/toolnode/runtime/internal/pin"
	"github.com/toolnode/toolnode/runtime/internal/reload"
)

// lockFile keeps the node's lock the lock file's: read at start, where it must be good,
// and again whenever it changes (toolnode pin --accept, or an edit), where a bad file keeps
// the last good lock in force, the reason logged.
type lockFile struct {
	path string
	log  hclog.Logger
	node *node.Node

	mu   sync.Mutex
	last []byte // the file as last read, good or bad
}

// openLock reads the lock file at path for a node about to be made.
func openLock(path string, log hclog.Logger) (*lockFile, *pin.Lock, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("--lock: %w (write one with toolnode pin --lock %s)", err, path)
	}
	l, err := pin.Parse(data)
	if err != nil {
		return nil, nil, fmt.Errorf("--lock %s: %w", path, err)
	}
	log.Info("serving the tools the lock file pins", "file", path, "tools", len(l.Tools))
	return &lockFile{path: path, log: log, last: data}, l, nil
}

// reload reads the file again and puts a good new lock in force.
func (f *lockFile) reload() {
	f.mu.Lock()
	defer f.mu.Unlock()
	data, err := os.ReadFile(f.path)
	if err != nil {
		if f.last != nil {
			f.log.Error("cannot read the lock file; keeping the last good one", "file", f.path, "error", err)
			f.last = nil
		}
		return
	}
	if bytes.Equal(data, f.last) {
		return
	}
	f.last = data
	l, err := pin.Parse(data)
	if err != nil {
		f.log.Error("the lock file is bad; keeping the last good one", "file", f.path, "error", err)
		return
	}
	f.log.Info("lock file reloaded", "file", f.path, "tools", len(l.Tools))
	f.node.SetLock(l)
}

// watch reloads the file whenever its folder changes, until ctx ends.
func (f *lockFile) watch(ctx context.Context, wg *sync.WaitGroup) {
	w, err := reload.NewWatcher(f.log, 0)
	if err != nil {
		f.log.Warn("the lock file is not watched", "error", err)
		return
	}
	w.Watch([]string{filepath.Dir(f.path)})
	wg.Add(1)
	go func() {
		defer wg.Done()
		w.Run(ctx, f.reload)
	}()
}
