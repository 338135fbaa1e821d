package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolnode/toolnode/runtime/internal/testkit"
)

// --client names a client of the access file: a name the file does not hold stops the
// node at start, naming the ones it has, rather than serving a client that may do nothing.
func TestAnUnknownStdioClientIsRefused(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "alpha"})
	accessFile := filepath.Join(t.TempDir(), "access.json")
	os.WriteFile(accessFile, []byte(`{"clients": [{"name": "desk", "allow": ["*"]}]}`), 0o600)
	// The binary, not cli.Main in this process: serving stdio alone, serve sets the
	// process's GOMAXPROCS before it finds the client unknown.
	out, err := toolnode(t, "serve", "--bundles", dir, "--access", accessFile, "--client", "dsek").CombinedOutput()
	if err == nil || !strings.Contains(string(out), `--client dsek`) || !strings.Contains(string(out), "desk") {
		t.Errorf("serve with an unknown --client: %v, output %q; want a failure naming it and the file's clients", err, out)
	}
}
