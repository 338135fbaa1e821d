// Package testkit is what the tests of every package share: a fake bundle that a test
// binary runs by re-executing itself (so tests supervise real processes over real pipes
// without building anything), the manifests that start it, a logger and a buffer that
// collect a node's log and signal each line, an inbox for what a client's handlers receive,
// a session that records what a node sends its client, waits on conditions for what
// nothing signals, and what /proc tells of processes.
//
// A test package whose tests start fake bundles calls RunIfChild first in its TestMain.
// testkit imports nothing of the node but its manifest package, so that the tests of every
// package, node and front included, can use it; starting a node is nodekit's, which only
// the packages above the node can use.
package testkit

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"go.uber.org/goleak"

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
	// Prelude, when set, makes the bundle's command a shell script in its folder, "run",
	// that runs these shell lines there and then the fake bundle: a bundle that starts a
	// daemon, or crashes while a file is there.
	Prelude string // Raw, when not nil, makes it a misbehaving peer that speaks no MCP of its own: to the
	// n-th line it reads (requests and notifications alike) it answers with Raw[n] written
	// as it is, "$ID" replaced with that line's id (null when it has none); "" answers
	// nothing, and past the last line it answers nothing more. A line with newlines in it
	// is several lines of output.
	Raw []string
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
	if f.Raw != nil {
		raw, _ := json.Marshal(f.Raw)
		env["FAKE_RAW"] = string(raw)
	}
	for k, v := range f.Env {
		env[k] = v
	}
	cmd := f.Command
	switch {
	case f.Prelude != "":
		cmd = []string{"./run"}
	case cmd == nil:
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
	if f.Prelude != "" {
		script := "#!/bin/sh\n" + f.Prelude + "\nexec " + exe + "\n"
		if err := os.WriteFile(filepath.Join(folder, "run"), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
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

// SyncBuffer collects what a process or a logger writes while it writes it, and tells
// those waiting for a line when more comes.
type SyncBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	written signal
}

// Write implements io.Writer.
func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.written.wake()
	return s.b.Write(p)
}

// String returns everything written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// WaitFor waits until what was written holds text, and fails the test if it does not
// within the time given: for what a node says once it has done something.
func (s *SyncBuffer) WaitFor(t testing.TB, within time.Duration, text string) {
	t.Helper()
	// Each wake looks only at what came since the last look, and the text's length before
	// it: a chatty process's log is not searched whole for every line it writes.
	want, from := []byte(text), 0
	if !waitChange(within, &s.mu, &s.written, func() bool {
		seen := s.b.Bytes()
		if bytes.Contains(seen[from:], want) {
			return true
		}
		from = max(0, len(seen)-len(want)+1)
		return false
	}) {
		t.Fatalf("after %s the log does not say %q", within, text)
	}
}

// signal wakes whoever waits for the next change of what a mutex guards.
type signal struct{ next chan struct{} }

// wake tells those waiting that a change came; call it holding the mutex.
func (s *signal) wake() {
	if s.next != nil {
		close(s.next)
		s.next = nil
	}
}

// waitChange waits until done, called with mu held, is true, woken by sig at each change;
// it reports whether that happened within the time given.
func waitChange(within time.Duration, mu *sync.Mutex, sig *signal, done func() bool) bool {
	timeout := time.After(within)
	for {
		mu.Lock()
		if done() {
			mu.Unlock()
			return true
		}
		if sig.next == nil {
			sig.next = make(chan struct{})
		}
		next := sig.next
		mu.Unlock()
		select {
		case <-next:
		case <-timeout:
			return false
		}
	}
}

// Eventually calls check until it returns "" or within has passed, and then fails the test
// with check's last word: for what a test cannot be told directly, such as a process that
// exits or a file that grows.
func Eventually(t testing.TB, within time.Duration, check func() string) {
	t.Helper()
	var why string
	if !Until(within, func() bool { why = check(); return why == "" }) {
		t.Fatalf("after %s: %s", within, why)
	}
}

// Until calls cond, more and more rarely, until it holds or within has passed, and reports
// whether it held: for a test that acts either way.
func Until(within time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(within)
	wait := time.Millisecond
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(wait)
		wait = min(2*wait, 100*time.Millisecond)
	}
	return true
}

// Log returns a logger that writes as the node's does (hclog, named toolnode, at info),
// and what it wrote, which the test's log shows if the test fails.
func Log(t testing.TB) (hclog.Logger, *SyncBuffer) {
	t.Helper()
	logs := &SyncBuffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("node log:\n%s", logs)
		}
	})
	return hclog.New(&hclog.LoggerOptions{Name: "toolnode", Level: hclog.Info, Output: logs}), logs
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

// Inbox collects what a client's handlers receive on goroutines of their own, and tells a
// test waiting for it when more comes.
type Inbox struct {
	mu    sync.Mutex
	items []string
	added signal
}

// Add puts one item in.
func (b *Inbox) Add(item string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.items = append(b.items, item)
	b.added.wake()
}

// Items returns what has come so far, in order.
func (b *Inbox) Items() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.items)
}

// Wait waits until the inbox holds n items for which match is true (nil matches every
// item), and fails the test if they do not come within the time given.
func (b *Inbox) Wait(t testing.TB, within time.Duration, n int, match func(item string) bool) {
	t.Helper()
	count := func() int {
		got := 0
		for _, item := range b.items {
			if match == nil || match(item) {
				got++
			}
		}
		return got
	}
	if !waitChange(within, &b.mu, &b.added, func() bool { return count() >= n }) {
		t.Fatalf("after %s the inbox holds fewer than the %d items awaited: %q", within, n, b.Items())
	}
}

// Session records what a node sends one client, as node.Client, and tells a test waiting
// for a message when one comes; it refuses what the node asks the client.
type Session struct {
	mu   sync.Mutex
	got  []string // method and params of each notification, in order
	sent signal
}

// Notify records a notification.
func (s *Session) Notify(_ context.Context, method string, params any) error {
	b, _ := json.Marshal(params)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, method+" "+string(b))
	s.sent.wake()
	return nil
}

// Request refuses: this client answers nothing the node asks.
func (s *Session) Request(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return nil, errors.New("this client answers no requests")
}

// Messages are what the node sent, one "method params" line each.
func (s *Session) Messages() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.got, "\n")
}

// WaitFor waits until the node has sent a message holding text, and fails the test if it
// does not within the time given.
func (s *Session) WaitFor(t testing.TB, within time.Duration, text string) {
	t.Helper()
	if !waitChange(within, &s.mu, &s.sent, func() bool { return strings.Contains(strings.Join(s.got, "\n"), text) }) {
		t.Fatalf("after %s the session has not been sent %q; it got:\n%s", within, text, s.Messages())
	}
}

// KeptAliveConns are the goleak options that pass over the goroutines of HTTP connections
// the clients of a test keep alive, which their transports close in their own time.
func KeptAliveConns() []goleak.Option {
	return []goleak.Option{
		goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
	}
}

// TokenSHA is the token_sha256 of token in an access file.
func TokenSHA(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}
