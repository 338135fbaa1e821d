// Package testkit is what the node's tests share: a fake bundle that a test binary runs by
// re-executing itself (so tests supervise real processes over real pipes without building
// anything), the manifests that start it, a buffer that collects a process's log while it
// writes, and waits on conditions instead of sleeps.
//
// A test package whose tests start fake bundles calls RunIfChild first in its TestMain.
// testkit imports nothing of the node but its manifest package, so that the tests of every
// package, node and front included, can use it.
package testkit

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/manifest"
)

// childEnv, set to 1, marks a test binary run as a fake bundle.
const childEnv = "TOOLNODE_FAKE_BUNDLE"

// RunIfChild serves MCP on stdin and stdout as a fake bundle and exits, when the test binary
// runs as one; otherwise it returns at once. Call it first in TestMain.
func RunIfChild() {
	if os.Getenv(childEnv) != "1" {
		return
	}
	serveFake(os.Stdin, os.Stdout)
	os.Exit(0)
}

// Fake describes a fake bundle: a bundle directory whose process is the running test
// binary, serving the tools serveFake lists.
type Fake struct {
	// Name is the bundle's name, which it also reports in its answers.
	Name string
	// Env holds settings of the fake (the FAKE_* variables serveFake reads) and any other
	// variables for the bundle's environment.
	Env map[string]string
	// Seats are the seats the manifest declares.
	Seats []string
	// Stateless makes the bundle speak MCP 2026-07-28 as well: it answers server/discover,
	// so the node speaks to it without a session.
	Stateless bool
	// Surface makes it offer a prompt, a resource, a resource template and completions
	// besides its tools.
	Surface bool
	// Extra holds more manifest members, as JSON text without braces, e.g.
	// `"timeouts": {"start": "1s"}`.
	Extra string
	// Command replaces the test binary as the bundle's command (a wrapper, say); the test
	// binary must still run in the end for the bundle to answer.
	Command []string
}

// Write puts the bundle f describes in dir/<f.Name> and returns that folder.
func Write(t testing.TB, dir string, f Fake) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{childEnv: "1", "FAKE_NAME": f.Name}
	if f.Stateless {
		env["FAKE_STATELESS"] = "1"
	}
	if f.Surface {
		env["FAKE_SURFACE"] = "1"
	}
	for k, v := range f.Env {
		env[k] = v
	}
	cmd := f.Command
	if cmd == nil {
		cmd = []string{exe}
	}
	m := map[string]any{"name": f.Name, "command": cmd, "env": env}
	if len(f.Seats) > 0 {
		m["seats"] = f.Seats
	}
	b, _ := json.Marshal(m)
	if f.Extra != "" {
		b = append(b[:len(b)-1], []byte(","+f.Extra+"}")...)
	}
	folder := filepath.Join(dir, f.Name)
	if err := os.MkdirAll(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(folder, manifest.FileName), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return folder
}

// WriteAll writes a plain fake bundle for each name, as Write with Fake{Name: name} does.
func WriteAll(t testing.TB, dir string, names ...string) {
	t.Helper()
	for _, name := range names {
		Write(t, dir, Fake{Name: name})
	}
}

// Manifests loads the manifests of the bundles named names in dir.
func Manifests(t testing.TB, dir string, names ...string) []*manifest.Manifest {
	t.Helper()
	ms := make([]*manifest.Manifest, 0, len(names))
	for _, name := range names {
		m, err := manifest.Load(filepath.Join(dir, name, manifest.FileName))
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	return ms
}

// SyncBuffer collects what a process or a logger writes while it writes it.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write implements io.Writer.
func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns everything written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Eventually calls check until it returns "" or within has passed, and then fails the test
// with check's last word: for what a test cannot be told directly, such as a process that
// exits or a file that grows.
func Eventually(t testing.TB, within time.Duration, check func() string) {
	t.Helper()
	deadline := time.Now().Add(within)
	wait := time.Millisecond
	for {
		why := check()
		if why == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %s", within, why)
		}
		time.Sleep(wait)
		wait = min(2*wait, 100*time.Millisecond)
	}
}

// RSSKiB is the resident memory of process pid, in KiB, as Linux's /proc reports it.
func RSSKiB(t testing.TB, pid int) int { return procStatusKiB(t, pid, "VmRSS:") }

// PeakRSSKiB is the most resident memory process pid has had, in KiB.
func PeakRSSKiB(t testing.TB, pid int) int { return procStatusKiB(t, pid, "VmHWM:") }

// procStatusKiB reads one KiB figure of /proc/PID/status.
func procStatusKiB(t testing.TB, pid int, field string) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field); ok {
			if f := strings.Fields(v); len(f) > 0 {
				n, err := strconv.Atoi(f[0])
				if err == nil {
					return n
				}
			}
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}
