// Package reload keeps the set of bundles in step with the folders and configuration files
// they come from: it watches them with fsnotify, waits for changes to settle, and reloads.
package reload

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/hashicorp/go-hclog"

	"github.com/toolnode/toolnode/runtime/internal/manifest"
)

// DefaultQuiet is how long the watched files must stay still before a reload: a bundle
// being copied in starts once, whole, and an editor's save-by-rename is one change.
const DefaultQuiet = 300 * time.Millisecond

// Source says where bundles come from.
type Source struct {
	// Dirs are the --bundles folders.
	Dirs []string
	// Config is an mcpServers file, or "".
	Config string
	// Bundles are given whole by the program that runs the node (in-memory bundles, see
	// manifest.ParseInMemory): served beside those found, the same at every reload.
	Bundles []*manifest.Manifest
}

// Loader reads a Source, remembering the last good manifest of every bundle so that one
// whose manifest turns invalid keeps running as it was. Not safe for concurrent use.
type Loader struct {
	src      Source
	log      hclog.Logger
	lastGood map[string]*manifest.Manifest // by manifest path (or config path + name)
	reported map[string]string             // problems already logged, by path
}

// NewLoader returns a loader of src that logs problems to log.
func NewLoader(src Source, log hclog.Logger) *Loader {
	return &Loader{src: src, log: log, lastGood: map[string]*manifest.Manifest{}, reported: map[string]string{}}
}

// Load returns the manifests to run. A bad manifest is logged (once per distinct problem)
// with its file and reason; if an earlier version was good, that one is kept.
func (l *Loader) Load() []*manifest.Manifest {
	found, problems := manifest.Discover(l.src.Dirs...)
	if l.src.Config != "" {
		ms, notes, err := manifest.LoadConfig(l.src.Config)
		for _, no := range notes {
			problems = append(problems, manifest.Problem{Path: l.src.Config + "#" + no.Server, Err: configNote{no}})
		}
		if err != nil {
			problems = append(problems, manifest.Problem{Path: l.src.Config, Err: err})
			for key, m := range l.lastGood {
				if strings.HasPrefix(key, l.src.Config+"#") {
					found = append(found, m) // keep the config's servers as they were
				}
			}
		}
		found = append(found, ms...)
	}
	found = append(found, l.src.Bundles...)
	good := map[string]*manifest.Manifest{}
	names := map[string]bool{}
	for _, m := range found {
		good[key(m)] = m
		names[m.Name] = true
	}
	seen := map[string]bool{}
	for _, p := range problems {
		seen[p.Path] = true
		var note configNote
		isNote := errors.As(p.Err, &note)
		if l.reported[p.Path] != p.Err.Error() {
			l.reported[p.Path] = p.Err.Error()
			switch {
			case isNote && note.Bundle != "":
				l.log.Info("config server renamed", "server", note.Server, "bundle", note.Bundle, "why", note.Reason)
			case isNote:
				l.log.Warn("config server skipped", "server", note.Server, "why", note.Reason, "file", l.src.Config)
			case l.lastGood[p.Path] != nil && !names[l.lastGood[p.Path].Name]:
				l.log.Error("manifest turned invalid; the bundle keeps running as it was", "file", p.Path, "error", p.Err)
			default:
				l.log.Error("bundle not loaded", "file", p.Path, "error", p.Err)
			}
		}
		// A server skipped on purpose (now remote, say) is not kept as it was.
		if prev, ok := l.lastGood[p.Path]; ok && !names[prev.Name] && !isNote {
			good[p.Path] = prev
			names[prev.Name] = true
		}
	}
	for path := range l.reported {
		if !seen[path] {
			delete(l.reported, path)
		}
	}
	l.lastGood = good
	out := make([]*manifest.Manifest, 0, len(good))
	for _, m := range good {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// configNote carries a skipped or renamed server of the config file among the problems, so
// that it is logged once, like them.
type configNote struct{ manifest.ConfigNote }

func (n configNote) Error() string { return n.String() }

func key(m *manifest.Manifest) string {
	if filepath.Base(m.Path) == manifest.FileName {
		return m.Path
	}
	return m.Path + "#" + m.Name // one of a config file's servers
}

// WatchPaths are the folders to watch for the manifests ms: the bundle folders, each
// bundle's directory and the directory of its program, and the config file's directory.
func (l *Loader) WatchPaths(ms []*manifest.Manifest) []string {
	set := map[string]bool{}
	for _, d := range l.src.Dirs {
		set[d] = true
		// Every subfolder, not only those holding a manifest yet: a bundle copied in slowly
		// gets its bundle.json after its folder, and that must be seen.
		entries, _ := os.ReadDir(d)
		for _, e := range entries {
			if e.IsDir() {
				set[filepath.Join(d, e.Name())] = true
			}
		}
	}
	if l.src.Config != "" {
		set[filepath.Dir(l.src.Config)] = true
	}
	for _, m := range ms {
		if filepath.Base(m.Path) != manifest.FileName {
			continue
		}
		set[m.Dir] = true
		if prog, err := m.Program(); err == nil && strings.HasPrefix(prog, m.Dir+string(filepath.Separator)) {
			set[filepath.Dir(prog)] = true
		}
	}
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// Watcher calls a function once the watched folders have been still for a while after a
// change.
type Watcher struct {
	fs    *fsnotify.Watcher
	log   hclog.Logger
	quiet time.Duration

	mu      sync.Mutex
	watched map[string]bool
}

// NewWatcher returns a watcher waiting quiet (DefaultQuiet when 0) after the last change.
func NewWatcher(log hclog.Logger, quiet time.Duration) (*Watcher, error) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch bundle folders: %w", err)
	}
	if quiet <= 0 {
		quiet = DefaultQuiet
	}
	return &Watcher{fs: fw, log: log, quiet: quiet, watched: map[string]bool{}}, nil
}

// Watch makes paths the watched folders. Folders that do not exist (yet) are skipped: the
// parent folder's watch sees them appear.
func (w *Watcher) Watch(paths []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	want := map[string]bool{}
	for _, p := range paths {
		want[p] = true
		if w.watched[p] {
			continue
		}
		if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
			continue
		}
		if err := w.fs.Add(p); err != nil {
			w.log.Warn("cannot watch folder; changes in it need a restart", "path", p, "error", err)
			continue
		}
		w.watched[p] = true
	}
	for p := range w.watched {
		if !want[p] {
			_ = w.fs.Remove(p)
			delete(w.watched, p)
		}
	}
}

// Run calls changed after every burst of changes, until ctx ends; then it closes the watcher.
func (w *Watcher) Run(ctx context.Context, changed func()) {
	defer w.fs.Close()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.fs.Events:
			if !ok {
				return
			}
			w.log.Trace("file event", "event", ev.String())
			timer.Reset(w.quiet)
		case err, ok := <-w.fs.Errors:
			if !ok {
				return
			}
			// An overflow loses events: reload anyway to catch up.
			w.log.Warn("watching bundle folders", "error", err)
			timer.Reset(w.quiet)
		case <-timer.C:
			changed()
		}
	}
}
