package release

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// TestABundleOfTheLastReleaseRunsOnThisLibraryOrTheSonameMoved builds the last release's C
// example against its own header and shared library, then puts this checkout's library in
// the old one's place: with the same soname the old bundle must run unchanged (toolnode
// check passes); with another, the loader must refuse to start it rather than let it call
// a library whose ABI it does not know.
func TestABundleOfTheLastReleaseRunsOnThisLibraryOrTheSonameMoved(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two C libraries and the node; not with -short")
	}
	if runtime.GOOS != "linux" {
		t.Skip("reads ELF sonames and links with an rpath: Linux only")
	}
	last, rev := releaseTree(t)
	dependOn(t, "sdk-c/include", "sdk-c/src", "sdk-c/Makefile", "sdk-c/libtn.map")
	dir := checkout(t)
	tmp := t.TempDir()
	extract(t, rev, "sdk-c", tmp)
	extract(t, rev, "examples/c", tmp)
	run(t, filepath.Join(tmp, "sdk-c"), nil, "make", "all")
	oldLib := sharedLibrary(t, filepath.Join(tmp, "sdk-c", "build"))
	oldName := soname(t, oldLib)

	// The old example, linked against the old library, which it finds in its own lib/.
	bundle := filepath.Join(tmp, "bundle")
	lib := filepath.Join(bundle, "lib")
	copyFile(t, oldLib, filepath.Join(lib, oldName))
	jansson := strings.Fields(run(t, tmp, nil, "pkg-config", "--cflags", "--libs", "jansson"))
	args := []string{"-std=c11", "-pthread", "-I", filepath.Join(tmp, "sdk-c", "include"),
		"-o", filepath.Join(bundle, "example"), filepath.Join(tmp, "examples", "c", "main.c"),
		"-L" + lib, "-l:" + oldName, "-Wl,-rpath,$ORIGIN/lib"}
	run(t, tmp, nil, "cc", append(args, jansson...)...)
	writeManifest(t, bundle, []string{"./example"})
	toolnode := filepath.Join(tmp, "toolnode")
	run(t, dir, nil, "go", "build", "-o", toolnode, "./runtime/cmd/toolnode")
	run(t, tmp, nil, toolnode, "check", bundle)

	sdk := filepath.Join(dir, "sdk-c")
	run(t, sdk, nil, "make", "all")
	// The build folder may keep the library of an older soname: ask make which is this one.
	newLib := filepath.Join(sdk, "build", strings.TrimSpace(run(t, sdk, nil, "make", "-s", "--no-print-directory", "soname")))
	newName := soname(t, newLib)
	if err := os.Remove(filepath.Join(lib, oldName)); err != nil {
		t.Fatal(err)
	}
	copyFile(t, newLib, filepath.Join(lib, newName))
	if newName == oldName {
		t.Log(run(t, tmp, nil, toolnode, "check", bundle))
		t.Logf("the example of %s runs unchanged on this %s", last, newName)
		return
	}
	start := exec.Command(filepath.Join(bundle, "example"))
	out, err := start.CombinedOutput()
	if err == nil || !strings.Contains(string(out), oldName) {
		t.Fatalf("the example of %s, needing %s, started with only %s beside it (%v):\n%s", last, oldName, newName, err, out)
	}
	t.Logf("the soname moved from %s (%s) to %s: the loader refuses the old bundle (%s)", oldName, last, newName, strings.TrimSpace(string(out)))
}

// sharedLibrary returns the one shared library (not its development symlink) in dir.
func sharedLibrary(t *testing.T, dir string) string {
	t.Helper()
	found, _ := filepath.Glob(filepath.Join(dir, "libtn.so.*"))
	if len(found) != 1 {
		t.Fatalf("%s holds %v, want one libtn.so.N", dir, found)
	}
	return found[0]
}

// soname returns the ELF soname of a shared library.
func soname(t *testing.T, lib string) string {
	t.Helper()
	m := regexp.MustCompile(`Library soname: \[([^\]]+)\]`).FindStringSubmatch(run(t, ".", nil, "readelf", "-d", lib))
	if m == nil {
		t.Fatalf("%s has no soname", lib)
	}
	return m[1]
}

// copyFile copies a file, making the folders it goes into. It runs cp: a file the test
// itself opened in a temporary folder would keep go test from caching its result.
func copyFile(t *testing.T, from, to string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	run(t, ".", nil, "cp", from, to)
}
