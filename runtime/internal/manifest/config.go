package manifest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/toolnode/toolnode/runtime/internal/sandbox"
)

// serverEntry is one server in the mcpServers JSON of Claude Desktop and Cursor, or the
// servers JSON of VS Code. Keys the node has no use for ("disabled", "autoApprove", ...)
// are ignored: the file belongs to a client, not to us.
type serverEntry struct {
	Type      string            `json:"type"`
	Command   string            `json:"command"`
	Args      []string          `json:"args"`
	Env       map[string]string `json:"env"`
	Cwd       string            `json:"cwd"`
	URL       string            `json:"url"`
	Headers   map[string]string `json:"headers"`
	Isolation string            `json:"isolation"`
	Sandbox   *sandbox.Policy   `json:"sandbox"`
}

// remoteTypes are the "type" values clients write for a server reached over Streamable
// HTTP.
var remoteTypes = map[string]bool{"http": true, "streamable-http": true, "streamableHttp": true}

// ConfigNote reports a server of a configuration file that was skipped or renamed.
type ConfigNote struct {
	// Server is the server's key in the file.
	Server string
	// Bundle is the name it runs under, or "" when it was skipped.
	Bundle string
	// Reason says why.
	Reason string
}

func (n ConfigNote) String() string {
	if n.Bundle == "" {
		return fmt.Sprintf("server %q skipped: %s", n.Server, n.Reason)
	}
	return fmt.Sprintf("server %q runs as bundle %q: %s", n.Server, n.Bundle, n.Reason)
}

// LoadConfig reads an MCP client configuration file ({"mcpServers": {...}} or VS Code's
// {"servers": {...}}) and returns a manifest per server the node can run, named after its
// key: a process for a stdio server, a remote bundle for a Streamable HTTP one given by
// "url" (its "headers" may name the node's environment variables as ${NAME}). Servers it
// cannot run (other transports, entries without a usable command or url) are skipped and
// reported in the notes, as are keys that had to be turned into valid bundle names; only a
// file that cannot be read as a whole is an error.
func LoadConfig(path string) ([]*Manifest, []ConfigNote, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("read config: %w", err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, nil, fmt.Errorf("config path %s: %w", path, err)
	}
	ms, notes, err := ParseConfig(data, abs)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return ms, notes, nil
}

// ParseConfig reads the configuration held in data, which comes from the file at the
// absolute path abs (relative "cwd" entries are taken from its folder).
func ParseConfig(data []byte, abs string) ([]*Manifest, []ConfigNote, error) {
	var doc struct {
		MCPServers map[string]serverEntry `json:"mcpServers"`
		Servers    map[string]serverEntry `json:"servers"`
	}
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
		return nil, nil, explainDecodeError(err)
	}
	servers := doc.MCPServers
	if servers == nil {
		servers = doc.Servers
	}
	if servers == nil {
		return nil, nil, fmt.Errorf("no \"mcpServers\" (or VS Code \"servers\") object")
	}
	keys := make([]string, 0, len(servers))
	for k := range servers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	names := BundleNames(keys)
	var out []*Manifest
	var notes []ConfigNote
	for _, key := range keys {
		s, name := servers[key], names[key]
		if reason := notAProcess(s); reason != "" {
			notes = append(notes, ConfigNote{Server: key, Reason: reason})
			continue
		}
		if name != key {
			notes = append(notes, ConfigNote{Server: key, Bundle: name,
				Reason: "the key is not a valid bundle name (1 to 64 of A-Z a-z 0-9 _ -)"})
		}
		if remoteTypes[s.Type] || (s.Type == "" && s.URL != "") {
			m := &Manifest{Name: name, URL: s.URL, Headers: s.Headers, Isolation: s.Isolation, Sandbox: s.Sandbox, Dir: filepath.Dir(abs), Path: abs}
			if s.Command != "" {
				m.Command = append([]string{s.Command}, s.Args...)
			}
			if err := m.check(); err != nil {
				notes = append(notes, ConfigNote{Server: key, Reason: err.Error()})
				continue
			}
			m.fill()
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
		m := &Manifest{Name: name, Command: append([]string{s.Command}, s.Args...), Env: s.Env,
			Isolation: s.Isolation, Sandbox: s.Sandbox, Dir: dir, Path: abs}
		if err := m.check(); err != nil {
			notes = append(notes, ConfigNote{Server: key, Reason: err.Error()})
			continue
		}
		m.fill()
		out = append(out, m)
	}
	return out, notes, nil
}

// notAProcess says why an entry cannot run, neither as a child process nor as a remote
// Streamable HTTP server, or "" when it can.
func notAProcess(s serverEntry) string {
	switch {
	case remoteTypes[s.Type] || (s.Type == "" && s.URL != ""):
		return ""
	case s.Type != "" && s.Type != "stdio":
		return fmt.Sprintf("type %q: the node runs stdio servers and Streamable HTTP (\"http\") ones", s.Type)
	case s.Command == "":
		return `no "command" to run`
	}
	return ""
}

// BundleNames maps server keys to bundle names, the same way whatever the order of keys:
// a key that is a valid bundle name keeps it; any other has each character outside
// A-Z a-z 0-9 _ - replaced by '-', is cut to 64 bytes, and gets the first free suffix
// -2, -3... when that name is taken.
func BundleNames(keys []string) map[string]string {
	sorted := append([]string(nil), keys...)
	sort.Strings(sorted)
	out := make(map[string]string, len(sorted))
	taken := map[string]bool{}
	for _, k := range sorted {
		if ValidName(k) {
			out[k] = k
			taken[k] = true
		}
	}
	next := map[string]int{} // the next suffix to try for a base, so many alike stay linear
	for _, k := range sorted {
		if _, ok := out[k]; ok {
			continue
		}
		base := sanitize(k)
		name := base
		for taken[name] {
			i := max(next[base], 2)
			next[base] = i + 1
			suffix := "-" + strconv.Itoa(i)
			name = base[:min(len(base), 64-len(suffix))] + suffix
		}
		out[k] = name
		taken[name] = true
	}
	return out
}

// nameChar reports whether c may appear in a bundle name.
func nameChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-'
}

func sanitize(key string) string {
	var sb strings.Builder
	for _, r := range key {
		if sb.Len() >= 64 {
			break
		}
		if r < 128 && nameChar(byte(r)) {
			sb.WriteRune(r)
		} else {
			sb.WriteByte('-')
		}
	}
	if sb.Len() == 0 {
		return "server"
	}
	return sb.String()
}
