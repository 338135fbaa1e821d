package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/reload"
	"github.com/toolnode/toolnode/runtime/internal/serve"
	"github.com/toolnode/toolnode/runtime/internal/testkit"
	"github.com/toolnode/toolnode/runtime/internal/testkit/nodekit"
)

// brokenPython writes, in a folder of its own, a bundle "hello" whose program fails as a
// Python bundle does when the SDK is not installed: a traceback on stderr, exit status 1.
// It returns the folder of bundles.
func brokenPython(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "hello")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "bundle.json"), []byte(`{"name": "hello", "command": ["./run"]}`), 0o644)
	os.WriteFile(filepath.Join(dir, "run"), []byte(`#!/bin/sh
echo 'Traceback (most recent call last):' >&2
echo '  File "server.py", line 1, in <module>' >&2
echo "ModuleNotFoundError: No module named 'toolnode_sdk'" >&2
exit 1
`), 0o755)
	return root
}

// troubleshootingBlock returns the lines of the indented block that follows after in
// docs/troubleshooting.md, trimmed.
func troubleshootingBlock(t *testing.T, after string) []string {
	t.Helper()
	doc, err := os.ReadFile("../../../docs/troubleshooting.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), after)
	if !ok {
		t.Fatalf("docs/troubleshooting.md no longer says %q", after)
	}
	var lines []string
	rest = strings.TrimPrefix(strings.TrimLeft(rest, "\n"), "<!-- run by runtime/internal/cli/failures_test.go -->\n\n")
	for _, line := range strings.Split(rest, "\n") {
		code, isCode := strings.CutPrefix(line, "    ")
		if !isCode {
			break
		}
		lines = append(lines, strings.TrimSpace(code))
	}
	if len(lines) == 0 {
		t.Fatalf("docs/troubleshooting.md has no indented block after %q", after)
	}
	return lines
}

// The outputs docs/troubleshooting.md shows for a Python bundle without its SDK are what
// check and call print for one.
func TestTroubleshootingShowsWhatCheckAndCallPrint(t *testing.T) {
	dir := filepath.Join(brokenPython(t), "hello")
	_, out, _ := runCLI("check", dir)
	for _, line := range troubleshootingBlock(t, "A Python bundle whose interpreter lacks the SDK:\n") {
		if !strings.Contains(out, line) {
			t.Errorf("check does not print docs/troubleshooting.md's %q:\n%s", line, out)
		}
	}
	_, out, errs := runCLI("call", "hello.greet", "name=Ada", "--bundles", filepath.Dir(dir))
	for _, line := range troubleshootingBlock(t, "a call to it names the bundle and its last error instead:\n") {
		if !strings.Contains(out+errs, line) {
			t.Errorf("call does not print docs/troubleshooting.md's %q:\n%s%s", line, out, errs)
		}
	}
}

func TestCheckShowsTheBundlesLastStderrLinesAndTheVerboseFlag(t *testing.T) {
	dir := filepath.Join(brokenPython(t), "hello")
	code, out, _ := runCLI("check", dir)
	for _, want := range []string{"handshake  FAIL", "the bundle's last lines on stderr:", "    Traceback (most recent call last):",
		"    ModuleNotFoundError: No module named 'toolnode_sdk'", "toolnode check -v " + dir} {
		if !strings.Contains(out, want) {
			t.Errorf("check's output lacks %q:\n%s", want, out)
		}
	}
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
}

func TestCallToAToolOfABundleThatFailedNamesTheBundleAndItsError(t *testing.T) {
	root := brokenPython(t)
	code, out, errs := runCLI("call", "hello.greet", "name=Ada", "--bundles", root)
	all := out + errs
	if code == 0 || strings.Contains(all, "unknown tool") {
		t.Errorf("exit %d, want a failure that is not \"unknown tool\":\n%s", code, all)
	}
	for _, want := range []string{`bundle "hello" failed to start`, "ModuleNotFoundError: No module named 'toolnode_sdk'"} {
		if !strings.Contains(all, want) {
			t.Errorf("call's output lacks %q:\n%s", want, all)
		}
	}
	_, _, errs = runCLI("tools", "--bundles", root)
	if !strings.Contains(errs, `bundle "hello" is not running`) || !strings.Contains(errs, "ModuleNotFoundError") {
		t.Errorf("tools says nothing of the bundle that failed:\n%s", errs)
	}
}

func TestBundlesFlagAtABundlesOwnFolderSaysWhatToPass(t *testing.T) {
	root := brokenPython(t)
	_, _, errs := runCLI("tools", "--bundles", filepath.Join(root, "hello"))
	for _, want := range []string{"is a bundle's own folder", "--bundles " + root} {
		if !strings.Contains(errs, want) {
			t.Errorf("tools --bundles at a bundle's folder does not say %q:\n%s", want, errs)
		}
	}
}

// An access file may let a client list and call some tools and not toolnode.status, which
// the tools command asks for its BUNDLE column: the list is still shown.
func TestToolsOverURLForAClientNotAllowedStatus(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "remote"})
	files := t.TempDir()
	accessFile, tokenFile := filepath.Join(files, "access.json"), filepath.Join(files, "token")
	os.WriteFile(accessFile, []byte(`{"clients": [{"name": "analyst", "token_sha256": "`+testkit.TokenSHA("analyst-token")+`", "allow": ["remote.*"]}]}`), 0o600)
	os.WriteFile(tokenFile, []byte("analyst-token\n"), 0o600)
	url := nodekit.Start(t, serve.Config{Source: reload.Source{Dirs: []string{dir}}, HTTP: nodekit.Loopback, AccessFile: accessFile}).URL

	code, out, errs := runCLI("tools", "--url", url, "--token-file", tokenFile)
	if code != 0 || !strings.Contains(out, "remote.echo") || strings.Contains(out, "toolnode.status") {
		t.Errorf("tools --url as a client allowed remote.* only: exit %d\n%s%s", code, out, errs)
	}
}

// A bundle that never answers fails when its start timeout says, not once its process has
// been stopped too (which, for one that ignores SIGTERM, takes twice the shutdown grace
// more): the failure is reported while the process is still there, and says the timeout
// the manifest set.
func TestStartTimeoutFailsWhenConfigured(t *testing.T) {
	dir := t.TempDir()
	folder := filepath.Join(dir, "mute")
	os.MkdirAll(folder, 0o755)
	os.WriteFile(filepath.Join(folder, "bundle.json"), []byte(`{"name": "mute", "command": ["./run"], "timeouts": {"start": "1s", "shutdown": "30s"}}`), 0o644)
	os.WriteFile(filepath.Join(folder, "run"), []byte("#!/bin/sh\necho $$ > pid\ntrap '' TERM\nwhile :; do sleep 1; done\n"), 0o755)
	n := nodekit.Start(t, serve.Config{Source: reload.Source{Dirs: []string{dir}}, HTTP: nodekit.Loopback})
	var lastError string
	testkit.Eventually(t, 30*time.Second, func() string {
		lastError = n.Node().Status()[0].LastError
		if lastError == "" {
			return "no failure yet"
		}
		return ""
	})
	if !strings.Contains(lastError, "no answer within the start timeout of 1s") {
		t.Errorf("last error %q, want the start timeout of 1s", lastError)
	}
	pid := testkit.PidFile(t, filepath.Join(folder, "pid"), 1)
	if !testkit.Alive(pid) {
		t.Errorf("the process that did not answer was stopped before its failure was reported")
	}
	testkit.Kill(pid)
}
