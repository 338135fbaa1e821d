package release

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// nodeModule is the node's module path.
const nodeModule = "github.com/toolnode/toolnode"

// TestTaggedTreeInstallsFromAModuleProxy does what a user does once a release is tagged,
// against a module proxy on disk made from this tree as tagged (GOPROXY=file://): go
// install the node at the release, then create a Go bundle, drop its go.work and go get
// the SDK at the release, with no workspace and no replace, build it, and check it with
// the installed node.
func TestTaggedTreeInstallsFromAModuleProxy(t *testing.T) {
	releaseTests(t)
	dir := checkout(t)
	version := "v" + versionOf(t)
	tmp := t.TempDir()
	proxy := filepath.Join(tmp, "proxy")
	files := tracked(t, dir)

	// The SDK is tagged first; its checksum goes into the node's go.sum at release, as
	// `go get sdk-go@VERSION` in the node's module would write it (docs/releasing.md).
	sdkZip := publish(t, proxy, sdkModule, version, dir, under(files, "sdk-go/"), nil)
	sdkSum := fmt.Sprintf("%s %s %s\n%s %s/go.mod %s\n",
		sdkModule, version, zipHash(t, sdkZip),
		sdkModule, version, fileHash(readRoot(t, "sdk-go/go.mod")))
	publish(t, proxy, nodeModule, version, dir, outsideNested(files), map[string][]byte{
		"go.sum": []byte(readRoot(t, "go.sum") + sdkSum),
	})

	// A module cache of its own, so that no copy of an earlier run (or of a real release)
	// stands in for this tree; the dependencies come from the machine's cache, read as a
	// proxy, before the network.
	cache := strings.TrimSpace(run(t, tmp, nil, "go", "env", "GOMODCACHE"))
	goProxy := strings.Join([]string{"file://" + proxy, "file://" + filepath.Join(cache, "cache", "download"),
		strings.TrimSpace(run(t, tmp, nil, "go", "env", "GOPROXY"))}, ",")
	env := append(goEnv("GOPROXY="+goProxy, "GONOSUMDB="+nodeModule, "GOBIN="+filepath.Join(tmp, "bin"),
		"GOMODCACHE="+filepath.Join(tmp, "modcache")), "GOFLAGS=-mod=mod -buildvcs=false -modcacherw")
	run(t, tmp, env, "go", "install", nodeModule+"/runtime/cmd/toolnode@"+version)
	toolnode := filepath.Join(tmp, "bin", "toolnode")
	if got := run(t, tmp, nil, toolnode, "version"); strings.TrimSpace(got) != "toolnode "+versionOf(t) {
		t.Errorf("the installed node says %q, want toolnode %s", got, versionOf(t))
	}

	run(t, tmp, nil, toolnode, "new", "go", "hello", "--sdk", dir)
	bundle := filepath.Join(tmp, "hello")
	if err := os.Remove(filepath.Join(bundle, "go.work")); err != nil {
		t.Fatal(err)
	}
	run(t, bundle, env, "go", "get", sdkModule+"@"+version)
	run(t, bundle, env, "go", "mod", "tidy")
	var mod struct{ Replace []any }
	if err := json.Unmarshal([]byte(run(t, bundle, env, "go", "mod", "edit", "-json")), &mod); err != nil {
		t.Fatal(err)
	}
	if len(mod.Replace) != 0 {
		t.Errorf("the bundle's go.mod holds replaces: %v", mod.Replace)
	}
	run(t, bundle, env, "go", "build", "-o", "build/hello", ".")
	t.Log(run(t, tmp, nil, toolnode, "check", bundle))
}

// tracked lists the files git tracks in dir (what a tag holds), slash-separated.
func tracked(t *testing.T, dir string) []string {
	t.Helper()
	out, err := exec.Command("git", "-C", dir, "ls-files", "-z").Output()
	if err != nil {
		t.Skipf("%s is not a git checkout (git ls-files: %v): no tagged tree to publish", dir, err)
	}
	var files []string
	for _, f := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if info, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(f))); err == nil && info.Mode().IsRegular() {
			files = append(files, f)
		}
	}
	return files
}

// under returns the files below prefix, relative to it.
func under(files []string, prefix string) []string {
	var out []string
	for _, f := range files {
		if rel, ok := strings.CutPrefix(f, prefix); ok {
			out = append(out, rel)
		}
	}
	return out
}

// outsideNested returns the files of the module at the root: not in a directory holding
// a go.mod of its own (another module), as a module zip leaves them out.
func outsideNested(files []string) []string {
	nested := map[string]bool{}
	for _, f := range files {
		if d := path.Dir(f); path.Base(f) == "go.mod" && d != "." {
			nested[d] = true
		}
	}
	var out []string
	for _, f := range files {
		inside := false
		for d := path.Dir(f); d != "."; d = path.Dir(d) {
			if nested[d] {
				inside = true
				break
			}
		}
		if !inside {
			out = append(out, f)
		}
	}
	return out
}

// publish writes module at version into the file proxy: its list, info, go.mod and zip
// (files read from dir/<module's directory>, or replaced by override). It returns the zip.
func publish(t *testing.T, proxy, module, version, dir string, files []string, override map[string][]byte) []byte {
	t.Helper()
	src := dir
	if rel, ok := strings.CutPrefix(module, nodeModule+"/"); ok {
		src = filepath.Join(dir, filepath.FromSlash(rel))
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	sort.Strings(files)
	for _, f := range files {
		data, ok := override[f]
		if !ok {
			var err error
			if data, err = os.ReadFile(filepath.Join(src, filepath.FromSlash(f))); err != nil {
				t.Fatal(err)
			}
		}
		w, err := zw.Create(module + "@" + version + "/" + f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(filepath.Join(src, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	at := filepath.Join(proxy, filepath.FromSlash(module), "@v")
	info := fmt.Sprintf(`{"Version":%q,"Time":%q}`, version, time.Now().UTC().Format(time.RFC3339))
	mustWrite(t, filepath.Join(at, "list"), []byte(version+"\n"))
	mustWrite(t, filepath.Join(at, version+".info"), []byte(info))
	mustWrite(t, filepath.Join(at, version+".mod"), mod)
	mustWrite(t, filepath.Join(at, version+".zip"), buf.Bytes())
	return buf.Bytes()
}

// zipHash is the go.sum hash (h1, golang.org/x/mod/sumdb/dirhash.Hash1) of a module zip.
func zipHash(t *testing.T, data []byte) string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	content := map[string][]byte{}
	for _, f := range zr.File {
		r, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if _, err := b.ReadFrom(r); err != nil {
			t.Fatal(err)
		}
		r.Close()
		names = append(names, f.Name)
		content[f.Name] = b.Bytes()
	}
	return hash1(names, content)
}

// fileHash is the go.sum hash of a go.mod file.
func fileHash(mod string) string {
	return hash1([]string{"go.mod"}, map[string][]byte{"go.mod": []byte(mod)})
}

// hash1 is dirhash.Hash1: SHA-256 over the sorted lines "<sha256 hex>  <name>".
func hash1(names []string, content map[string][]byte) string {
	sort.Strings(names)
	summary := sha256.New()
	for _, name := range names {
		fmt.Fprintf(summary, "%x  %s\n", sha256.Sum256(content[name]), name)
	}
	return "h1:" + base64.StdEncoding.EncodeToString(summary.Sum(nil))
}
