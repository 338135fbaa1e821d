package node

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/toolnode/toolnode/runtime/internal/manifest"
)

// surface is a bundle's cached surface: what it listed when it last ran, and the key of
// the manifest and program it was listed by.
type surface struct {
	Key       string            `json:"key"`
	Tools     []json.RawMessage `json:"tools"`
	Prompts   []json.RawMessage `json:"prompts"`
	Resources []json.RawMessage `json:"resources"`
	Templates []json.RawMessage `json:"resourceTemplates"`
	Offers    Offers            `json:"offers"`
}

func (s *surface) lists() lists {
	return lists{tools: s.Tools, prompts: s.Prompts, resources: s.Resources, templates: s.Templates}
}

// surfaceKey sums up what a bundle's surface depends on: its manifest (fp holds it and the
// program file's size and modification time) and, for a program found on PATH, which file
// that is and its size and time.
func surfaceKey(m *manifest.Manifest, fp string) string {
	h := sha256.New()
	h.Write([]byte(fp))
	if prog, err := m.Program(); err == nil && !strings.ContainsRune(prog, '/') {
		if path, err := exec.LookPath(prog); err == nil {
			if fi, err := os.Stat(path); err == nil {
				fmt.Fprintf(h, "|%s|%d|%d", path, fi.Size(), fi.ModTime().UnixNano())
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// surfacePath is the file caching m's surface, one per bundle name and manifest file; ""
// when the node keeps no state directory.
func (n *Node) surfacePath(m *manifest.Manifest) string {
	if n.cfg.StateDir == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(m.Path + "\x00" + m.Name))
	return filepath.Join(n.cfg.StateDir, "surfaces", m.Name+"-"+hex.EncodeToString(sum[:8])+".json")
}

// loadSurface reads m's cached surface; false when there is none or it was listed by
// another manifest or program.
func (n *Node) loadSurface(m *manifest.Manifest, fp string) (*surface, bool) {
	path := n.surfacePath(m)
	if path == "" {
		return nil, false
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, false
	}
	var sf surface
	if err := json.Unmarshal(b, &sf); err != nil {
		n.log.Named(m.Name).Warn("unreadable cached surface; starting the bundle to show it again", "file", path, "error", err)
		return nil, false
	}
	if sf.Key != surfaceKey(m, fp) {
		n.log.Named(m.Name).Info("cached surface is stale (manifest or program changed); starting the bundle to show it again", "file", path)
		return nil, false
	}
	return &sf, true
}

// saveSurface caches what a bundle showed, replacing the file at once (a reader sees the
// old surface or the new, never half of one); an unchanged surface is not written.
func (n *Node) saveSurface(m *manifest.Manifest, fp string, l lists, o Offers) error {
	path := n.surfacePath(m)
	if path == "" {
		return nil
	}
	b, err := json.Marshal(surface{Key: surfaceKey(m, fp), Tools: l.tools, Prompts: l.prompts, Resources: l.resources, Templates: l.templates, Offers: o})
	if err != nil {
		return fmt.Errorf("encode surface of %q: %w", m.Name, err)
	}
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, b) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("state directory: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".surface-*")
	if err != nil {
		return fmt.Errorf("cache surface of %q: %w", m.Name, err)
	}
	defer os.Remove(tmp.Name()) // after the rename, nothing is left to remove
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("cache surface of %q: %w", m.Name, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("cache surface of %q: %w", m.Name, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("cache surface of %q: %w", m.Name, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("cache surface of %q: %w", m.Name, err)
	}
	return nil
}
