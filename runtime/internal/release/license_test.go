package release

import (
	"strings"
	"testing"
)

// Each SDK is published on its own (a Go module, a Python package, a C library): each
// carries the checkout's LICENSE, word for word, and the Python package's metadata names it.
func TestEachSDKCarriesTheLicense(t *testing.T) {
	license := readRoot(t, "LICENSE")
	if !strings.HasPrefix(license, "MIT License\n") {
		t.Fatalf("LICENSE is not the MIT License the README names:\n%.200s", license)
	}
	for _, sdk := range []string{"sdk-go", "sdk-c", "sdk-python"} {
		if readRoot(t, sdk+"/LICENSE") != license {
			t.Errorf("%s/LICENSE differs from LICENSE", sdk)
		}
	}
	if got := find(t, "sdk-python/pyproject.toml", `(?m)^license = "([^"]*)"$`); got != "MIT" {
		t.Errorf("sdk-python/pyproject.toml: license %q, want MIT", got)
	}
	if got := find(t, "sdk-python/pyproject.toml", `(?m)^license-files = \["([^"]*)"\]$`); got != "LICENSE" {
		t.Errorf("sdk-python/pyproject.toml: license-files %q, want LICENSE", got)
	}
}
