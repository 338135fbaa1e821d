package release

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/toolnode/toolnode/runtime/internal/version"
	"github.com/toolnode/toolnode/sdk-go/app"
)

// root is the checkout, from this package's directory.
const root = "../../.."

// readRoot returns a file of the checkout, failing the test when it cannot.
func readRoot(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	return string(b)
}

// find returns the first group of re in the file at path, failing when it is absent.
func find(t *testing.T, path, re string) string {
	t.Helper()
	m := regexp.MustCompile(re).FindStringSubmatch(readRoot(t, path))
	if m == nil {
		t.Fatalf("%s: nothing matches %s", path, re)
	}
	return m[1]
}

// semver is a release version as the VERSION file holds it.
var semver = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$`)

func TestEveryPlaceSaysTheVersionOfTheVersionFile(t *testing.T) {
	want := strings.TrimSpace(readRoot(t, "VERSION"))
	parts := semver.FindStringSubmatch(want)
	if parts == nil {
		t.Fatalf("VERSION holds %q, not MAJOR.MINOR.PATCH", want)
	}
	places := []struct{ place, got string }{
		{"runtime/internal/version.Version (toolnode version)", version.Version},
		{"runtime/internal/version.Tag", strings.TrimPrefix(version.Tag, "v")},
		{"sdk-go/app.Version", app.Version},
		{"go.mod's requirement of sdk-go", find(t, "go.mod", `github\.com/toolnode/toolnode/sdk-go v(\S+)`)},
		{"go.work's replace of sdk-go", find(t, "go.work", `replace github\.com/toolnode/toolnode/sdk-go v(\S+) =>`)},
		{"tn.h TN_VERSION", find(t, "sdk-c/include/tn.h", `#define TN_VERSION "([^"]+)"`)},
		{"tn.h TN_VERSION_MAJOR.MINOR.PATCH", find(t, "sdk-c/include/tn.h", `#define TN_VERSION_MAJOR (\d+)`) + "." +
			find(t, "sdk-c/include/tn.h", `#define TN_VERSION_MINOR (\d+)`) + "." +
			find(t, "sdk-c/include/tn.h", `#define TN_VERSION_PATCH (\d+)`)},
		{"sdk-python/pyproject.toml", find(t, "sdk-python/pyproject.toml", `(?m)^version = "([^"]+)"`)},
		{"toolnode_sdk.__version__", find(t, "sdk-python/src/toolnode_sdk/__init__.py", `(?m)^__version__ = "([^"]+)"`)},
		{"CHANGELOG.md's newest release", find(t, "CHANGELOG.md", `(?m)^## \[?(\d+\.\d+\.\d+)\]?`)},
	}
	for _, p := range places {
		if p.got != want {
			t.Errorf("%s says %q, VERSION says %q: write the release in every place docs/releasing.md lists", p.place, p.got, want)
		}
	}
}
