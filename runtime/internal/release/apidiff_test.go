package release

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// apidiff is the pinned golang.org/x/exp/cmd/apidiff.
const apidiff = "golang.org/x/exp/cmd/apidiff@v0.0.0-20261113113407-e3970619a1a4"

// sdkModule is the Go SDK's module path.
const sdkModule = "github.com/toolnode/toolnode/sdk-go"

// meantChanges are the incompatible changes apidiff reports that every release makes on
// purpose: the SDK's version constant says the new release.
var meantChanges = regexp.MustCompile(`^- \./app\.Version: value changed from "[^"]*" to "[^"]*"$`)

func TestSDKGoAPIStaysCompatibleWithTheLastRelease(t *testing.T) {
	if testing.Short() {
		t.Skip("builds apidiff and both APIs; not with -short")
	}
	last, rev := releaseTree(t)
	dependOn(t, "sdk-go")
	tmp := t.TempDir()
	run(t, tmp, goEnv("GOBIN="+filepath.Join(tmp, "bin")), "go", "install", apidiff)
	tool := filepath.Join(tmp, "bin", "apidiff")

	extract(t, rev, "sdk-go", tmp)
	was := filepath.Join(tmp, "last.api")
	run(t, filepath.Join(tmp, "sdk-go"), goEnv(), tool, "-m", "-w", was, sdkModule)
	out := run(t, filepath.Join(checkout(t), "sdk-go"), goEnv(), tool, "-m", "-incompatible", was, sdkModule)

	var breaks []string
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "- ") && !meantChanges.MatchString(line) {
			breaks = append(breaks, line)
		}
	}
	now := versionOf(t)
	switch {
	case len(breaks) == 0:
		t.Logf("sdk-go %s keeps the API of %s (%s)", now, last, rev)
	case major(now) != major(last):
		t.Logf("sdk-go %s breaks the API of %s, as a new major version may:\n%s", now, last, strings.Join(breaks, "\n"))
	default:
		t.Errorf("sdk-go %s breaks the API of the last release, %s (%s), without a new major version:\n%s\n"+
			"keep the old API beside the new (deprecate it), or move the major version (docs/releasing.md)",
			now, last, rev, strings.Join(breaks, "\n"))
	}
}

// major returns the major part of a MAJOR.MINOR.PATCH version.
func major(version string) string {
	m, _, _ := strings.Cut(version, ".")
	return m
}

// extract writes the files under path of the git revision rev into dir, as path/....
func extract(t *testing.T, rev, path, dir string) {
	t.Helper()
	cmd := exec.Command("git", "-C", checkout(t), "archive", "--format=tar", rev, path)
	var archive, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &archive, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("git archive %s %s: %v\n%s", rev, path, err, stderr.String())
	}
	r := tar.NewReader(&archive)
	for {
		h, err := r.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatalf("reading git archive %s %s: %v", rev, path, err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		data, err := io.ReadAll(r)
		if err != nil {
			t.Fatalf("reading %s from git archive: %v", h.Name, err)
		}
		mustWrite(t, filepath.Join(dir, filepath.FromSlash(h.Name)), data)
	}
}
