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
// servers JSON of VS Code: a command, or the url of a remote server with its headers.
type serverEntry struct {
	Type    string            `json:"type"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	Cwd     string            `json:"cwd"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
}

// remoteTypes are the "type" values clients write for a server reached over Streamable
// HTTP.
var remoteTypes = map[string]bool{"http": true, "streamable-http": true, "streamableHttp": true}

// LoadConfig reads an MCP client configuration file ({"mcpServers": {...}} or VS Code's
// {"servers": {...}}) and returns a manifest per server, named after its key: stdio servers
// become processes, "url" servers remote bundles. Header values may name the node's
// environment variables as ${NAME}.
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
		remote := remoteTypes[s.Type] || (s.Type == "" && s.URL != "")
		if !remote && s.Type != "" && s.Type != "stdio" {
			return nil, fmt.Errorf("%s: server %q: type %q is not supported; stdio and Streamable HTTP (\"http\") servers can be bundles", path, name, s.Type)
		}
		if remote {
			m := &Manifest{Name: name, URL: s.URL, Headers: s.Headers, Dir: filepath.Dir(abs), Path: abs}
			if s.Command != "" {
				m.Command = append([]string{s.Command}, s.Args...)
			}
			if err := m.check(); err != nil {
				return nil, fmt.Errorf("%s: server %q: %w", path, name, err)
			}
			out = append(out, m)
			continue
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
