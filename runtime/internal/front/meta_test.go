package front

import (
	"bytes"
	"slices"
	"testing"

	"github.com/toolnode/toolnode/sdk-go/mcp"
	"github.com/toolnode/toolnode/sdk-go/rawjson"
)

// TestReadMeta reads the _meta of stateless requests as a client may write it, and refuses
// what lacks a member every request carries, with the code the revision gives.
func TestReadMeta(t *testing.T) {
	tests := []struct {
		name, params string
		code         int64 // 0: accepted
		version      string
		logLevel     string
		client       string
		caps         []string
	}{
		{"plain", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{},"roots":{"listChanged":true}}}}`,
			0, "2026-07-28", "", "", []string{"roots", "sampling"}},
		{"escaped names and values, and the client's name", `{"name":"x","_meta":{"io.modelcontextprotocol\/protocolVersion":"2026\u002d07-28","io.modelcontextprotocol/logLevel":"info",` +
			`"io.modelcontextprotocol/clientInfo":{"version":"1","name":"c\u00e9"},"io.modelcontextprotocol/clientCapabilities":{}},"arguments":{"_meta":1}}`,
			0, "2026-07-28", "info", "cé", nil},
		{"no _meta", `{"name":"x"}`, mcp.CodeInvalidParams, "", "", "", nil},
		{"null _meta", `{"_meta":null}`, mcp.CodeInvalidParams, "", "", "", nil},
		{"_meta not an object", `{"_meta":[1]}`, mcp.CodeInvalidParams, "", "", "", nil},
		{"no version", `{"_meta":{"io.modelcontextprotocol/clientCapabilities":{}}}`, mcp.CodeInvalidParams, "", "", "", nil},
		{"version not a string", `{"_meta":{"io.modelcontextprotocol/protocolVersion":20260728,"io.modelcontextprotocol/clientCapabilities":{}}}`, mcp.CodeInvalidParams, "", "", "", nil},
		{"no capabilities", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`, mcp.CodeInvalidParams, "", "", "", nil},
		{"capabilities not an object", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":true}}`, mcp.CodeInvalidParams, "", "", "", nil},
		{"unknown revision", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}`, mcp.CodeUnsupportedVersion, "", "", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			meta, _ := rawjson.Member([]byte(tt.params), "_meta")
			m, err := parseMeta(meta)
			if tt.code != 0 {
				if err == nil || err.Code != tt.code {
					t.Fatalf("error = %v, want code %d", err, tt.code)
				}
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if m.version != tt.version || m.logLevel != tt.logLevel || m.clientName != tt.client {
				t.Errorf("got version %q, log level %q, client %q", m.version, m.logLevel, m.clientName)
			}
			var caps []string
			rawjson.Members(m.caps, func(name rawjson.Name, _ []byte) { caps = append(caps, name.String()) })
			slices.Sort(caps)
			if !slices.Equal(caps, tt.caps) {
				t.Errorf("capabilities %s, want %v", m.caps, tt.caps)
			}
		})
	}
}

// TestMetaCache: the server answers for the _meta it was given, whatever it read before,
// keeps a copy of its own, not the request's bytes, and reads the _meta it read last no more.
func TestMetaCache(t *testing.T) {
	var s Server
	var prev *metaEntry
	a := []byte(`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"info"}`)
	b := []byte(`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{}}}`)
	bad := []byte(`{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}`)
	for i, tt := range []struct {
		raw   []byte
		level string
		caps  string
		code  int64
	}{{a, "info", `{}`, 0}, {a, "info", `{}`, 0}, {b, "", `{"sampling":{}}`, 0}, {bad, "", "", mcp.CodeUnsupportedVersion}, {a, "info", `{}`, 0}} {
		in := []byte(`{"name":"t","_meta":` + string(tt.raw) + `}`)
		meta, _ := rawjson.Member(in, "_meta")
		if v := s.statelessVersion(meta); string(v) != `"2026-07-28"` && tt.code == 0 {
			t.Errorf("read %d: version %s", i, v)
		}
		e, err := s.readMeta(meta)
		again := i > 0 && prev != nil && bytes.Equal(tt.raw, prev.raw)
		if again && e != prev {
			t.Errorf("read %d: the same _meta was read again", i)
		}
		if e != nil {
			prev = e
		}
		if tt.code != 0 {
			if err == nil || err.Code != tt.code {
				t.Fatalf("read %d: error %v, want code %d", i, err, tt.code)
			}
			continue
		}
		if err != nil {
			t.Fatalf("read %d: %v", i, err)
		}
		copy(in, bytes.Repeat([]byte{'x'}, len(in))) // the request's buffer is reused
		if e.meta.logLevel != tt.level || string(e.meta.caps) != tt.caps || string(e.version) != `"2026-07-28"` {
			t.Errorf("read %d: log level %q, capabilities %s, version %s; want %q, %s", i, e.meta.logLevel, e.meta.caps, e.version, tt.level, tt.caps)
		}
	}
}
