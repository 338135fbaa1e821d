package manifest

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// Problem is a bundle that could not be loaded, with the manifest file and the reason.
type Problem struct {
	Path string
	Err  error
}

func (p Problem) Error() string { return p.Err.Error() }

// Discover finds every subdirectory of each of dirs that holds a bundle.json and loads it.
// Bad manifests come back as problems, never stopping the others. When two bundles share a
// name, the one whose manifest path sorts first keeps it, so the outcome does not depend on
// the order of the file system.
func Discover(dirs ...string) ([]*Manifest, []Problem) {
	var paths []string
	var problems []Problem
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			problems = append(problems, Problem{Path: dir, Err: fmt.Errorf("read bundles folder: %w", err)})
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, FileName)); err == nil {
			problems = append(problems, Problem{Path: dir, Err: ownFolderError(dir)})
		}
		for _, e := range entries {
			p := filepath.Join(dir, e.Name(), FileName)
			if _, err := os.Stat(p); err == nil {
				paths = append(paths, p)
			}
		}
	}
	sort.Strings(paths)
	var found []*Manifest
	byName := map[string]string{}
	for _, p := range paths {
		m, err := Load(p)
		if err != nil {
			problems = append(problems, Problem{Path: p, Err: err})
			continue
		}
		if first, dup := byName[m.Name]; dup {
			problems = append(problems, Problem{Path: p, Err: fmt.Errorf("%s: bundle name %q is already taken by %s", p, m.Name, first)})
			continue
		}
		byName[m.Name] = p
		found = append(found, m)
	}
	return found, problems
}

// ownFolderError says that dir, given as a folder of bundles, is a bundle's own folder, and
// what to give instead.
func ownFolderError(dir string) error {
	parent := filepath.Join(dir, "..")
	return fmt.Errorf("%s is a bundle's own folder (it holds %s), not a folder of bundles: pass its parent, --bundles %s (or check the bundle with toolnode check %s)",
		dir, FileName, parent, dir)
}
