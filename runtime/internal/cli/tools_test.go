package cli_test

import (
	"github.com/toolnode/toolnode/runtime/internal/testkit"

	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
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
	url := startHTTPNode(t, "--bundles", dir)
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
