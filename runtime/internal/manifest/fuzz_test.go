package manifest

import (
	"encoding/json"
	"slices"
	"testing"
)

// FuzzParse feeds the manifest parser arbitrary bytes: it must never panic, and whatever it
// accepts must be a manifest the node can use as is and that reads back the same.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"name": "x", "command": ["./run"]}`,
		`{"name": "x-1_b", "command": ["python3", "s.py"], "env": {"K": "V"}, "inherit_env": ["HOME"], "seats": ["node-lamp"],
		  "timeouts": {"start": "2s", "call": "1m", "call_max": "1h", "shutdown": "500ms"}, "instances": 3, "prefix": false, "isolation": "client"}`,
		`{"name": "x", "command": ["./run"], "timeouts": {"call": "-1s"}}`,
		`{"name": "x", "command": ["./../x"]}`,
	} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Parse(data, dir)
		if err != nil {
			return
		}
		checkUsable(t, m)
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatalf("marshal %+v: %v", m, err)
		}
		again, err := Parse(b, dir)
		if err != nil {
			t.Fatalf("%s does not read back: %v", b, err)
		}
		if again.Name != m.Name || again.Timeouts != m.Timeouts || !slices.Equal(again.Command, m.Command) || again.Isolation != m.Isolation {
			t.Fatalf("read back %+v, want %+v", again, m)
		}
	})
}

// FuzzParseConfig feeds the --config parser arbitrary bytes: it must never panic, and the
// bundles it returns must have valid, distinct names and filled defaults.
func FuzzParseConfig(f *testing.F) {
	for _, s := range []string{
		`{"mcpServers": {"fs": {"command": "npx", "args": ["-y", "fs"], "env": {"A": "1"}, "cwd": "sub"}}}`,
		`{"servers": {"a.b": {"command": "x"}, "a-b": {"command": "y"}, "r": {"type": "http", "url": "http://h/mcp"}}}`,
		`{"mcpServers": {"toolnode": {"command": "x", "isolation": "client"}, "": {"command": "y"}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ms, notes, err := ParseConfig(data, "/cfg/mcp.json")
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, m := range ms {
			checkUsable(t, m)
			if seen[m.Name] {
				t.Fatalf("two bundles named %q", m.Name)
			}
			seen[m.Name] = true
		}
		for _, n := range notes {
			if n.Reason == "" {
				t.Fatalf("note without a reason: %+v", n)
			}
		}
	})
}

func checkUsable(t *testing.T, m *Manifest) {
	t.Helper()
	switch {
	case !ValidName(m.Name):
		t.Fatalf("accepted the name %q", m.Name)
	case (len(m.Command) == 0 || m.Command[0] == "") == !m.Remote():
		t.Fatalf("accepted neither a command nor a url, or both: %+v", m)
	case m.Timeouts.Start <= 0 || m.Timeouts.Call <= 0 || m.Timeouts.Shutdown <= 0 || m.Timeouts.CallMax < m.Timeouts.Call:
		t.Fatalf("timeouts not filled: %+v", m.Timeouts)
	case m.Isolation != IsolationShared && m.Isolation != IsolationClient:
		t.Fatalf("isolation %q", m.Isolation)
	case m.Pool() < 1 || m.Pool() > MaxInstances:
		t.Fatalf("pool of %d", m.Pool())
	}
}
