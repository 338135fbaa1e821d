package upstream

import (
	"fmt"

	"github.com/hashicorp/go-hclog"

	"github.com/toolnode/toolnode/runtime/internal/manifest"
	"github.com/toolnode/toolnode/runtime/internal/proc"
)

// ConfigFor returns the Config of a session with the bundle m describes: its process, or
// its URL with the headers, their ${NAME} taken from the node's environment (lookup,
// os.LookupEnv when nil). The caller fills in the rest (Handler, limits, capabilities).
func ConfigFor(m *manifest.Manifest, lookup func(string) (string, bool), log hclog.Logger) (Config, error) {
	cfg := Config{Name: m.Name, Logger: log}
	if m.Link != nil {
		l, err := m.Link()
		if err != nil {
			return Config{}, err
		}
		link, ok := l.(Link)
		if !ok {
			return Config{}, fmt.Errorf("bundle %q: its link does not say where it leads", m.Name)
		}
		cfg.Link = link
		return cfg, nil
	}
	if m.InMemory != nil {
		cfg.InMemory, cfg.Process.Grace = m.InMemory, m.Timeouts.Shutdown
		return cfg, nil
	}
	if m.Remote() {
		headers, err := m.RequestHeaders(lookup)
		if err != nil {
			return Config{}, err
		}
		cfg.URL, cfg.Headers = m.URL, headers
		return cfg, nil
	}
	prog, err := m.Program()
	if err != nil {
		return Config{}, err
	}
	cfg.Process = proc.Config{
		Path:   prog,
		Args:   m.Command[1:],
		Dir:    m.Dir,
		Env:    m.Environ(lookup),
		Logger: log,
		Grace:  m.Timeouts.Shutdown,
		// Nil: the node's default profile, which the node fills in.
		Sandbox: m.Sandbox,
	}
	return cfg, nil
}
