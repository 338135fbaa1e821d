package cli_test

import (
	"os/exec"
	"strings"
	"testing"
)

// `make run` builds and installs only what running needs: none of the tests' peers.
func TestMakeRunInstallsNoTestPeer(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("not tried: make is not installed")
	}
	cmd := exec.Command("make", "-n", "-B", "run")
	cmd.Dir = "../../.."
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make -n -B run: %v\n%s", err, out)
	}
	for _, peer := range []string{"prometheus", "nats-server", "valgrind", "npm install", "mcp==", "hydra", "testdata/conformance"} {
		if strings.Contains(string(out), peer) {
			t.Errorf("make run would install or build %s:\n%s", peer, out)
		}
	}
}
