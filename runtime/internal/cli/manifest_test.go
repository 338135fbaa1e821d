package cli_test

import (
	"github.com/toolnode/toolnode/runtime/internal/testkit"

	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeCollidingFakes writes three bundles whose names collide (two claim the seat
// node-lamp, one is unprefixed), each answering initialize after its delay, so that the
// order they start in varies with the delays.
func writeCollidingFakes(t *testing.T, dir string, delays [3]string, echoType string) {
	t.Helper()
	for i, name := range []string{"alpha", "beta", "gamma"} {
		f := testkit.Fake{Name: name, Env: map[string]string{"FAKE_DELAY_MS": delays[i], "FAKE_ECHO_TYPE": echoType}}
		switch name {
		case "alpha", "beta":
			f.Seats = []string{"node-lamp"}
		case "gamma":
			f.Extra = `"prefix": false`
		}
		testkit.Write(t, dir, f)
	}
}

// TestManifestIsTheSameWhateverTheStartOrder: the bundles start in opposite orders, and
// the printed surface is the same bytes, down to who wins a collision.
func TestManifestIsTheSameWhateverTheStartOrder(t *testing.T) {
	orders := [][3]string{{"0", "150", "300"}, {"300", "150", "0"}, {"150", "0", "300"}}
	var first string
	for i, delays := range orders {
		dir := t.TempDir()
		writeCollidingFakes(t, dir, delays, "string")
		code, out, errs := runCLI("manifest", "--bundles", dir)
		if code != 0 {
			t.Fatalf("manifest (delays %v): exit %d\n%s", delays, code, errs)
		}
		if i == 0 {
			first = out
			var s struct {
				Tools    []map[string]any
				ServedBy struct{ Tools map[string]string } `json:"servedBy"`
			}
			if err := json.Unmarshal([]byte(out), &s); err != nil {
				t.Fatalf("manifest is not JSON: %v\n%s", err, out)
			}
			// alpha sorts first and wins the seat verb; gamma's bare echo keeps its name.
			for tool, bundle := range map[string]string{"node-lamp.on": "alpha", "echo": "gamma", "beta.node-lamp.on": "beta", "toolnode.status": "(toolnode)"} {
				if got := s.ServedBy.Tools[tool]; got != bundle {
					t.Errorf("%s served by %q, want %q", tool, got, bundle)
				}
			}
			if len(s.Tools) != len(s.ServedBy.Tools) || len(s.Tools) < 3*18 {
				t.Errorf("%d tools, %d in servedBy", len(s.Tools), len(s.ServedBy.Tools))
			}
			continue
		}
		if out != first {
			t.Errorf("delays %v gave another manifest than %v:\n%s\nvs\n%s", delays, orders[0], out, first)
		}
	}
}

// TestManifestCheckFailsOnAChangedSchema: a committed manifest passes --check until a
// bundle changes a tool's schema; then --check fails and says which tool and how.
func TestManifestCheckFailsOnAChangedSchema(t *testing.T) {
	dir := t.TempDir()
	writeCollidingFakes(t, dir, [3]string{"0", "0", "0"}, "string")
	code, out, errs := runCLI("manifest", "--bundles", dir)
	if code != 0 {
		t.Fatalf("manifest: exit %d\n%s", code, errs)
	}
	file := filepath.Join(t.TempDir(), "surface.json")
	if err := os.WriteFile(file, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := runCLI("manifest", "--bundles", dir, "--check", file); code != 0 {
		t.Fatalf("--check of an unchanged surface: exit %d\n%s%s", code, out, errs)
	}

	writeCollidingFakes(t, dir, [3]string{"0", "0", "0"}, "integer")
	code, out, errs = runCLI("manifest", "--bundles", dir, "--check", file)
	if code == 0 {
		t.Fatalf("--check passed on a changed schema:\n%s", out)
	}
	for _, want := range []string{`~ tool "alpha.echo" changed:`, `- "type": "string"`, `+ "type": "integer"`, `~ tool "echo" changed:`} {
		if !strings.Contains(out, want) {
			t.Errorf("the difference does not say %q:\n%s%s", want, out, errs)
		}
	}
	if strings.Contains(out, `"alpha.big"`) {
		t.Errorf("an unchanged tool is reported:\n%s", out)
	}
}

// TestManifestRefusesAnIncompleteSurface: a bundle that cannot start makes manifest fail
// rather than print a surface without its tools.
func TestManifestRefusesAnIncompleteSurface(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "ok"})
	testkit.Write(t, dir, testkit.Fake{Name: "broken", Command: []string{"/nonexistent/program"}, Extra: `"timeouts": {"start": "1s"}`})
	code, out, errs := runCLI("manifest", "--bundles", dir)
	if code == 0 || !strings.Contains(errs, `bundle "broken"`) {
		t.Fatalf("manifest with a broken bundle: exit %d\n%s%s", code, out, errs)
	}
}

// TestManifestIsDocumented: the command's help and toolnode's own name it and its flags.
func TestManifestIsDocumented(t *testing.T) {
	if code, out, _ := runCLI("--help"); code != 0 || !strings.Contains(out, "toolnode manifest") {
		t.Errorf("toolnode --help (exit %d) does not name manifest:\n%s", code, out)
	}
	code, _, errs := runCLI("manifest", "--help")
	for _, want := range []string{"--check", "--names", "--bundles", "deterministic"} {
		if code != 0 || !strings.Contains(errs, want) {
			t.Errorf("toolnode manifest --help (exit %d) does not explain %s:\n%s", code, want, errs)
		}
	}
	if code, _, errs := runCLI("serve", "--help"); code != 0 || !strings.Contains(errs, "-lazy") || !strings.Contains(errs, "-state-dir") {
		t.Errorf("toolnode serve --help (exit %d) does not explain --lazy and --state-dir:\n%s", code, errs)
	}
}
