package release

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
)

// TestDistArtifactsInstallAndServe runs make dist for this system and holds its artifacts
// to what docs/releasing.md promises: each listed with its checksum in SHA256SUMS (and
// printed), the node runnable, the C SDK tarball unpacked anywhere building a bundle with
// pkg-config, and the Python wheel installed into a clean venv; the node checks both
// bundles.
func TestDistArtifactsInstallAndServe(t *testing.T) {
	releaseTests(t)
	dir := checkout(t)
	version := versionOf(t)
	platform := runtime.GOOS + "-" + runtime.GOARCH
	dist := t.TempDir()
	out := run(t, dir, nil, "make", "dist", "DIST="+dist, "DIST_PLATFORMS="+runtime.GOOS+"/"+runtime.GOARCH)

	want := []string{
		"tn-" + version + "-" + platform + ".tar.gz",
		"toolnode-" + version + "-" + platform,
		"toolnode_sdk-" + version + "-py3-none-any.whl",
		"toolnode_sdk-" + version + ".tar.gz",
	}
	sums := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(readFile(t, filepath.Join(dist, "SHA256SUMS"))), "\n") {
		sum, name, ok := strings.Cut(line, "  ")
		if !ok {
			t.Fatalf("SHA256SUMS: %q is not <sum>  <name>", line)
		}
		sums[name] = sum
		if !strings.Contains(out, line) {
			t.Errorf("make dist did not print %q", line)
		}
	}
	var listed, present []string
	for name := range sums {
		listed = append(listed, name)
	}
	entries, err := os.ReadDir(dist)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != "SHA256SUMS" {
			present = append(present, e.Name())
		}
	}
	sort.Strings(listed)
	sort.Strings(present)
	if strings.Join(listed, " ") != strings.Join(want, " ") || strings.Join(present, " ") != strings.Join(want, " ") {
		t.Fatalf("make dist made %v and listed %v in SHA256SUMS, want %v", present, listed, want)
	}
	for name, sum := range sums {
		got := sha256.Sum256([]byte(readFile(t, filepath.Join(dist, name))))
		if hex.EncodeToString(got[:]) != sum {
			t.Errorf("%s: SHA256SUMS says %s, the file hashes to %x", name, sum, got)
		}
	}

	node := filepath.Join(dist, "toolnode-"+version+"-"+platform)
	if got := strings.TrimSpace(run(t, dist, nil, node, "version")); got != "toolnode "+version {
		t.Errorf("%s version says %q", node, got)
	}
	t.Run("c", func(t *testing.T) {
		if runtime.GOOS != "linux" {
			t.Skip("links with an ELF rpath; the C tarball is tried on Linux")
		}
		tmp := t.TempDir()
		run(t, tmp, nil, "tar", "-xzf", filepath.Join(dist, want[0]))
		pc := filepath.Join(tmp, "tn-"+version+"-"+platform, "lib", "pkgconfig")
		flags := strings.Fields(run(t, tmp, []string{"PKG_CONFIG_PATH=" + pc}, "pkg-config", "--cflags", "--libs", "tn"))
		bundle := filepath.Join(tmp, "example")
		mustWrite(t, filepath.Join(bundle, "main.c"), []byte(readRoot(t, "examples/c/main.c")))
		args := append([]string{"-std=c11", "-o", "example", "main.c"}, flags...)
		args = append(args, "-Wl,-rpath,"+filepath.Join(tmp, "tn-"+version+"-"+platform, "lib"))
		run(t, bundle, nil, "cc", args...)
		if ldd := run(t, bundle, nil, "ldd", "example"); !strings.Contains(ldd, filepath.Join(tmp, "tn-"+version+"-"+platform, "lib", "libtn.so.1")) {
			t.Errorf("the bundle does not load the tarball's libtn.so.1:\n%s", ldd)
		}
		writeManifest(t, bundle, []string{"./example"})
		t.Log(run(t, tmp, nil, node, "check", bundle))
	})
	t.Run("python", func(t *testing.T) {
		tmp := t.TempDir()
		python := filepath.Join(dir, "build", "venv", "bin", "python")
		env := filepath.Join(tmp, "venv")
		run(t, tmp, nil, python, "-m", "venv", "--without-pip", env)
		run(t, tmp, nil, python, "-m", "pip", "--python", filepath.Join(env, "bin", "python"), "install",
			"--disable-pip-version-check", "-q", filepath.Join(dist, want[2]))
		bundle := filepath.Join(tmp, "example")
		mustWrite(t, filepath.Join(bundle, "server.py"), []byte(readRoot(t, "examples/python/server.py")))
		writeManifest(t, bundle, []string{filepath.Join(env, "bin", "python"), "./server.py"})
		t.Log(run(t, tmp, nil, node, "check", bundle))
	})
}

// writeManifest writes the bundle.json of an example bundle running command.
func writeManifest(t *testing.T, bundle string, command []string) {
	t.Helper()
	b, err := json.Marshal(map[string]any{"name": filepath.Base(bundle), "command": command, "seats": []string{"node-lamp"}})
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(bundle, "bundle.json"), b)
}

// readFile returns a file's content, failing the test when it cannot.
func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
