package nodekit

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The repository's own bundles as a node's tests serve them: the examples, and the
// conformance bundle of each SDK.

// Examples links the named example bundles of the repository into a fresh folder, so that a
// node can serve just those; the Go and C examples, and the Go conformance bundle, are
// built first when they are missing. A name is a folder of examples/, or a path from it
// ("../testdata/conformance/go").
func Examples(t testing.TB, names ...string) string {
	t.Helper()
	root := Root(t)
	examples := filepath.Join(root, "examples")
	for _, n := range names {
		switch n {
		case "go":
			buildIfMissing(t, root, filepath.Join(examples, "go", "build", "example-go"), "go", "build", "-o", "examples/go/build/example-go", "./examples/go")
		case "c":
			buildIfMissing(t, root, filepath.Join(examples, "c", "build", "example-c"), "make", "-C", "examples/c")
		case "../testdata/conformance/go":
			buildIfMissing(t, root, filepath.Join(root, "testdata", "conformance", "go", "build", "conformance"), goConformance()...)
		}
	}
	dir := t.TempDir()
	for _, n := range names {
		if err := os.Symlink(filepath.Join(examples, n), filepath.Join(dir, strings.ReplaceAll(n, "/", "-"))); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Conformance links the conformance bundle of one SDK (go, c or python) into a fresh
// folder, built first (always: a stale program is rebuilt).
func Conformance(t testing.TB, sdk string) string {
	t.Helper()
	root := Root(t)
	switch sdk {
	case "go":
		build(t, root, goConformance()...)
	case "c":
		build(t, root, "make", "-s", "-C", "testdata/conformance/c")
	}
	dir := t.TempDir()
	if err := os.Symlink(filepath.Join(root, "testdata", "conformance", sdk), filepath.Join(dir, sdk)); err != nil {
		t.Fatal(err)
	}
	return dir
}

// goConformance is the command that builds the Go SDK's conformance bundle.
func goConformance() []string {
	return []string{"go", "build", "-o", "testdata/conformance/go/build/conformance", "./testdata/conformance/go"}
}

// buildIfMissing runs the command in root when the program it builds is not there.
func buildIfMissing(t testing.TB, root, program string, command ...string) {
	t.Helper()
	if _, err := os.Stat(program); err != nil {
		build(t, root, command...)
	}
}

// build runs a build command in the repository's root.
func build(t testing.TB, root string, command ...string) {
	t.Helper()
	cmd := exec.Command(command[0], command[1:]...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(command, " "), err, out)
	}
}
