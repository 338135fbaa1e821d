package manifest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// serverEntry is one server in the mcpServers JSON of Claude Desktop and Cursor, or the
// servers JSON of VS Code.
type serverEntry struct {
	Type    string            `json:"type"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	Cwd     string            `json:"cwd"`
}

// LoadConfig reads an MCP client configuration file ({"mcpServers": {...}} or VS Code's
// {"servers": {...}}) and returns a manifest per stdio server, named after its key.
func LoadConfig(path string) ([]*Manifest, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	var doc struct {
		MCPServers map[string]serverEntry `json:"mcpServers"`
		Servers    map[string]serverEntry `json:"servers"`
	}
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, explainDecodeError(err))
	}
	servers := doc.MCPServers
	if servers == nil {
		servers = doc.Servers
	}
	if servers == nil {
		return nil, fmt.Errorf("%s: no \"mcpServers\" (or VS Code \"servers\") object", path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("config path %s: %w", path, err)
	}
	names := make([]string, 0, len(servers))
	for name := range servers {
		names = append(names, name)
	}
	sort.Strings(names)
	var out []*Manifest
	for _, name := range names {
		s := servers[name]
		if s.Type != "" && s.Type != "stdio" {
			return nil, fmt.Errorf("%s: server %q: type %q is not supported; only stdio servers can be bundles", path, name, s.Type)
		}
		dir := filepath.Dir(abs)
		if s.Cwd != "" {
			dir = s.Cwd
			if !filepath.IsAbs(dir) {
				dir = filepath.Join(filepath.Dir(abs), dir)
			}
		}
		m := &Manifest{Name: name, Command: append([]string{s.Command}, s.Args...), Env: s.Env, Dir: dir, Path: abs}
		if err := m.check(); err != nil {
			return nil, fmt.Errorf("%s: server %q: %w", path, name, err)
		}
		out = append(out, m)
	}
	return out, nil
}
