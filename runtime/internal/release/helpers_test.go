package release

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// checkout returns the absolute path of the checkout.
func checkout(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// run runs name with args in dir, the environment being the test's with env added, and
// returns its standard output; it fails the test, with both outputs, when the command
// fails.
func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s (in %s): %v\nstdout:\n%s\nstderr:\n%s", name, strings.Join(args, " "), dir, err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// lastRelease reads testdata/last-release: the version of the last release and the
// commit it was cut from.
func lastRelease(t *testing.T) (version, commit string) {
	t.Helper()
	b, err := os.ReadFile("testdata/last-release")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if fields := strings.Fields(line); len(fields) == 2 && !strings.HasPrefix(line, "#") {
			return fields[0], fields[1]
		}
	}
	t.Fatal("testdata/last-release names no release")
	return "", ""
}

// releaseTree returns the git revision of the last release's tree: its tag sdk-go/vVERSION
// when the checkout has it, else the commit testdata/last-release names. It skips the test,
// saying why, when the checkout's history lacks both (a shallow clone).
func releaseTree(t *testing.T) (version, rev string) {
	t.Helper()
	version, commit := lastRelease(t)
	dir := checkout(t)
	for _, rev := range []string{"sdk-go/v" + version, commit} {
		if exec.Command("git", "-C", dir, "cat-file", "-e", rev+"^{commit}").Run() == nil {
			return version, rev
		}
	}
	t.Skipf("the checkout's history holds neither tag sdk-go/v%s nor commit %s (a shallow clone?): "+
		"nothing to compare with; clone the repository whole to run this check", version, commit)
	return "", ""
}

// releaseTests skips a long release check unless TOOLNODE_RELEASE_TESTS is set, as
// make test-release sets it.
func releaseTests(t *testing.T) {
	t.Helper()
	if os.Getenv("TOOLNODE_RELEASE_TESTS") == "" {
		t.Skip("a release check of minutes: make test-release runs it (TOOLNODE_RELEASE_TESTS=1)")
	}
}

// goEnv is the environment of a go command run as a user outside this checkout would:
// no workspace, no GOFLAGS of ours.
func goEnv(extra ...string) []string {
	return append([]string{"GOWORK=off", "GOFLAGS=-mod=mod -buildvcs=false"}, extra...)
}

// versionOf returns the checkout's VERSION.
func versionOf(t *testing.T) string {
	t.Helper()
	return strings.TrimSpace(readRoot(t, "VERSION"))
}

// mustWrite writes a file, failing the test when it cannot.
func mustWrite(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(fmt.Errorf("writing %s: %w", path, err))
	}
}

// dependOn reads every file under the checkout's paths, so that go test's cache, which
// knows the files a test opens but not those its commands read, reruns the test when one
// of them changes.
func dependOn(t *testing.T, paths ...string) {
	t.Helper()
	for _, p := range paths {
		err := filepath.WalkDir(filepath.Join(checkout(t), p), func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			_, err = os.ReadFile(path)
			return err
		})
		if err != nil {
			t.Fatalf("reading %s: %v", p, err)
		}
	}
}
