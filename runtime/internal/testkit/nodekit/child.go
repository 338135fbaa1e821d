package nodekit

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnode/toolnode/runtime/internal/testkit"
)

// Child is the toolnode binary running as a child process of the test: for what needs the
// binary as a whole (its flags, signals, its exit, its process's memory).
type Child struct {
	// Cmd is the node's process.
	Cmd *exec.Cmd
	// Logs is what the node has written to stderr so far.
	Logs *testkit.SyncBuffer
	// URL is the HTTP front's endpoint, for a node started with ChildHTTP.
	URL string
}

// Pid is the node's process id.
func (c *Child) Pid() int { return c.Cmd.Process.Pid }

// checkRace fails the test if the race detector found a race in the node.
func (c *Child) checkRace(t testing.TB) {
	if strings.Contains(c.Logs.String(), "DATA RACE") {
		t.Error("the race detector found a data race in the node")
	}
	if t.Failed() {
		t.Logf("node log:\n%s", c.Logs)
	}
}

// ChildStdio starts cmd, a `toolnode serve` that serves stdio, and connects the official Go
// SDK client to it, speaking protocol version (its latest when ""). The client's transport
// owns the process: closing the session closes the node's stdin, and it is closed when the
// test ends.
func ChildStdio(t testing.TB, cmd *exec.Cmd, version string, opts *mcp.ClientOptions) (*mcp.ClientSession, *Child) {
	t.Helper()
	c := &Child{Cmd: cmd, Logs: &testkit.SyncBuffer{}}
	cmd.Stderr = c.Logs
	t.Cleanup(func() { c.checkRace(t) }) // after the session's cleanup has stopped the node
	return Join(t, NewClient(opts), &mcp.CommandTransport{Command: cmd}, version), c
}

// frontURL is the URL of the HTTP front in the node's log line.
var frontURL = regexp.MustCompile(`url=(http://\S+/mcp)|"url":"(http://[^"]+/mcp)"`)

// listening finds the URL of the HTTP front in the line the node logs for it, as text or
// as JSON (--log-json).
func listening(line string) (string, bool) {
	m := frontURL.FindStringSubmatch(line)
	if m == nil || !strings.Contains(line, "HTTP front listening") {
		return "", false
	}
	return m[1] + m[2], true
}

// ChildHTTP starts cmd, a `toolnode serve --http 127.0.0.1:0`, and returns once the node has
// logged where its HTTP front listens. When the test ends the node is interrupted and
// waited for.
func ChildHTTP(t testing.TB, cmd *exec.Cmd) *Child {
	t.Helper()
	c := &Child{Cmd: cmd, Logs: &testkit.SyncBuffer{}}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	urls := make(chan string, 1)
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			fmt.Fprintln(c.Logs, sc.Text())
			if u, ok := listening(sc.Text()); ok {
				select {
				case urls <- u:
				default:
				}
			}
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		<-read // stderr is read to its end before Wait
		cmd.Wait()
		c.checkRace(t)
	})
	select {
	case c.URL = <-urls:
	case <-read:
		t.Fatal("the node exited before its HTTP front listened")
	case <-time.After(startWithin):
		t.Fatalf("the node did not report its HTTP address within %s", startWithin)
	}
	return c
}
