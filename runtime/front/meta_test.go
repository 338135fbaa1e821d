package front

import (
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
			m, err := readMeta([]byte(tt.params))
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
