// Package nodekit starts nodes for the tests of the packages above the node: in the test's
// own process (serve.Run, wired as the binary wires it, with the stdio front on pipes and
// the HTTP front on a loopback port), or as the toolnode binary in a child process over
// stdio or HTTP; and it holds what those tests do with a node once it runs: the official Go
// SDK client connected to either front, calls, lists, a hand-driven HTTP client.
//
// It imports the node and its fronts, so the node's own tests cannot use it; testkit, which
// imports neither, serves every package.
package nodekit

import (
	"context"
	"io"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnode/toolnode/runtime/internal/front"
	"github.com/toolnode/toolnode/runtime/internal/node"
	"github.com/toolnode/toolnode/runtime/internal/serve"
	"github.com/toolnode/toolnode/runtime/internal/testkit"
)

// Loopback is the address for serve.Config.HTTP that serves the HTTP front on a free
// loopback port.
const Loopback = "127.0.0.1:0"

// startWithin bounds how long a node may take to build and listen.
const startWithin = 30 * time.Second

// Node is a node running in the test's process.
type Node struct {
	// Logs is what the node has logged so far, as the binary writes it to stderr.
	Logs *testkit.SyncBuffer
	// URL is the HTTP front's endpoint, when the node serves HTTP.
	URL string
	// Stdin and Stdout are the stdio front's input and output, when the node serves stdio:
	// for a test that speaks by hand, or for Client. Closing Stdin ends the stdio front,
	// and with it the node, as at the end of the binary's stdin.
	Stdin  io.WriteCloser
	Stdout io.ReadCloser

	srv    *front.Server
	cancel context.CancelFunc
	done   chan struct{} // closed when serve.Run has returned
	err    error         // what serve.Run returned
}

// Start runs serve.Run with cfg in the test's process until the test ends, and returns once
// the node is built and its fronts listen; its bundles may still be starting, as when the
// binary starts. cfg is taken as the binary's serve command makes it, but for what Start
// fills in: the logger (unless cfg has one), the stdio front's pipes when cfg.Stdio is
// set, and the OnListening and OnServing hooks. Set cfg.HTTP to Loopback for an HTTP front.
// Tool names are shown as the catalog has them (front.NamesCanonical) unless cfg.Front.Names
// says otherwise: the tests speak of tools by their canonical names, whatever client name
// they give; the binary's default, auto, is tested on its own.
func Start(t testing.TB, cfg serve.Config) *Node {
	t.Helper()
	if cfg.Front.Names == "" {
		cfg.Front.Names = front.NamesCanonical
	}
	logger, logs := testkit.Log(t)
	if cfg.Logger == nil {
		cfg.Logger = logger
	}
	n := &Node{Logs: logs, done: make(chan struct{})}
	var stdoutW *io.PipeWriter
	if cfg.Stdio {
		var stdinR *io.PipeReader
		stdinR, n.Stdin = io.Pipe()
		n.Stdout, stdoutW = io.Pipe()
		cfg.Stdin, cfg.Stdout = stdinR, stdoutW
	}
	urls := make(chan string, 1)
	servers := make(chan *front.Server, 1)
	cfg.OnListening = func(u string) { urls <- u }
	cfg.OnServing = func(s *front.Server) { servers <- s }
	ctx, cancel := context.WithCancel(context.Background())
	n.cancel = cancel
	go func() {
		defer close(n.done)
		n.err = serve.Run(ctx, cfg)
		if stdoutW != nil {
			stdoutW.Close() // the client reads to its end
		}
	}()
	t.Cleanup(func() { n.stop(t) })
	timeout := time.After(startWithin)
	n.srv = await(t, n, timeout, servers, "built")
	if cfg.HTTP != "" {
		n.URL = await(t, n, timeout, urls, "listening on HTTP")
	}
	return n
}

// await returns what ch brings, and fails the test if the node stops first or timeout
// comes: the node was never what.
func await[T any](t testing.TB, n *Node, timeout <-chan time.Time, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-n.done:
		t.Fatalf("the node stopped before it was %s: %v", what, n.err)
	case <-timeout:
		t.Fatalf("the node was not %s within %s", what, startWithin)
	}
	var zero T
	return zero
}

// StartFakes writes the fake bundles fakes into a fresh folder and starts a node serving
// it, besides what cfg.Source names, as Start does.
func StartFakes(t testing.TB, cfg serve.Config, fakes ...testkit.Fake) *Node {
	t.Helper()
	dir := t.TempDir()
	for _, f := range fakes {
		testkit.Write(t, dir, f)
	}
	cfg.Source.Dirs = append(cfg.Source.Dirs, dir)
	return Start(t, cfg)
}

// StartMemory starts a node serving the in-memory bundles ms, besides what cfg.Source
// names, as Start does.
func StartMemory(t testing.TB, cfg serve.Config, ms ...testkit.Memory) *Node {
	t.Helper()
	cfg.Source.Bundles = append(cfg.Source.Bundles, testkit.InMemory(t, ms...)...)
	return Start(t, cfg)
}

// stop ends the node and waits for it, as the end of a test does.
func (n *Node) stop(t testing.TB) {
	if n.Stdin != nil {
		n.Stdin.Close()
	}
	n.cancel()
	select {
	case <-n.done:
	case <-time.After(startWithin):
		t.Errorf("the node did not stop within %s", startWithin)
	}
}

// Server is the node's front server, for a test that drives a front of its own over it.
func (n *Node) Server() *front.Server { return n.srv }

// Node is the node itself.
func (n *Node) Node() *node.Node { return n.srv.Node() }

// Ready waits until every bundle has had its first start (failed or not).
func (n *Node) Ready(t testing.TB) {
	t.Helper()
	select {
	case <-n.Node().Ready():
	case <-time.After(startWithin):
		t.Fatalf("the bundles did not start within %s", startWithin)
	}
}

// Done is closed once the node has stopped: its context ended, or a front failed or ended
// (the stdio front at the end of its input).
func (n *Node) Done() <-chan struct{} { return n.done }

// Stop ends the node now, as a signal ends the binary, and returns once it has stopped
// its bundles.
func (n *Node) Stop(t testing.TB) {
	t.Helper()
	n.stop(t)
}

// Stdio is the node's stdio front as a client's transport. Closing the client's session
// ends the stdio front, and with it the node, as the end of the binary's stdin does.
func (n *Node) Stdio(t testing.TB) mcp.Transport {
	t.Helper()
	if n.Stdin == nil {
		t.Fatal("the node serves no stdio front: set Stdio in its config")
	}
	return &mcp.IOTransport{Reader: n.Stdout, Writer: n.Stdin}
}

// Client connects the official Go SDK client to the node's stdio front, speaking protocol
// version (its latest when ""), until the test ends.
func (n *Node) Client(t testing.TB, version string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	return Join(t, NewClient(opts), n.Stdio(t), version)
}

// Connect connects the official Go SDK client to the Streamable HTTP front at url,
// speaking protocol version (its latest when ""), until the test ends.
func Connect(t testing.TB, url, version string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	return Join(t, NewClient(opts), &mcp.StreamableClientTransport{Endpoint: url}, version)
}

// NewClient is the official Go SDK client the tests use, named toolnode-test.
func NewClient(opts *mcp.ClientOptions) *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "toolnode-test", Version: "1"}, opts)
}

// Join connects client over transport, speaking protocol version (its latest when ""),
// until the test ends.
func Join(t testing.TB, client *mcp.Client, transport mcp.Transport, version string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), startWithin)
	defer cancel()
	s, err := client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect to the node: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// Root is the repository's root folder.
func Root(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot tell where nodekit's source is")
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "..")
}
