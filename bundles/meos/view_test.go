package meos_test

// The trajectory view (MCP Apps) of the MEOS bundle, rendered in headless Chromium by the
// host page of testdata/apps (the official SDK's host bridge) through a node over HTTP:
// the view calls view_tracks, a tool only views may call, by its own name, and draws the
// known trajectory; the test reads the drawn path's coordinates and the marker the time
// slider moves, and keeps a screenshot.

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestTrajectoryViewInChromium(t *testing.T) {
	npm, _ := filepath.Abs(filepath.Join("..", "..", "build", "npm"))
	for _, p := range []string{"@modelcontextprotocol/ext-apps", "esbuild", "playwright-core"} {
		if _, err := os.Stat(filepath.Join(npm, "node_modules", p)); err != nil {
			t.Skipf("%s is not installed in %s (make test installs it): %v", p, npm, err)
		}
	}
	if _, err := os.Stat("/usr/bin/chromium"); err != nil {
		t.Skipf("Debian's chromium is not installed (make test installs it): %v", err)
	}
	url, _ := serveHTTP(t)

	// The host's client is not known to take dotted names, so it is shown, and calls, the
	// underscore form of meos.distance.
	shot := filepath.Join(t.ArtifactDir(), "trajectory.png")
	opts, _ := json.Marshal(map[string]any{
		"node": url, "screenshot": shot, "tool": "meos_distance",
		"args": map[string]string{
			"point": "[POINT(0 0)@2025-01-01T08:00:00Z, POINT(300 400)@2025-01-01T08:10:00Z, POINT(600 0)@2025-01-01T08:20:00Z]",
			"other": "[POINT(600 400)@2025-01-01T08:00:00Z, POINT(0 400)@2025-01-01T08:20:00Z]",
		},
		"waitFor": "circle.marker",
		"until":   `document.querySelectorAll("path").length === 2`,
		// The slider halfway: 08:10, where point is at its middle instant.
		"collect": `(() => { const s = document.getElementById("time"); s.value = 500; s.oninput();
			return { paths: [...document.querySelectorAll("path")].map((p) => [p.dataset.track, p.getAttribute("d")]),
				markers: [...document.querySelectorAll("circle.marker")].map((m) => [m.dataset.track, +m.getAttribute("cx"), +m.getAttribute("cy")]),
				when: document.getElementById("when").textContent }; })()`,
	})
	drive := exec.Command("node", filepath.Join("..", "..", "testdata", "apps", "drive.mjs"), string(opts))
	drive.Env = append(os.Environ(), "TOOLNODE_NPM="+npm)
	drive.Stderr = os.Stderr
	timer := time.AfterFunc(2*time.Minute, func() { drive.Process.Kill() })
	out, err := drive.Output()
	timer.Stop()
	if err != nil {
		t.Fatalf("drive.mjs: %v\n%s", err, out)
	}
	var v struct {
		Error     string
		Console   []string
		Collected struct {
			Paths   [][2]string
			Markers [][3]any
			When    string
		}
		Report struct {
			Tools     []string
			ViewCalls []struct {
				Name  string
				Error string
			}
		}
	}
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("drive.mjs printed %q: %v", out, err)
	}
	if v.Error != "" {
		t.Fatalf("the host failed: %s\nconsole: %v", v.Error, v.Console)
	}
	t.Logf("screenshot of the view: %s (kept with go test -artifacts)", shot)
	if slices.Contains(v.Report.Tools, "meos_view_tracks") || !slices.Contains(v.Report.Tools, "meos_distance") {
		t.Errorf("tools/list: view_tracks must be left out, distance listed: %v", v.Report.Tools)
	}
	if len(v.Report.ViewCalls) != 1 || v.Report.ViewCalls[0].Name != "view_tracks" || v.Report.ViewCalls[0].Error != "" {
		t.Errorf("the view's calls: %+v", v.Report.ViewCalls)
	}
	wantPaths := [][2]string{{"other", "M600 400 L0 400"}, {"point", "M0 0 L300 400 L600 0"}}
	if diff := cmp.Diff(wantPaths, v.Collected.Paths); diff != "" {
		t.Errorf("drawn paths (-want +got):\n%s", diff)
	}
	wantMarkers := [][3]any{{"other", 300.0, 400.0}, {"point", 300.0, 400.0}}
	if diff := cmp.Diff(wantMarkers, v.Collected.Markers); diff != "" || v.Collected.When != "2025-01-01T08:10:00.000Z" {
		t.Errorf("at %q, markers (-want +got):\n%s", v.Collected.When, diff)
	}
}
