package conformance_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolnode/toolnode/runtime/internal/testkit/nodekit"
)

// TestConformanceSkills runs the suite's scenarios of the skills extension
// (io.modelcontextprotocol/skills, SEP-2640), every one it lists, against the node serving
// the Go SDK's conformance bundle with the MEOS bundle's skill as its skills folder: the
// node reads and serves the skill, lists and gets it, and its files are read through it.
// Every check the suite does not skip must pass (the directory scenario skips: the node
// does not offer resources/directory/read).
func TestConformanceSkills(t *testing.T) {
	node, suite := findSuite(t, "conformance-2026")
	scenarios := extensionScenarios(t, node, suite, "sep-2640-")
	root := nodekit.Root(t)
	conf := filepath.Join(nodekit.Conformance(t, "go"), "go", "build", "conformance")
	dir := t.TempDir()
	copyTree(t, filepath.Join(root, "bundles", "meos", "skills"), filepath.Join(dir, "docs", "skills"))
	manifest := fmt.Sprintf(`{"name": "docs", "command": [%q], "skills": "skills"}`, conf)
	if err := os.WriteFile(filepath.Join(dir, "docs", "bundle.json"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	checkScenarios(t, node, suite, startNode(t, buildNode(t), "--bundles", dir), scenarios)
}

// extensionScenarios lists the suite's server scenarios of an extension whose names begin
// with prefix.
func extensionScenarios(t *testing.T, node, suite, prefix string) []string {
	t.Helper()
	out, err := exec.Command(node, suite, "list", "--server").CombinedOutput()
	if err != nil {
		t.Fatalf("conformance list: %v\n%s", err, out)
	}
	var names []string
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(strings.TrimSpace(line))
		if len(f) == 3 && f[0] == "-" && strings.HasPrefix(f[1], prefix) && f[2] == "[extension]" {
			names = append(names, f[1])
		}
	}
	if len(names) == 0 {
		t.Fatalf("the suite lists no scenario beginning %s:\n%s", prefix, out)
	}
	return names
}

// copyTree copies the regular files under from to to.
func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(to, rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
