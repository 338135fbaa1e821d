package sandbox_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/proc"
	"github.com/toolnode/toolnode/runtime/internal/sandbox"
	"github.com/toolnode/toolnode/runtime/internal/testkit"
)

// python returns python3's path, or skips.
func python(t *testing.T) string {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed: the test's programs are Python")
	}
	return py
}

// need skips unless this machine enforces what mech names (non-empty).
func need(t *testing.T, setting, mech string) {
	t.Helper()
	if mech == "" {
		t.Skipf("this machine does not enforce %s (%+v)", setting, sandbox.Probe())
	}
}

// started runs prog with args in dir under p through package proc, as a bundle is run, and
// returns its stdout once it exited, and the process.
func started(t *testing.T, p sandbox.Policy, dir, prog string, args ...string) (string, *proc.Process) {
	t.Helper()
	pr, err := proc.Start(proc.Config{Path: prog, Args: args, Dir: dir, Sandbox: &p,
		Env: []string{"PATH=" + os.Getenv("PATH"), "TMPDIR=/tmp"}, Grace: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pr.Stop(context.Background()) })
	out, _ := io.ReadAll(pr.Stdout())
	select {
	case <-pr.Done():
	case <-time.After(time.Minute):
		t.Fatalf("%s did not exit; stdout %q", prog, out)
	}
	return string(out), pr
}

func TestAProcessAllocatingPastItsMemoryBoundIsKilledAndTheCauseSaysSo(t *testing.T) {
	py := python(t)
	need(t, "memory with a cgroup", strings.TrimPrefix(sandbox.Probe().Memory, "rlimit (address space)"))
	out, pr := started(t, sandbox.Policy{Memory: 64 << 20}, t.TempDir(), py, "-c",
		"b = bytearray(200 * 1024 * 1024)\nfor i in range(0, len(b), 4096): b[i] = 1\nprint('allocated')")
	if strings.Contains(out, "allocated") {
		t.Fatalf("200 MB were allocated under a 64 MiB bound")
	}
	if got, want := pr.Cause(), "killed at its memory bound of 64 MiB"; got != want {
		t.Errorf("cause %q, want %q (exit %s, stderr %q)", got, want, pr.ExitStatus(), pr.StderrTail())
	}
	if !strings.HasPrefix(pr.ExitStatus(), "killed at its memory bound of 64 MiB, signal: killed") {
		t.Errorf("exit status %q", pr.ExitStatus())
	}
}

func TestWithoutCgroupsTheMemoryBoundIsAnAddressSpaceRlimitTheProgramMeets(t *testing.T) {
	py := python(t)
	t.Setenv(sandbox.WithoutVar, "cgroup") // as on a machine without cgroups (macOS too)
	out, pr := started(t, sandbox.Policy{Memory: 64 << 20}, t.TempDir(), py, "-c",
		"try:\n    b = bytearray(200 * 1024 * 1024)\n    print('allocated')\nexcept MemoryError:\n    print('refused')")
	if !strings.Contains(out, "refused") || pr.Cause() != "" {
		t.Errorf("out %q, cause %q, exit %s, stderr %q", out, pr.Cause(), pr.ExitStatus(), pr.StderrTail())
	}
}

func TestAProcessWithinItsMemoryBoundRunsAndNamesNoCause(t *testing.T) {
	py := python(t)
	out, pr := started(t, sandbox.Policy{Memory: 256 << 20}, t.TempDir(), py, "-c",
		"b = bytearray(20 * 1024 * 1024)\nprint('allocated')")
	if !strings.Contains(out, "allocated") || pr.Cause() != "" {
		t.Errorf("out %q, cause %q, exit %s, stderr %q", out, pr.Cause(), pr.ExitStatus(), pr.StderrTail())
	}
}

func TestNetworkNoneCannotReachALoopbackPortOfTheHostButHasItsOwnLoopback(t *testing.T) {
	py := python(t)
	need(t, "network none with a namespace", strings.TrimSuffix(sandbox.Probe().Network, "landlock (TCP only)"))
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	prog := fmt.Sprintf(`import socket
try:
    socket.create_connection(("127.0.0.1", %d), timeout=5)
    print("host reached")
except OSError as e:
    print("host refused:", e)
own = socket.socket(); own.bind(("127.0.0.1", 0)); own.listen()
socket.create_connection(own.getsockname(), timeout=5)
print("own loopback works")
`, port)
	out, pr := started(t, sandbox.Policy{Network: "none"}, t.TempDir(), py, "-c", prog)
	if !strings.Contains(out, "host refused") || !strings.Contains(out, "own loopback works") {
		t.Errorf("out %q, exit %s, stderr %q", out, pr.ExitStatus(), pr.StderrTail())
	}
	// And without the sandbox the same program reaches the port: the test can fail.
	out, _ = started(t, sandbox.Policy{}, t.TempDir(), py, "-c", prog)
	if !strings.Contains(out, "host reached") {
		t.Errorf("without a sandbox: %q", out)
	}
}

func TestFilesConfinedToItsDirectoryCannotReadElsewhereNorWriteOutsideItsPaths(t *testing.T) {
	need(t, "read and write paths", sandbox.Probe().Paths)
	dir, elsewhere := t.TempDir(), t.TempDir()
	secret := filepath.Join(elsewhere, "secret")
	if err := os.WriteFile(secret, []byte("key"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "state"), 0o755); err != nil {
		t.Fatal(err)
	}
	script := `cat "$1" && echo read-secret
echo x > "$2/escaped" && echo wrote-outside
echo x > state/kept && echo wrote-state
echo x > own && echo wrote-dir
echo x > "$TMPDIR/t" && echo wrote-tmp
cat bundle.json >/dev/null && echo read-own
cat /proc/$3/environ >/dev/null && echo read-node-environ`
	if err := os.WriteFile(filepath.Join(dir, "bundle.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, pr := started(t, sandbox.Policy{Read: []string{}, Write: []string{"state"}}, dir, "/bin/sh", "-c", script, "sh", secret, elsewhere, strconv.Itoa(os.Getpid()))
	for _, want := range []string{"wrote-state", "wrote-tmp", "read-own"} {
		if !strings.Contains(out, want) {
			t.Errorf("%s missing: out %q, stderr %q", want, out, pr.StderrTail())
		}
	}
	for _, denied := range []string{"read-secret", "wrote-outside", "wrote-dir", "read-node-environ"} {
		if strings.Contains(out, denied) {
			t.Errorf("%s: the sandbox let it through (out %q)", denied, out)
		}
	}
	if _, err := os.Stat(filepath.Join(elsewhere, "escaped")); err == nil {
		t.Error("a file was written outside the bundle's paths")
	}
}

func TestAForkBombStopsAtItsPidsBound(t *testing.T) {
	py := python(t)
	need(t, "pids", sandbox.Probe().Pids)
	prog := `import os, time
made = 0
for _ in range(200):
    try:
        if os.fork() == 0:
            os.closerange(0, 3)
            time.sleep(30)
            os._exit(0)
        made += 1
    except OSError:
        break
print("made", made, flush=True)
`
	out, pr := started(t, sandbox.Policy{Pids: 20}, t.TempDir(), py, "-c", prog)
	var made int
	if _, err := fmt.Sscanf(strings.TrimSpace(out), "made %d", &made); err != nil {
		t.Fatalf("out %q, exit %s, stderr %q", out, pr.ExitStatus(), pr.StderrTail())
	}
	if made >= 20 || made == 0 {
		t.Errorf("made %d processes under a bound of 20", made)
	}
	if cause := pr.Cause(); !strings.Contains(cause, "forks at its pids bound of 20") {
		t.Errorf("cause %q", cause)
	}
}

// escape double-forks a grandchild into a session of its own, writing its pid to "pid".
const escape = `env -u ` + proc.TagVar + ` setsid sh -c 'sleep 300 </dev/null >/dev/null 2>&1 & echo $! > pid' </dev/null >/dev/null 2>&1; exec cat`

func TestASetsidGrandchildEndsWithItsSandboxedProcess(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("setsid(1) is not installed")
	}
	need(t, "pids", sandbox.Probe().Pids)
	dir := t.TempDir()
	p := sandbox.Policy{Pids: 50, Memory: 64 << 20, Write: []string{"."}}
	pr, err := proc.Start(proc.Config{Path: "/bin/sh", Args: []string{"-c", escape}, Dir: dir, Sandbox: &p,
		Env: []string{"PATH=" + os.Getenv("PATH")}, Grace: 300 * time.Millisecond, TrackEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	grandchild := testkit.PidFile(t, filepath.Join(dir, "pid"), 1)
	t.Cleanup(func() { _ = testkit.Kill(grandchild) })
	if err := pr.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !testkit.Exited(grandchild, 5*time.Second) {
		t.Errorf("the setsid grandchild %d outlived its sandboxed process", grandchild)
	}
}

func TestARequiredSettingThisMachineLacksRefusesTheStart(t *testing.T) {
	t.Setenv(sandbox.WithoutVar, "cpu") // as on a machine without a cpu controller
	_, err := proc.Start(proc.Config{Path: "/bin/true", Sandbox: &sandbox.Policy{CPU: 1, Require: true}})
	if err == nil || !strings.Contains(err.Error(), "requires cpu") {
		t.Errorf("got %v", err)
	}
}

func TestCommandStartsAProgramUnderAPolicy(t *testing.T) {
	need(t, "memory with a cgroup", strings.TrimPrefix(sandbox.Probe().Memory, "rlimit (address space)"))
	cmd, c, err := sandbox.Command(sandbox.Policy{Memory: 32 << 20, Network: "none", Read: []string{}}, "/bin/sh", "-c", "cat /etc/hostname >/dev/null && echo read-etc; ls \"$HOME\" >/dev/null 2>&1 && echo read-home; exec cat /proc/self/net/dev")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !strings.Contains(string(out), "read-etc") || !strings.Contains(string(out), " lo:") || strings.Count(string(out), ":") != 1 {
		t.Errorf("interfaces besides lo, or none: %q", out)
	}
	if strings.Contains(string(out), "read-home") && os.Getenv("HOME") != "" {
		t.Errorf("read $HOME: %q", out)
	}
}
