package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"
)

// benchBundle returns the absolute paths of a bundle under testdata/bench and of the program
// it builds into build/, which must exist.
func benchBundle(cfg config, name string) (dir, bin string, err error) {
	dir, err = filepath.Abs(filepath.Join(cfg.root, "testdata", "bench", name))
	if err != nil {
		return "", "", err
	}
	bin = filepath.Join(dir, "build", name)
	if _, err := os.Stat(bin); err != nil {
		return "", "", fmt.Errorf("bench bundle %s (run make bench-bundles first): %w", name, err)
	}
	return dir, bin, nil
}

// linkBundle links the bundle directory at path into a folder of its own, for a node
// serving only it.
func linkBundle(path string) (string, error) {
	dir, err := os.MkdirTemp("", "toolnode-bench-")
	if err != nil {
		return "", err
	}
	return dir, os.Symlink(path, filepath.Join(dir, filepath.Base(path)))
}

// writeBundle writes the manifest of a bundle named name into dir/name. Bundles made this way
// share one program given by absolute path, so that a hundred of them cost no copies.
func writeBundle(dir, name string, command []string, extra map[string]any) error {
	m := map[string]any{"name": name, "command": command}
	for k, v := range extra {
		m[k] = v
	}
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, name, "bundle.json"), b, 0o644)
}

// bundleFarm writes n bundles named prefix-00, prefix-01... into a new temporary folder.
func bundleFarm(n int, prefix string, command []string, extra map[string]any) (string, error) {
	dir, err := os.MkdirTemp("", "toolnode-bench-")
	if err != nil {
		return "", err
	}
	for i := range n {
		if err := writeBundle(dir, fmt.Sprintf("%s-%02d", prefix, i), command, extra); err != nil {
			os.RemoveAll(dir)
			return "", err
		}
	}
	return dir, nil
}

// listing is what one full tools/list, following nextCursor, brought back.
type listing struct {
	tools, pages, bytes int
	names               map[string]bool
}

// listAll lists every tool of c, page after page.
func listAll(c *stdioClient) (listing, error) {
	l := listing{names: map[string]bool{}}
	cursor := ""
	for {
		rest := `"tools/list"`
		if cursor != "" {
			rest += `,"params":{"cursor":` + strconv.Quote(cursor) + `}`
		}
		line, err := c.roundTrip(rest)
		if err != nil {
			return l, err
		}
		var page struct {
			Result struct {
				Tools []struct {
					Name string `json:"name"`
				} `json:"tools"`
				NextCursor string `json:"nextCursor"`
			} `json:"result"`
		}
		if err := json.Unmarshal(line, &page); err != nil {
			return l, fmt.Errorf("tools/list answer: %w", err)
		}
		l.pages++
		l.bytes += len(line)
		l.tools += len(page.Result.Tools)
		for _, t := range page.Result.Tools {
			l.names[t.Name] = true
		}
		if cursor = page.Result.NextCursor; cursor == "" {
			return l, nil
		}
	}
}

// lister is a caller whose call is one full tools/list, so that measure times lists.
type lister struct{ c *stdioClient }

func (l lister) call(string) error {
	_, err := listAll(l.c)
	return err
}

func (l lister) close() { l.c.close() }

// within runs f and gives up after d, so that a node that never answers fails the run
// instead of hanging it.
func within(d time.Duration, what string, f func() error) error {
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		return fmt.Errorf("%s: no answer within %s", what, d)
	}
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }
