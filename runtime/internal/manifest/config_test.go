package manifest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseConfig(t *testing.T) {
	tests := []struct {
		name      string
		json      string
		want      map[string]string // bundle name -> command
		wantNotes []string
		wantErr   string
	}{
		{
			name: "remote servers run, a transport the node does not speak is skipped",
			json: `{"mcpServers": {"fs": {"command": "npx", "args": ["-y", "fs"]}, "remote": {"url": "https://example.com/mcp"},
				"typed": {"type": "http", "url": "http://127.0.0.1:1/mcp", "headers": {"Authorization": "Bearer ${T}"}},
				"old": {"type": "sse", "url": "http://127.0.0.1:1/sse"}, "mem": {"command": "mem", "disabled": false}}}`,
			want: map[string]string{"fs": "npx -y fs", "mem": "mem", "remote": "https://example.com/mcp", "typed": "http://127.0.0.1:1/mcp"},
			wantNotes: []string{
				`server "old" skipped: type "sse": the node runs stdio servers and Streamable HTTP ("http") ones`,
			},
		},
		{
			name: "keys that are not bundle names are turned into ones, the same way each time",
			json: `{"servers": {"github.com/x": {"command": "a"}, "my server": {"command": "b"}, "my-server": {"command": "c"},
				"toolnode": {"command": "d"}, "é": {"command": "e"}, "": {"command": "f"}}}`,
			want: map[string]string{"github-com-x": "a", "my-server-2": "b", "my-server": "c", "toolnode": "d", "-": "e", "server": "f"},
			wantNotes: []string{
				`server "" runs as bundle "server": the key is not a valid bundle name (1 to 64 of A-Z a-z 0-9 _ -)`,
				`server "github.com/x" runs as bundle "github-com-x": the key is not a valid bundle name (1 to 64 of A-Z a-z 0-9 _ -)`,
				`server "my server" runs as bundle "my-server-2": the key is not a valid bundle name (1 to 64 of A-Z a-z 0-9 _ -)`,
				`server "é" runs as bundle "-": the key is not a valid bundle name (1 to 64 of A-Z a-z 0-9 _ -)`,
			},
		},
		{
			name:      "an entry that cannot run is skipped with its reason",
			json:      `{"mcpServers": {"none": {"args": ["x"]}, "bad": {"command": "bin/x"}, "iso": {"command": "x", "isolation": "client"}, "badiso": {"command": "x", "isolation": "x"}}}`,
			want:      map[string]string{"iso": "x"},
			wantNotes: []string{`server "bad" skipped: command "bin/x": start it with ./ for a file in the bundle directory, or give a name found on PATH`, `server "badiso" skipped: isolation "x": use "shared" (one process for every client, the default) or "client" (a process per client)`, `server "none" skipped: no "command" to run`},
		},
		{name: "no servers", json: `{"other": {}}`, wantErr: `no "mcpServers"`},
		{name: "not JSON", json: `{"mcpServers": `, wantErr: "not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms, notes, err := ParseConfig([]byte(tt.json), "/cfg/mcp.json")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, m := range ms {
				got[m.Name] = strings.Join(m.Command, " ")
				if m.Remote() {
					got[m.Name] = m.URL
				}
				if m.Timeouts.Start != DefaultStartTimeout || m.Isolation == "" {
					t.Errorf("%s: defaults not filled: %+v", m.Name, m)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("bundles (-want +got):\n%s", diff)
			}
			var texts []string
			for _, n := range notes {
				texts = append(texts, n.String())
			}
			if diff := cmp.Diff(tt.wantNotes, texts); diff != "" {
				t.Errorf("notes (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBundleNamesFitAndDoNotCollide(t *testing.T) {
	long := strings.Repeat("a", 70)
	keys := []string{long + ".x", long + ".y", strings.Repeat("a", 64), "", "a.b", "a-b"}
	names := BundleNames(keys)
	seen := map[string]string{}
	for _, k := range keys {
		n := names[k]
		if !ValidName(n) {
			t.Errorf("key %q got the invalid name %q", k, n)
		}
		if other, dup := seen[n]; dup {
			t.Errorf("keys %q and %q both got %q", k, other, n)
		}
		seen[n] = k
	}
	if names["a-b"] != "a-b" {
		t.Errorf("a valid key lost its name to an invalid one: %q", names["a-b"])
	}
}

func TestLoadConfigNamesTheFileInErrors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(path, []byte(`[]`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadConfig(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("error %v does not name %s", err, path)
	}
}

// BenchmarkBundleNamesAlike maps many keys that all turn into the same name: the cost per
// key must stay flat as their number grows.
func BenchmarkBundleNamesAlike(b *testing.B) {
	const bad = ".:/ !"
	keys := make([]string, 5000)
	for i := range keys {
		k := []byte("k")
		for n := i; len(k) < 7; n /= len(bad) {
			k = append(k, bad[n%len(bad)]) // all of them turn into k------
		}
		keys[i] = string(k)
	}
	for b.Loop() {
		BundleNames(keys)
	}
}
