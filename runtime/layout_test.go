// Package runtime_test holds the node's layout to docs/architecture.md: every package is in
// its table, and every import points to a lower layer.
package runtime_test

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// module is the prefix of the packages the table names by their paths.
const module = "github.com/toolnode/toolnode/"

// layers reads the package table of docs/architecture.md: each package's layer, -1 for a
// package of the tests.
func layers(t *testing.T) map[string]int {
	t.Helper()
	doc, err := os.ReadFile("../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `([a-z0-9/_-]+)` \\| (test|[0-9]+) \\|")
	out := map[string]int{}
	for _, m := range row.FindAllStringSubmatch(string(doc), -1) {
		layer := -1
		if m[2] != "test" {
			layer, _ = strconv.Atoi(m[2])
		}
		out[m[1]] = layer
	}
	if len(out) == 0 {
		t.Fatal("docs/architecture.md has no package table")
	}
	return out
}

func TestPackagesFollowTheArchitecture(t *testing.T) {
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...", "./sdk-go/...")
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	table := layers(t)
	listed := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, ok := strings.CutPrefix(fields[0], module)
		if !ok || !strings.HasPrefix(pkg, "runtime/") && !strings.HasPrefix(pkg, "sdk-go/") || pkg == "runtime" {
			continue // examples, bundles and this package are not the node's layout
		}
		listed[pkg] = true
		layer, ok := table[pkg]
		if !ok {
			t.Errorf("%s is not in docs/architecture.md's package table", pkg)
			continue
		}
		for _, imp := range fields[1:] {
			dep, ours := strings.CutPrefix(imp, module)
			if !ours {
				continue
			}
			depLayer, known := table[dep]
			switch {
			case !known:
				t.Errorf("%s imports %s, which is not in the table", pkg, dep)
			case depLayer == -1 && layer != -1:
				// A test helper package: any layer may use it.
			case depLayer >= layer && layer != -1 || layer == -1 && depLayer == -1:
				t.Errorf("%s (layer %d) imports %s (layer %d): imports point to lower layers only", pkg, layer, dep, depLayer)
			}
		}
	}
	for pkg := range table {
		if !listed[pkg] {
			t.Errorf("docs/architecture.md names %s, which is no package", pkg)
		}
	}
}
