package front

import "testing"

func TestNamesFor(t *testing.T) {
	for _, c := range []struct {
		mode, client  string
		strict, whole bool
	}{
		{NamesAuto, "mcp", true, true},            // the Python SDK's default: a thin client
		{"", "mcp", true, true},                   // auto is the default
		{NamesAuto, "claude-ai", false, false},    // a client that names itself keeps what it had
		{NamesAuto, "toolnode-app", false, false}, // the application libraries map names themselves
		{NamesAuto, "GitHub Copilot", true, false},
		{NamesAuto, "MCP", false, false}, // exactly the SDK's default, nothing like it
		{NamesCanonical, "mcp", false, false},
		{NamesStrict, "mcp", true, false},
		{NamesStrict, "claude-ai", true, false},
	} {
		strict, whole := namesFor(c.mode, c.client)
		if strict != c.strict || whole != c.whole {
			t.Errorf("namesFor(%q, %q) = %v, %v; want %v, %v", c.mode, c.client, strict, whole, c.strict, c.whole)
		}
	}
}
