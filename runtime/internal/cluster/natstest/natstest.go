// Package natstest runs a real nats-server for tests.
package natstest

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/testkit"
)

// Server is a nats-server run by Start.
type Server struct {
	// URL is where clients connect: nats://127.0.0.1:PORT.
	URL  string
	cmd  *exec.Cmd
	conf string
	logs *testkit.SyncBuffer
}

// Start runs nats-server on a free loopback port until the test ends, with the
// configuration lines conf (e.g. "max_payload: 65536"), and returns it. The test is skipped,
// saying why, when nats-server is not installed.
func Start(t testing.TB, conf ...string) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, port, _ := net.SplitHostPort(addr)
	file := filepath.Join(t.TempDir(), "nats.conf")
	var b bytes.Buffer
	fmt.Fprintf(&b, "listen: 127.0.0.1:%s\n", port)
	for _, line := range conf {
		b.WriteString(line + "\n")
	}
	if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	s := &Server{URL: "nats://" + addr, conf: file, logs: &testkit.SyncBuffer{}}
	s.Restart(t)
	t.Cleanup(func() {
		s.Stop()
		if t.Failed() {
			t.Logf("nats-server log:\n%s", s.logs)
		}
	})
	return s
}

// Restart starts the server again after Stop, on the same port.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	bin, err := Binary()
	if err != nil {
		t.Skip("nats-server is not installed (make installs Debian's nats-server): the cluster tests need a real one")
	}
	s.cmd = exec.Command(bin, "-c", s.conf)
	s.cmd.Stdout, s.cmd.Stderr = s.logs, s.logs
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addr := s.URL[len("nats://"):]
	for deadline := time.Now().Add(10 * time.Second); ; {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("nats-server did not listen on %s:\n%s", addr, s.logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Binary finds nats-server: on PATH, or where Debian puts it (/usr/sbin, which a user's
// PATH often leaves out).
func Binary() (string, error) {
	bin, err := exec.LookPath("nats-server")
	if err == nil {
		return bin, nil
	}
	const debian = "/usr/sbin/nats-server"
	if _, statErr := os.Stat(debian); statErr == nil {
		return debian, nil
	}
	return "", err
}

// Stop kills the server. Safe to call when it is stopped.
func (s *Server) Stop() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
		s.cmd = nil
	}
}
