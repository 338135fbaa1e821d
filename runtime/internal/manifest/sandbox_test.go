package manifest

import (
	"strings"
	"testing"
)

func TestTheSandboxKeyIsReadFromBundleJSONAndFromConfigEntries(t *testing.T) {
	m, err := Parse([]byte(`{"name": "b", "command": ["x"], "sandbox": {"memory": "512MiB", "network": "none", "write": ["state"]}}`), "/b")
	if err != nil {
		t.Fatal(err)
	}
	if p := m.Sandbox; p == nil || p.Memory != 512<<20 || !p.NoNetwork() || len(p.Write) != 1 {
		t.Errorf("sandbox %+v", p)
	}
	ms, notes, err := ParseConfig([]byte(`{"mcpServers": {"fs": {"command": "npx", "sandbox": {"pids": 64}},
		"far": {"url": "http://127.0.0.1:1/mcp", "sandbox": {"pids": 64}}}}`), "/etc/mcp.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 1 || ms[0].Sandbox == nil || ms[0].Sandbox.Pids != 64 {
		t.Errorf("config manifests %+v", ms)
	}
	if len(notes) != 1 || !strings.Contains(notes[0].Reason, `a bundle given by "url" runs elsewhere`) {
		t.Errorf("notes %v", notes)
	}
}

func TestABadSandboxIsRefusedNamingWhatToFix(t *testing.T) {
	for in, want := range map[string]string{
		`{"name": "b", "command": ["x"], "sandbox": {"memory": "lots"}}`:    `memory: "lots" is not a size`,
		`{"name": "b", "command": ["x"], "sandbox": {"net": "none"}}`:       `unknown field "net"`,
		`{"name": "b", "command": ["x"], "sandbox": {"network": "closed"}}`: `use "host" or "none"`,
		`{"name": "b", "command": ["x"], "sandbox": "standard"}`:            "sandbox",
	} {
		if _, err := Parse([]byte(in), "/b"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", in, err, want)
		}
	}
}
