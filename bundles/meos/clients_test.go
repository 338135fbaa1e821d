package meos_test

// What each host and framework is given by a node serving make run's bundles (the examples
// and this one) with the default flags, by the name it gives: names that pass the rule of
// Claude Desktop and the model APIs (canonical names for the few known to take dots), none
// twice, a list within the auto view's budget, and every tool found by toolnode.search and
// called through toolnode.execute under the name form the client is shown. Over stdio and
// HTTP, in both eras.
//
// A deterministic slice of the MEOS tools is searched and called by each client (every
// example tool, and every MEOS tool whose place in the catalog is a multiple of a stride);
// TOOLNODE_CLIENTS_ALL=1 (make test-clients) runs every tool.

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnode/toolnode/sdk-go/app/provider"
)

// modelNames is the rule Claude Desktop, claude.ai and the model APIs hold tool names to.
var modelNames = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// The budget of the default view (--view-max-tools, --view-max-tokens), a token counted
// as four bytes.
const (
	maxListed       = 128
	maxListedTokens = 32000
)

// clientNames are the clientInfo names of the hosts and frameworks, and whether the node
// is to give them canonical (dotted) names.
var clientNames = []struct {
	who, name string
	dotted    bool
}{
	// toolnode's libraries and CLI are listed every tool (they select themselves): not here.
	{"Claude Desktop and claude.ai", "claude-ai", false},
	{"Claude Code", "claude-code", true},
	{"VS Code", "Visual Studio Code", false},
	{"Cursor", "cursor-vscode", false},
	{"Windsurf", "windsurf-client", false},
	{"GitHub Copilot CLI", "github-copilot-developer", false},
	{"the Python SDK's default", "mcp", false},
	{"fastmcp 4.2", "fastmcp", false},
	{"mcp-use", "mcp-use", false},
	{"an unknown client", "some-agent", false},
	{"no name", "", false},
}

// makeRunNode is the command of a node over make run's bundles, with the default flags
// but those given.
func makeRunNode(flags ...string) *exec.Cmd {
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	args := append([]string{"serve", "--bundles", filepath.Join(root, "examples"), "--bundles", filepath.Join(root, "bundles")}, flags...)
	cmd := exec.Command(node, args...)
	cmd.Env = append(os.Environ(), "MEOS_WAYS="+filepath.Join(root, "bundles", "meos", "tests", "data", "ways.csv"))
	return cmd
}

// wholeCatalog lists every tool of make run's catalog by its canonical name, in order.
func wholeCatalog(t *testing.T) []string {
	t.Helper()
	cmd := makeRunNode("--view", "full", "--names", "canonical")
	s := connectAs(t, "catalog", "", &mcp.CommandTransport{Command: cmd}, &syncBuffer{})
	var names []string
	for tool, err := range s.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatalf("list tools: %v", err)
		}
		names = append(names, tool.Name)
	}
	s.Close()
	return names
}

// connectAs connects a client named name, speaking version ("" its latest), over transport.
func connectAs(t *testing.T, name, version string, transport mcp.Transport, logs *syncBuffer) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	s, err := client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect %q to the node: %v\nnode log:\n%s", name, err, logs)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// startMakeRunHTTP starts a node over make run's bundles with the default flags and an HTTP
// front, and returns its URL.
func startMakeRunHTTP(t *testing.T) (string, *syncBuffer) {
	t.Helper()
	return startHTTP(t, makeRunNode("--http", "127.0.0.1:0"))
}

// sample is the slice of the catalog each client searches and calls: every tool but
// MEOS's, and one MEOS tool in stride (all of them with TOOLNODE_CLIENTS_ALL=1).
func sample(all []string) []string {
	stride := 97
	if os.Getenv("TOOLNODE_CLIENTS_ALL") == "1" {
		stride = 1
	}
	var out []string
	i := 0
	for _, name := range all {
		if !strings.HasPrefix(name, "meos.") {
			out = append(out, name)
			continue
		}
		if i%stride == 0 {
			out = append(out, name)
		}
		i++
	}
	return out
}

func TestClientsGetToolsTheirModelsTake(t *testing.T) {
	all := wholeCatalog(t)
	if len(all) < 1000 {
		t.Fatalf("make run's catalog holds %d tools; the test wants the examples and MEOS", len(all))
	}
	underscore := provider.MapNames(all)
	tools := sample(all)
	url, httpLogs := startMakeRunHTTP(t)
	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		for _, over := range []string{"stdio", "http"} {
			t.Run(over+"_"+era, func(t *testing.T) {
				for _, c := range clientNames {
					t.Run(strings.ReplaceAll(c.who, " ", "_"), func(t *testing.T) {
						var transport mcp.Transport
						logs := httpLogs
						if over == "http" {
							transport = &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Timeout: 60 * time.Second}}
						} else {
							cmd := makeRunNode()
							logs = &syncBuffer{}
							cmd.Stderr = logs
							transport = &mcp.CommandTransport{Command: cmd}
						}
						s := connectAs(t, c.name, era, transport, logs)
						form := func(canonical string) string {
							if c.dotted {
								return canonical
							}
							return underscore.Render(canonical)
						}
						checkList(t, s, form, c.dotted)
						checkSearchAndExecute(t, s, form, tools)
					})
				}
			})
		}
	}
}

// checkList checks what the client is listed.
func checkList(t *testing.T, s *mcp.ClientSession, form func(string) string, dotted bool) {
	t.Helper()
	seen := map[string]bool{}
	size := 0
	for tool, err := range s.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatalf("list tools: %v", err)
		}
		b, _ := json.Marshal(tool)
		size += len(b) + 1
		if seen[tool.Name] {
			t.Errorf("%s listed twice", tool.Name)
		}
		seen[tool.Name] = true
		if !dotted && !modelNames.MatchString(tool.Name) {
			t.Errorf("%q breaks ^[a-zA-Z0-9_-]{1,64}$", tool.Name)
		}
	}
	if len(seen) > maxListed || size/4 > maxListedTokens {
		t.Errorf("listed %d tools, %d bytes (about %d tokens): past the budget of %d tools and %d tokens", len(seen), size, size/4, maxListed, maxListedTokens)
	}
	for _, want := range []string{"toolnode.search", "toolnode.execute", "go.greet", "node-lamp.on", "meos.length"} {
		if !seen[form(want)] {
			t.Errorf("%s is not listed (as %s); listed %d tools", want, form(want), len(seen))
		}
	}
	if dotted && !seen["go.greet"] {
		t.Error("a client known to take dotted names did not get them")
	}
}

// checkSearchAndExecute finds each tool with toolnode.search by the name the client is
// shown, and calls it through toolnode.execute by that name: the greeting answers, every
// other tool is reached (it answers, or refuses the empty arguments; it is never unknown).
func checkSearchAndExecute(t *testing.T, s *mcp.ClientSession, form func(string) string, tools []string) {
	t.Helper()
	for _, canonical := range tools {
		name := form(canonical)
		if canonical == "toolnode.search" {
			continue // what searches does not find itself; it is listed to every client
		}
		res := callTool(t, s, form("toolnode.search"), map[string]any{"query": name, "limit": 1})
		var found struct {
			Results []struct{ Name string } `json:"results"`
		}
		b, _ := json.Marshal(res.StructuredContent)
		if json.Unmarshal(b, &found) != nil || len(found.Results) == 0 || found.Results[0].Name != name {
			t.Errorf("toolnode.search for %s found %s", name, b)
			continue
		}
		args := map[string]any{}
		if canonical == "go.greet" {
			args["name"] = "Ada"
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: form("toolnode.execute"), Arguments: map[string]any{"name": name, "arguments": args}})
		cancel()
		if err != nil {
			// A tool may need what this client did not declare (elicitation): reached all
			// the same.
			if !strings.Contains(err.Error(), "needs the client capability") {
				t.Errorf("toolnode.execute of %s: %v", name, err)
			}
			continue
		}
		b, _ = json.Marshal(res.StructuredContent)
		var failed struct {
			Error struct{ Kind string } `json:"error"`
		}
		_ = json.Unmarshal(b, &failed)
		switch {
		case canonical == "go.greet" && (res.IsError || len(res.Content) == 0 || !strings.Contains(text(res), "Hello, Ada!")):
			t.Errorf("toolnode.execute of %s answered %s %s", name, text(res), b)
		case failed.Error.Kind == "unknown_tool" || failed.Error.Kind == "forbidden":
			t.Errorf("toolnode.execute of %s: %s", name, b)
		}
	}
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// The Claude Desktop configuration make run prints works as printed: the node it starts
// gives Claude Desktop names it accepts, a list within the budget, and the greeting.
func TestMakeRunsClaudeDesktopConfigWorks(t *testing.T) {
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	b, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*@echo '\s*(\{"mcpServers".*\})'$`).FindSubmatch(b)
	if m == nil {
		t.Fatal("make run prints no mcpServers configuration")
	}
	printed := strings.ReplaceAll(string(m[1]), "$(CURDIR)", root)
	var cfg struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(printed), &cfg); err != nil || len(cfg.MCPServers) != 1 {
		t.Fatalf("make run prints %s: %v", printed, err)
	}
	for _, server := range cfg.MCPServers {
		if server.Command != filepath.Join(root, "bin", "toolnode") {
			t.Fatalf("the configuration runs %s", server.Command)
		}
		cmd := exec.Command(node, server.Args...) // this tree's node, where bin/toolnode is make's
		logs := &syncBuffer{}
		cmd.Stderr = logs
		s := connectAs(t, "claude-ai", "", &mcp.CommandTransport{Command: cmd}, logs)
		checkList(t, s, func(name string) string { return provider.MapNames([]string{name}).Render(name) }, false)
		if got := text(callTool(t, s, "go_greet", map[string]any{"name": "Ada"})); got != "Hello, Ada!" {
			t.Errorf("go_greet answered %q", got)
		}
	}
}
