package cli_test

import (
	"github.com/toolnode/toolnode/runtime/internal/reload"
	"github.com/toolnode/toolnode/runtime/internal/serve"
	"github.com/toolnode/toolnode/runtime/internal/testkit"
	"github.com/toolnode/toolnode/runtime/internal/testkit/nodekit"

	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/toolnode/toolnode/runtime/internal/cli"
)

// httpNode serves the bundles of dir over the HTTP front of a node in process, and returns
// the front's URL: for the commands that speak to a running node.
func httpNode(t *testing.T, dir string) string {
	t.Helper()
	return nodekit.Start(t, serve.Config{Source: reload.Source{Dirs: []string{dir}}, HTTP: nodekit.Loopback}).URL
}

// runCLI runs toolnode in-process with args and returns its exit code and output. A
// stdio serve sets GOMAXPROCS for its process, which here is the test binary: it is put
// back, so that later tests see Go's default.
func runCLI(args ...string) (int, string, string) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var out, errb bytes.Buffer
	code := cli.Main(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func TestNewChecksAndServes(t *testing.T) {
	root, _ := filepath.Abs("../../..")
	if _, err := os.Stat(filepath.Join(root, "sdk-c", "build", "libtn.a")); err != nil {
		if out, err := exec.Command("make", "-C", filepath.Join(root, "sdk-c")).CombinedOutput(); err != nil {
			t.Fatalf("build the C SDK: %v\n%s", err, out)
		}
	}
	for _, lang := range []string{"go", "c", "python"} {
		t.Run(lang, func(t *testing.T) {
			dir := t.TempDir()
			name := "my-" + lang
			if code, _, errs := runCLI("new", lang, name, "--seat", "desk-lamp", "--dir", dir, "--sdk", root); code != 0 {
				t.Fatalf("new: exit %d: %s", code, errs)
			}
			if out, err := exec.Command("make", "-C", filepath.Join(dir, name)).CombinedOutput(); err != nil {
				t.Fatalf("make: %v\n%s", err, out)
			}
			code, out, _ := runCLI("check", filepath.Join(dir, name))
			if code != 0 || !strings.Contains(out, "verdict: PASS") {
				t.Fatalf("check: exit %d\n%s", code, out)
			}
			code, out, errs := runCLI("call", name+".hello", "name=Zoe", "--bundles", dir)
			if code != 0 || !strings.Contains(out, "Zoe") {
				t.Errorf("call through the node: exit %d, %q %s", code, out, errs)
			}
			if code, out, _ := runCLI("tools", "--bundles", dir); code != 0 || !strings.Contains(out, "desk-lamp.on") {
				t.Errorf("tools: exit %d\n%s", code, out)
			}
		})
	}
}

func TestCheckGivesBrokenBundlesAClearVerdict(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string)
		want  string
	}{
		{"junk on stdout", func(t *testing.T, dir string) {
			testkit.Write(t, dir, testkit.Fake{Name: "noisy", Env: map[string]string{"FAKE_JUNK": "1"}})
		}, "stdout     FAIL"},
		{"a bad tool name", func(t *testing.T, dir string) {
			testkit.Write(t, dir, testkit.Fake{Name: "named"}) // the fake lists "bad name!"
		}, "names      FAIL"},
		{"an unknown manifest key", func(t *testing.T, dir string) {
			testkit.Write(t, dir, testkit.Fake{Name: "typo", Extra: `"comand": 1`})
		}, `unknown key "comand"`},
		{"a program that is not there", func(t *testing.T, dir string) {
			testkit.Write(t, dir, testkit.Fake{Name: "ghost", Command: []string{"./nowhere"}})
		}, "start      FAIL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			tt.setup(t, dir)
			entries, _ := os.ReadDir(dir)
			code, out, _ := runCLI("check", filepath.Join(dir, entries[0].Name()))
			if code != 1 || !strings.Contains(out, tt.want) || !strings.Contains(out, "verdict: FAIL") {
				t.Errorf("exit %d, want 1 with %q and a FAIL verdict:\n%s", code, tt.want, out)
			}
		})
	}
}

func TestToolsCallAndStatusOnARunningNode(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "remote"})
	url := httpNode(t, dir)
	if code, out, errs := runCLI("tools", "--url", url); code != 0 || !strings.Contains(out, "remote.echo") {
		t.Errorf("tools: exit %d\n%s%s", code, out, errs)
	}
	if code, out, errs := runCLI("call", "remote.echo", "--url", url, "--json", `{"text":"via http"}`); code != 0 || strings.TrimSpace(out) != "remote:via http" {
		t.Errorf("call: exit %d %q %s", code, out, errs)
	}
	if code, out, errs := runCLI("status", "--url", url); code != 0 || !strings.Contains(out, "remote") || !strings.Contains(out, "ready") {
		t.Errorf("status: exit %d\n%s%s", code, out, errs)
	}
	if code, _, errs := runCLI("call", "remote.nothing", "--url", url); code != 1 || !strings.Contains(errs, "unknown tool") {
		t.Errorf("unknown tool: exit %d %s", code, errs)
	}
}
