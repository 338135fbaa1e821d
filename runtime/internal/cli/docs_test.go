package cli_test

import (
	"github.com/toolnode/toolnode/runtime/internal/front/httpfront"
	"github.com/toolnode/toolnode/runtime/internal/reload"
	"github.com/toolnode/toolnode/runtime/internal/serve"
	"github.com/toolnode/toolnode/runtime/internal/testkit"
	"github.com/toolnode/toolnode/runtime/internal/testkit/nodekit"

	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/toolnode/toolnode/runtime/internal/manifest"
	"github.com/toolnode/toolnode/runtime/internal/remote"
)

// The configuration snippets of docs/ are files of their own in docs/snippets; these tests
// check that the documents quote them exactly and that each does what it says.

func snippet(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../../../docs/snippets", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestDocsQuoteTheirSnippets(t *testing.T) {
	docs, _ := filepath.Glob("../../../docs/*.md")
	var all strings.Builder
	for _, d := range docs {
		b, _ := os.ReadFile(d)
		all.Write(b)
	}
	files, _ := os.ReadDir("../../../docs/snippets")
	for _, f := range files {
		if f.Name() == "README.md" {
			continue
		}
		body := strings.TrimSpace(snippet(t, f.Name()))
		if !strings.Contains(all.String(), body) {
			t.Errorf("docs/snippets/%s is not quoted word for word in docs/*.md", f.Name())
		}
		if strings.HasSuffix(f.Name(), ".json") && !json.Valid([]byte(body)) {
			t.Errorf("docs/snippets/%s is not valid JSON", f.Name())
		}
	}
}

// buildToolnode builds the real binary once per test run.
func buildToolnode(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "toolnode")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/toolnode").CombinedOutput(); err != nil {
		t.Fatalf("build toolnode: %v\n%s", err, out)
	}
	return bin
}

func TestClientSnippetsServe(t *testing.T) {
	bin := buildToolnode(t)
	examples := nodekit.Examples(t, "go", "python")
	for _, name := range []string{"claude_desktop_config.json", "cursor-mcp.json", "vscode-mcp.json", "macos-mcpServers.json", "vscode-mcp-macos.json"} {
		t.Run(name, func(t *testing.T) {
			// The snippet as a client would run it, with the placeholder paths made real: a
			// node given it with --config fronts the node the snippet starts. The macOS
			// ones' PATH holds /usr/bin and /bin, where this machine's python3 is too.
			body := strings.NewReplacer("/opt/toolnode/bin/toolnode", bin, "/opt/toolnode/examples", examples,
				"/Users/you/go/bin/toolnode", bin, "/Users/you/toolnode/examples", examples).Replace(snippet(t, name))
			if strings.Contains(body, "/opt/toolnode/") || strings.Contains(body, "/Users/you/") {
				t.Fatalf("a placeholder path is left in the snippet:\n%s", body)
			}
			cfg := filepath.Join(t.TempDir(), name)
			os.WriteFile(cfg, []byte(body), 0o644)
			s := nodekit.Start(t, serve.Config{Source: reload.Source{Config: cfg}, Stdio: true}).Client(t, "", nil)
			if got, isErr := nodekit.CallText(t, s, "toolnode.go.greet", map[string]any{"name": "Doc"}); isErr || got != "Hello, Doc!" {
				t.Errorf("toolnode.go.greet through the snippet: %q (isError %v)", got, isErr)
			}
		})
	}
	t.Run("claude_desktop_config-ssh.json", func(t *testing.T) {
		cfg := filepath.Join(t.TempDir(), "c.json")
		os.WriteFile(cfg, []byte(snippet(t, "claude_desktop_config-ssh.json")), 0o644)
		ms, notes, err := manifest.LoadConfig(cfg)
		if err != nil || len(notes) != 0 || len(ms) != 1 || ms[0].Command[0] != "ssh" || !strings.Contains(strings.Join(ms[0].Command, " "), "/opt/toolnode/bin/toolnode serve") {
			t.Errorf("ssh snippet: %v %+v %v", err, ms, notes)
		}
	})
}

func TestHTTPSnippetsConnect(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "doc"})
	url := nodekit.Start(t, serve.Config{Source: reload.Source{Dirs: []string{dir}}, HTTP: nodekit.Loopback,
		HTTPOptions: httpfront.Options{Token: "t0ken"}}).URL
	for _, name := range []string{"cursor-mcp-http.json", "vscode-mcp-http.json"} {
		t.Run(name, func(t *testing.T) {
			var cfg struct {
				MCPServers map[string]struct {
					URL     string
					Headers map[string]string
				}
				Servers map[string]struct {
					URL     string
					Headers map[string]string
				}
			}
			if err := json.Unmarshal([]byte(snippet(t, name)), &cfg); err != nil {
				t.Fatal(err)
			}
			entry, ok := cfg.MCPServers["toolnode"]
			if !ok {
				entry = cfg.Servers["toolnode"]
			}
			if entry.URL != "http://127.0.0.1:7777/mcp" {
				t.Errorf("url %q, want the node's default address", entry.URL)
			}
			// The client fills in the token from its environment or a prompt.
			auth := regexp.MustCompile(`\$\{[^}]+\}`).ReplaceAllString(entry.Headers["Authorization"], "t0ken")
			tok, ok := strings.CutPrefix(auth, "Bearer ")
			if !ok {
				t.Fatalf("Authorization header %q is not a bearer token", entry.Headers["Authorization"])
			}
			c, err := remote.Dial(context.Background(), url, tok)
			if err != nil {
				t.Fatalf("connect as the snippet says: %v", err)
			}
			defer c.Close()
			if _, err := c.Call(context.Background(), "tools/list", struct{}{}); err != nil {
				t.Errorf("tools/list: %v", err)
			}
		})
	}
}

func TestServiceUnitCommandLineServes(t *testing.T) {
	unit := snippet(t, "toolnode.service")
	m := regexp.MustCompile(`(?m)^ExecStart=(\S+) (.*)$`).FindStringSubmatch(unit)
	if m == nil || m[1] != "/opt/toolnode/bin/toolnode" {
		t.Fatalf("no ExecStart running /opt/toolnode/bin/toolnode in the unit:\n%s", unit)
	}
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "svc"})
	token := filepath.Join(t.TempDir(), "token")
	os.WriteFile(token, []byte("s3rvice"), 0o600)
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	args := strings.Fields(strings.NewReplacer("/srv/bundles", dir, "/etc/toolnode/token", token, "127.0.0.1:7777", addr).Replace(m[2]))
	node := nodekit.ChildHTTP(t, toolnode(t, args...))
	if node.URL != "http://"+addr+"/mcp" {
		t.Errorf("the node listens at %s, want the unit's address %s", node.URL, addr)
	}
	c, err := remote.Dial(context.Background(), node.URL, "s3rvice")
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
}

func TestSnippetManifestLoads(t *testing.T) {
	if _, err := manifest.Parse([]byte(snippet(t, "bundle.json")), t.TempDir()); err != nil {
		t.Errorf("docs/snippets/bundle.json: %v", err)
	}
}
