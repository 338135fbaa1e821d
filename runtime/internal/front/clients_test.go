package front

import "testing"

func TestNamesFor(t *testing.T) {
	for _, c := range []struct {
		mode, client  string
		strict, whole bool
	}{
		{NamesAuto, "mcp", true, true},            // the Python SDK's default: a thin client
		{"", "mcp", true, true},                   // auto is the default
		{NamesAuto, "claude-ai", true, false},     // Claude Desktop and claude.ai
		{NamesAuto, "claude-code", false, false},  // Claude Code maps names itself
		{NamesAuto, "toolnode-app", false, false}, // the application libraries map names themselves
		{NamesAuto, "toolnode-cli", false, false},
		{NamesAuto, "toolnode", false, false}, // a node fronting another
		{NamesAuto, "Visual Studio Code", true, false},
		{NamesAuto, "cursor-vscode", true, false},
		{NamesAuto, "windsurf-client", true, false},
		{NamesAuto, "GitHub Copilot", true, false},
		{NamesAuto, "fastmcp", true, false},
		{NamesAuto, "mcp-use", true, false},
		{NamesAuto, "someone-new", true, false}, // unknown: the form every host takes
		{NamesAuto, "", true, false},            // no name
		{NamesAuto, "Claude-Code", true, false}, // matched exactly
		{NamesAuto, "MCP", true, false},         // exactly the SDK's default, nothing like it
		{NamesCanonical, "mcp", false, true},
		{NamesCanonical, "claude-ai", false, false},
		{NamesStrict, "mcp", true, true},
		{NamesStrict, "claude-code", true, false},
	} {
		strict, whole := namesFor(c.mode, c.client)
		if strict != c.strict || whole != c.whole {
			t.Errorf("namesFor(%q, %q) = %v, %v; want %v, %v", c.mode, c.client, strict, whole, c.strict, c.whole)
		}
	}
}
