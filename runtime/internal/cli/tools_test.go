package cli_test

import (
	"github.com/toolnode/toolnode/runtime/internal/testkit"

	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestNewCreatesTheFolderItIsGiven: `toolnode new LANG path/to/demo` creates path/to/demo
// holding the bundle demo, as cargo new does.
func TestNewCreatesTheFolderItIsGiven(t *testing.T) {
	root, _ := filepath.Abs("../../..")
	dir := t.TempDir()
	if code, _, errs := runCLI("new", "python", filepath.Join(dir, "path", "to", "demo"), "--sdk", root); code != 0 {
		t.Fatalf("new: exit %d: %s", code, errs)
	}
	b, err := os.ReadFile(filepath.Join(dir, "path", "to", "demo", "bundle.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct{ Name string }
	if err := json.Unmarshal(b, &m); err != nil || m.Name != "demo" {
		t.Errorf("bundle.json names %q (%v), want demo:\n%s", m.Name, err, b)
	}
}

// TestToolsShowsTheBundleThatServes: the BUNDLE column names the bundle serving each tool,
// also for a seat verb and for a tool exposed without prefix, where the part of the name
// before the first dot is not a bundle.
func TestToolsShowsTheBundleThatServes(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "aa-seat", Seats: []string{"node-lamp"}})
	testkit.Write(t, dir, testkit.Fake{Name: "bare", Extra: `"prefix": false`})
	code, out, errs := runCLI("tools", "--bundles", dir)
	if code != 0 {
		t.Fatalf("tools: exit %d\n%s", code, errs)
	}
	wantRows(t, out, map[string]string{
		"node-lamp.on":      "aa-seat",
		"echo":              "bare",
		"bare.node-lamp.on": "bare",
		"aa-seat.echo":      "aa-seat",
		"toolnode.status":   "(toolnode)",
	})
	// A running node does not say who serves a seat verb or an unprefixed tool.
	url := httpNode(t, dir)
	code, out, errs = runCLI("tools", "--url", url)
	if code != 0 {
		t.Fatalf("tools --url: exit %d\n%s", code, errs)
	}
	wantRows(t, out, map[string]string{
		"node-lamp.on":      "-",
		"echo":              "-",
		"bare.node-lamp.on": "bare",
		"aa-seat.echo":      "aa-seat",
		"toolnode.status":   "(toolnode)",
	})
}

func wantRows(t *testing.T, out string, rows map[string]string) {
	t.Helper()
	for tool, bundle := range rows {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(tool) + ` +` + regexp.QuoteMeta(bundle) + ` `).MatchString(out) {
			t.Errorf("no row %q served by %q in:\n%s", tool, bundle, out)
		}
	}
}

// TestToolsFormat: --format prints the tools a model API request takes, in names the API
// accepts, with --allow and --deny as in access files, over bundle folders and a running node.
func TestToolsFormat(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "aa-seat", Seats: []string{"node-lamp"}})
	testkit.Write(t, dir, testkit.Fake{Name: "bb"})
	url := httpNode(t, dir)
	nameRule := regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]{0,63}$`)
	for _, c := range []struct {
		format string
		names  func(out []byte) ([]string, error)
	}{
		{"openai", func(out []byte) ([]string, error) {
			var tools []struct{ Function struct{ Name string } }
			err := json.Unmarshal(out, &tools)
			var n []string
			for _, t := range tools {
				n = append(n, t.Function.Name)
			}
			return n, err
		}},
		{"openai-responses", func(out []byte) ([]string, error) {
			var tools []struct{ Name, Type string }
			err := json.Unmarshal(out, &tools)
			var n []string
			for _, t := range tools {
				n = append(n, t.Name)
			}
			return n, err
		}},
		{"anthropic", func(out []byte) ([]string, error) {
			var tools []struct {
				Name        string
				InputSchema map[string]any `json:"input_schema"`
			}
			err := json.Unmarshal(out, &tools)
			var n []string
			for _, t := range tools {
				n = append(n, t.Name)
			}
			return n, err
		}},
		{"gemini", func(out []byte) ([]string, error) {
			var tools []struct {
				FunctionDeclarations []struct{ Name string } `json:"functionDeclarations"`
			}
			err := json.Unmarshal(out, &tools)
			var n []string
			for _, t := range tools {
				for _, d := range t.FunctionDeclarations {
					n = append(n, d.Name)
				}
			}
			return n, err
		}},
	} {
		for _, where := range [][]string{{"--bundles", dir}, {"--url", url}} {
			code, out, errs := runCLI(append([]string{"tools", "--format", c.format, "--allow", "aa-seat.e*", "--allow", "node-lamp.*", "--deny", "*.elicit", "--deny", "*.env"}, where...)...)
			if code != 0 {
				t.Fatalf("%s %v: exit %d\n%s", c.format, where, code, errs)
			}
			got, err := c.names([]byte(out))
			if err != nil {
				t.Fatalf("%s: %v\n%s", c.format, err, out)
			}
			want := []string{"aa-seat_echo", "node-lamp_on"}
			if len(got) != len(want) {
				t.Errorf("%s %v: %v, want %v", c.format, where, got, want)
				continue
			}
			for i := range want {
				if got[i] != want[i] || !nameRule.MatchString(got[i]) {
					t.Errorf("%s %v: %v, want %v", c.format, where, got, want)
				}
			}
		}
	}
	if code, _, errs := runCLI("tools", "--bundles", dir, "--format", "mistral"); code != 2 || !strings.Contains(errs, "openai-responses") {
		t.Errorf("an unknown format: exit %d, %s", code, errs)
	}
	if code, _, errs := runCLI("tools", "--bundles", dir, "--format", "openai", "--allow", "a/b"); code != 2 || !strings.Contains(errs, "--allow") {
		t.Errorf("a bad pattern: exit %d, %s", code, errs)
	}
}
