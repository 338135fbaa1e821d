package cli_test

import (
	"strings"
	"testing"

	"github.com/toolnode/toolnode/runtime/internal/sandbox"
	"github.com/toolnode/toolnode/runtime/internal/testkit"
)

func TestCheckReportsTheSandboxAndWhatThisMachineEnforces(t *testing.T) {
	dir := testkit.Write(t, t.TempDir(), testkit.Fake{Name: "boxed", Extra: `"sandbox": {"memory": "64MiB", "network": "none", "require": true}`})
	// The fake's tool "bad name!" fails the names step: the sandbox's steps are what count.
	_, out, _ := runCLI("check", dir)
	e := sandbox.Probe()
	want := "memory 64 MiB (" + e.Memory + "), network none (" + e.Network + ")"
	if !strings.Contains(out, "sandbox    ok   "+want) || !strings.Contains(out, "handshake  ok") {
		t.Errorf("check's output lacks %q, or the sandboxed bundle's handshake:\n%s", want, out)
	}

	t.Setenv(sandbox.WithoutVar, "network") // as on a machine without network namespaces
	code, out, _ := runCLI("check", dir)
	for _, want := range []string{"sandbox    FAIL", "the sandbox requires network, which this machine does not enforce", "verdict: FAIL (sandbox)"} {
		if !strings.Contains(out, want) {
			t.Errorf("check's output lacks %q:\n%s", want, out)
		}
	}
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
}
