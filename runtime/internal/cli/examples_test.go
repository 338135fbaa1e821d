package cli_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// examplesDir links the named example bundles of this repository into a fresh folder, so a
// node can serve just those; the Go example is built first when missing. A name is a
// folder of examples/, or a path from it ("../testdata/conformance/go").
func examplesDir(t *testing.T, names ...string) string {
	t.Helper()
	root, err := filepath.Abs("../../../examples")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go", "build", "example-go")); err != nil {
		out, err := exec.Command("go", "build", "-o", filepath.Join(root, "go", "build", "example-go"), "../../../examples/go").CombinedOutput()
		if err != nil {
			t.Fatalf("build the Go example: %v\n%s", err, out)
		}
	}
	dir := t.TempDir()
	for _, n := range names {
		if err := os.Symlink(filepath.Join(root, n), filepath.Join(dir, strings.ReplaceAll(n, "/", "-"))); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestExamplesInTwoLanguagesMerge(t *testing.T) {
	dir := examplesDir(t, "go", "python")
	run := startNode(t, nil, nil, "--bundles", dir)
	tools := toolNames(t, run.session)
	for _, want := range []string{"node-lamp.on", "node-lamp.status", "go.greet", "python.greet", "python.node-lamp.on"} {
		if tools[want] == nil {
			t.Errorf("tool %q missing; have %v", want, keys(tools))
		}
	}
	for _, tc := range []struct{ tool, want string }{
		{"go.greet", "Hello, Ada!"},
		{"python.greet", "Hello, Ada!"},
	} {
		if got, isErr := callText(t, run.session, tc.tool, map[string]any{"name": "Ada"}); got != tc.want || isErr {
			t.Errorf("%s answered %q (isError %v), want %q", tc.tool, got, isErr, tc.want)
		}
	}
	// The Go example serves the seat: it sorts before python.
	if got, _ := callText(t, run.session, "node-lamp.status", nil); got != `{"on":false}` {
		t.Errorf("node-lamp.status before on: %q", got)
	}
	callText(t, run.session, "node-lamp.on", nil)
	if got, _ := callText(t, run.session, "node-lamp.status", nil); got != `{"on":true}` {
		t.Errorf("node-lamp.status after on: %q", got)
	}
	if got, _ := callText(t, run.session, "python.node-lamp.status", nil); got != `{"on":false}` {
		t.Errorf("the python lamp changed with the go one: %q", got)
	}
}

func TestAllThreeExamplesThroughTheNode(t *testing.T) {
	root, _ := filepath.Abs("../../..")
	if _, err := os.Stat(filepath.Join(root, "examples", "c", "build", "example-c")); err != nil {
		if out, err := exec.Command("make", "-C", filepath.Join(root, "examples", "c")).CombinedOutput(); err != nil {
			t.Fatalf("build the C example: %v\n%s", err, out)
		}
	}
	run := startNode(t, nil, nil, "--bundles", examplesDir(t, "c", "go", "python"))
	tools := toolNames(t, run.session)
	for _, lang := range []string{"c", "go", "python"} {
		if got, _ := callText(t, run.session, lang+".greet", map[string]any{"name": lang}); got != "Hello, "+lang+"!" {
			t.Errorf("%s.greet answered %q", lang, got)
		}
	}
	// node-lamp.on is exposed once: c sorts first and serves it; the others keep theirs
	// under their prefixes.
	lamps := 0
	for tool, err := range run.session.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatalf("list tools: %v", err)
		}
		if tool.Name == "node-lamp.on" {
			lamps++
		}
	}
	if lamps != 1 || tools["go.node-lamp.on"] == nil || tools["python.node-lamp.on"] == nil {
		t.Errorf("node-lamp.on listed %d times; tools %v", lamps, keys(tools))
	}
}

// What `make run` serves (the examples and, once built, the MEOS bundle) starts without a
// warning: a newcomer's first log says nothing is wrong. Seats the examples share are
// served as designed and logged as such.
func TestServingTheExamplesWarnsOfNothing(t *testing.T) {
	root, _ := filepath.Abs("../../..")
	if _, err := os.Stat(filepath.Join(root, "examples", "c", "build", "example-c")); err != nil {
		if out, err := exec.Command("make", "-C", filepath.Join(root, "examples", "c")).CombinedOutput(); err != nil {
			t.Fatalf("build the C example: %v\n%s", err, out)
		}
	}
	args := []string{"--bundles", filepath.Join(root, "examples")}
	if _, err := os.Stat(filepath.Join(root, "bundles", "meos", "build", "meos-bundle")); err == nil {
		args = append(args, "--bundles", filepath.Join(root, "bundles"))
	} else {
		t.Log("the MEOS bundle is not built (make bundles): serving the examples alone")
	}
	run := startNode(t, nil, nil, args...)
	if tools := toolNames(t, run.session); tools["c.greet"] == nil {
		t.Fatalf("the examples are not served: %v", keys(tools))
	}
	for _, line := range strings.Split(run.logs.String(), "\n") {
		if strings.Contains(line, "[WARN]") || strings.Contains(line, "[ERROR]") {
			t.Errorf("the node warned: %s", line)
		}
	}
}

// `make run` builds and installs only what running needs: none of the tests' peers.
func TestMakeRunInstallsNoTestPeer(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("not tried: make is not installed")
	}
	cmd := exec.Command("make", "-n", "-B", "run")
	cmd.Dir = "../../.."
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make -n -B run: %v\n%s", err, out)
	}
	for _, peer := range []string{"prometheus", "nats-server", "valgrind", "npm install", "mcp==", "hydra", "testdata/conformance"} {
		if strings.Contains(string(out), peer) {
			t.Errorf("make run would install or build %s:\n%s", peer, out)
		}
	}
}
