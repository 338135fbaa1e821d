package serve

import (
	"context"
	"fmt"
	"os"
	"sync"

	"github.com/hashicorp/go-hclog"

	"github.com/toolnode/toolnode/runtime/internal/node"
	"github.com/toolnode/toolnode/runtime/internal/pin"
	"github.com/toolnode/toolnode/runtime/internal/reload"
)

// lockFile keeps the node's lock the lock file's: read at start, where it must be good,
// and again whenever it changes (toolnode pin --accept, or an edit), where a bad file keeps
// the last good lock in force, the reason logged (see reload.File).
type lockFile struct {
	file *reload.File[*pin.Lock]
	path string
	log  hclog.Logger
}

// openLock reads the lock file at path for a node about to be made.
func openLock(path string, log hclog.Logger) (*lockFile, *pin.Lock, error) {
	f, l, err := reload.OpenFile(path, "lock file", log, readLock)
	if err != nil {
		return nil, nil, err
	}
	log.Info("serving the tools the lock file pins", "file", path, "tools", len(l.Tools))
	return &lockFile{file: f, path: path, log: log}, l, nil
}

// readLock reads the lock file at path: its bytes (nil when it cannot be read) and its lock.
func readLock(path string) ([]byte, *pin.Lock, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("--lock: %w (write one with toolnode pin --lock %s)", err, path)
	}
	l, err := pin.Parse(data)
	if err != nil {
		return data, nil, fmt.Errorf("--lock %s: %w", path, err)
	}
	return data, l, nil
}

// serveTo puts each good new lock a reload reads in force in n.
func (f *lockFile) serveTo(n *node.Node) {
	f.file.OnChange(func(l *pin.Lock) {
		f.log.Info("lock file reloaded", "file", f.path, "tools", len(l.Tools))
		n.SetLock(l)
	})
}

// watch reloads the file whenever its folder changes, until ctx ends.
func (f *lockFile) watch(ctx context.Context, wg *sync.WaitGroup) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := f.file.Watch(ctx, 0); err != nil {
			f.log.Warn("the lock file is not watched", "error", err)
		}
	}()
}
