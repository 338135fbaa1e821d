package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnode/toolnode/runtime/internal/reload"
	"github.com/toolnode/toolnode/runtime/internal/serve"
	"github.com/toolnode/toolnode/runtime/internal/testkit"
	"github.com/toolnode/toolnode/runtime/internal/testkit/nodekit"
)

// described is a fake bundle whose tools all say desc.
func described(name, desc string) testkit.Fake {
	return testkit.Fake{Name: name, Env: map[string]string{"FAKE_DESCRIPTION": desc}}
}

// listed reports whether the client is shown the tool name.
func listed(t *testing.T, s *mcp.ClientSession, name string) bool {
	_, ok := nodekit.Tools(t, s)[name]
	return ok
}

// statusText is the text toolnode.status answers.
func statusText(t *testing.T, s *mcp.ClientSession) string {
	t.Helper()
	text, _ := nodekit.CallText(t, s, "toolnode.status", nil)
	return text
}

// The rug pull: a bundle whose tools were reviewed and pinned changes a description while
// the node serves. The changed tools are held back (not listed, not callable), the change
// is logged line by line and shown by toolnode.status and toolnode pin --diff, a new
// bundle's tools are held back too, and accepting one serves it without a restart.
func TestAToolWhoseDescriptionChangesAfterPinningIsHeldBackUntilAccepted(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, dir, described("alpha", "reads the weather"))
	lock := filepath.Join(t.TempDir(), "toolnode.lock")
	if code, out, errs := runCLI("pin", "--bundles", dir, "--lock", lock); code != 0 || !strings.Contains(out, "pinned") {
		t.Fatalf("toolnode pin: exit %d, %s%s", code, out, errs)
	}
	n := nodekit.Start(t, serve.Config{Source: reload.Source{Dirs: []string{dir}}, Watch: true, LockFile: lock, Stdio: true})
	// A client of sessions, told when the list changes: one of 2026-07-28 keeps a list
	// for the ttlMs it was given.
	s := n.Client(t, "2025-11-25", nil)
	n.Ready(t)
	if !listed(t, s, "alpha.echo") {
		t.Fatalf("alpha.echo, pinned as served, is not listed: %v", nodekit.Names(nodekit.Tools(t, s)))
	}

	testkit.Write(t, dir, described("alpha", "deletes the weather"))
	testkit.Write(t, dir, described("beta", "a newcomer"))
	n.Logs.WaitFor(t, 30*time.Second, `held back by the lock file: tool "alpha.echo" of bundle "alpha" changed since it was pinned`)
	n.Logs.WaitFor(t, 30*time.Second, `tool "beta.echo" of bundle "beta" is not in the lock file`)
	for _, line := range []string{`-   "description": "reads the weather",`, `+   "description": "deletes the weather",`} {
		if !strings.Contains(n.Logs.String(), line) {
			t.Errorf("the log does not show the change line %q:\n%s", line, n.Logs)
		}
	}
	testkit.Eventually(t, 30*time.Second, func() string {
		if listed(t, s, "alpha.echo") || listed(t, s, "beta.echo") {
			return "alpha.echo or beta.echo still listed"
		}
		return ""
	})
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "alpha.echo", Arguments: map[string]any{"text": "x"}})
	if err == nil || !strings.Contains(err.Error(), "held back") {
		t.Errorf("calling held alpha.echo: %v, %+v; want an error saying it is held back", err, res)
	}
	if st := statusText(t, s); !strings.Contains(st, `held back: tool "alpha.echo"`) || !strings.Contains(st, `held back: tool "beta.echo"`) {
		t.Errorf("toolnode.status does not show the held tools:\n%s", st)
	}
	code, out, _ := runCLI("pin", "--bundles", dir, "--lock", lock, "--diff")
	if code != 1 || !strings.Contains(out, `+   "description": "deletes the weather",`) || !strings.Contains(out, `"beta.echo"`) {
		t.Errorf("toolnode pin --diff: exit %d, want 1 and the change:\n%s", code, out)
	}

	if code, out, errs := runCLI("pin", "--bundles", dir, "--lock", lock, "--accept", "alpha.*"); code != 0 || !strings.Contains(out, "pinned alpha.echo") {
		t.Fatalf("toolnode pin --accept alpha.*: exit %d, %s%s", code, out, errs)
	}
	testkit.Eventually(t, 30*time.Second, func() string {
		if !listed(t, s, "alpha.echo") {
			return "alpha.echo is not served after it was accepted"
		}
		return ""
	})
	if text, isErr := nodekit.CallText(t, s, "alpha.echo", map[string]any{"text": "hi"}); isErr || !strings.Contains(text, "hi") {
		t.Errorf("accepted alpha.echo answers %q (error %v)", text, isErr)
	}
	if listed(t, s, "beta.echo") {
		t.Error("beta.echo was served though only alpha.* was accepted")
	}
}

// A lock file naming a tool no bundle serves (its bundle was removed, or renamed the tool)
// is reported: in the log, in toolnode.status, and by toolnode pin --diff.
func TestALockNamingAToolNoBundleServesIsReported(t *testing.T) {
	dir := t.TempDir()
	testkit.WriteAll(t, dir, "alpha", "gone")
	lock := filepath.Join(t.TempDir(), "toolnode.lock")
	if code, out, errs := runCLI("pin", "--bundles", dir, "--lock", lock); code != 0 {
		t.Fatalf("toolnode pin: exit %d, %s%s", code, out, errs)
	}
	if err := os.RemoveAll(filepath.Join(dir, "gone")); err != nil {
		t.Fatal(err)
	}
	n := nodekit.Start(t, serve.Config{Source: reload.Source{Dirs: []string{dir}}, LockFile: lock, Stdio: true})
	s := n.Client(t, "", nil)
	n.Ready(t)
	n.Logs.WaitFor(t, 30*time.Second, `the lock file pins a tool no bundle serves: tool=gone.echo`)
	if st := statusText(t, s); !strings.Contains(st, `pinned but not served: tool "gone.echo"`) {
		t.Errorf("toolnode.status does not report gone.echo:\n%s", st)
	}
	if !listed(t, s, "alpha.echo") {
		t.Error("alpha.echo, pinned as served, is not listed")
	}
	code, out, _ := runCLI("pin", "--bundles", dir, "--lock", lock, "--diff")
	if code != 1 || !strings.Contains(out, `pinned but not served: tool "gone.echo"`) {
		t.Errorf("toolnode pin --diff: exit %d, want 1 naming gone.echo:\n%s", code, out)
	}
}

// Without --lock every definition is served as it comes, and a served definition that
// changes is logged with how it changed.
func TestWithoutALockAChangedDefinitionIsServedAndLogged(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, dir, described("alpha", "reads the weather"))
	n := nodekit.Start(t, serve.Config{Source: reload.Source{Dirs: []string{dir}}, Watch: true, Stdio: true})
	s := n.Client(t, "2025-11-25", nil)
	n.Ready(t)
	testkit.Write(t, dir, described("alpha", "deletes the weather"))
	n.Logs.WaitFor(t, 30*time.Second, `a served tool definition changed: tool=alpha.echo bundle=alpha`)
	if !strings.Contains(n.Logs.String(), `+   "description": "deletes the weather",`) {
		t.Errorf("the log does not show the new description:\n%s", n.Logs)
	}
	if tool := nodekit.Tools(t, s)["alpha.echo"]; tool == nil || tool.Description != "deletes the weather" {
		t.Errorf("alpha.echo is listed as %+v; want the new description", tool)
	}
}
