package stdiofront_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/toolnode/toolnode/runtime/internal/front"
	"github.com/toolnode/toolnode/runtime/internal/node"
	"github.com/toolnode/toolnode/runtime/internal/reload"
	"github.com/toolnode/toolnode/runtime/internal/serve"
	"github.com/toolnode/toolnode/runtime/internal/testkit"
	"github.com/toolnode/toolnode/runtime/internal/testkit/nodekit"
)

// The stdio front as clients meet it: the official Go SDK client, and lines written by
// hand, to a node in process whose stdin and stdout are pipes.

func TestMain(m *testing.M) {
	testkit.RunIfChild()
	goleak.VerifyTestMain(m)
}

// stdioNode serves the bundles of dir over the stdio front.
func stdioNode(t *testing.T, dir string) *nodekit.Node {
	t.Helper()
	return nodekit.Start(t, serve.Config{Source: reload.Source{Dirs: []string{dir}}, Stdio: true})
}

// A 2026 client over stdio lists and calls the tools of each example bundle.
func TestA2026ClientOverStdio(t *testing.T) {
	s := stdioNode(t, nodekit.Examples(t, "go", "c", "python")).Client(t, "2026-07-28", nil)
	if v := s.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("the client speaks %s", v)
	}
	tools := nodekit.Tools(t, s)
	for _, name := range []string{"go.greet", "c.greet", "python.greet"} {
		if tools[name] == nil {
			t.Fatalf("%s not listed; have %v", name, nodekit.Names(tools))
		}
		if got, isErr := nodekit.CallText(t, s, name, map[string]any{"name": "Ada"}); got != "Hello, Ada!" || isErr {
			t.Errorf("%s answered %q", name, got)
		}
	}
}

// Malformed client messages get the JSON-RPC error the spec names, with their id, and never
// reach the bundle; the session goes on.
func TestMalformedClientMessagesNeverReachTheBundle(t *testing.T) {
	dir := t.TempDir()
	record := filepath.Join(t.TempDir(), "received")
	testkit.Write(t, dir, testkit.Fake{Name: "rec", Env: map[string]string{"FAKE_RECORD": record}})
	n := stdioNode(t, dir)
	out := bufio.NewScanner(n.Stdout)
	out.Buffer(nil, 1<<20)
	send := func(line string) map[string]any {
		t.Helper()
		if _, err := io.WriteString(n.Stdin, line+"\n"); err != nil {
			t.Fatal(err)
		}
		if !out.Scan() {
			t.Fatalf("no answer to %.80s", line)
		}
		var m map[string]any
		if err := json.Unmarshal(out.Bytes(), &m); err != nil {
			t.Fatalf("answer not JSON: %s", out.Bytes())
		}
		return m
	}
	send(initLine)
	io.WriteString(n.Stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	deep := strings.Repeat(`{"a":`, 5000) + "1" + strings.Repeat("}", 5000)
	cases := []struct {
		name, line string
		id         any
		code       float64
	}{
		{"invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"rec.echo\",\"arguments\":{\"text\":\"MARK1\xff\"}}}", 1.0, -32700},
		{"lone surrogate", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"rec.echo","arguments":{"text":"MARK2\ud800"}}}`, 2.0, -32700},
		{"nested 5000 deep", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"rec.echo","arguments":{"text":"MARK3","x":` + deep + `}}}`, 3.0, -32600},
		{"two _meta members", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"_meta":{"progressToken":"a"},"name":"rec.echo","arguments":{"text":"MARK4"},"_meta":{"progressToken":"b"}}}`, 4.0, -32600},
		{"two names", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"rec.echo","name":"rec.env","arguments":{"text":"MARK5"}}}`, 5.0, -32600},
		{"not JSON", `MARK6 is not JSON`, nil, -32700},
		{"fractional id", `{"jsonrpc":"2.0","id":6.5,"method":"tools/call","params":{"name":"rec.echo","arguments":{"text":"MARK7"}}}`, nil, -32600},
	}
	for _, c := range cases {
		m := send(c.line)
		e, _ := m["error"].(map[string]any)
		if e == nil || e["code"] != c.code || m["id"] != c.id {
			t.Errorf("%s: answered %v, want error %v for id %v", c.name, m, c.code, c.id)
		}
	}
	if m := send(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"rec.echo","arguments":{"text":"fine"}}}`); m["result"] == nil {
		t.Fatalf("the session did not go on: %v", m)
	}
	got, _ := os.ReadFile(record)
	for i := 1; i <= 7; i++ {
		if strings.Contains(string(got), fmt.Sprintf("MARK%d", i)) {
			t.Errorf("MARK%d reached the bundle", i)
		}
	}
	if !strings.Contains(string(got), "fine") {
		t.Error("the bundle's record does not work: the good call is missing")
	}
}

const initLine = `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// A stdio client that stops reading its answers: the node holds what it owes the client up
// to the bound, then ends the session; no healthy bundle is killed meanwhile.
func TestAStdioClientThatNeverReadsKillsNoBundle(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "big"})
	n := nodekit.Start(t, serve.Config{Source: reload.Source{Dirs: []string{dir}}, Stdio: true,
		// Pings every 300ms, each given 2s: the 40 MB of answers ahead of a ping's
		// answer take a while to pass on a loaded machine, but a node that stopped reading
		// its bundle for the client's sake would miss one.
		Node:  node.Config{Supervision: node.Supervision{PingEvery: 300 * time.Millisecond, PingTimeout: 2 * time.Second}, Limits: node.Limits{MaxQueue: 4 << 20}},
		Front: front.Options{MaxQueue: 4 << 20}})
	fmt.Fprintln(n.Stdin, initLine)
	fmt.Fprintln(n.Stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for i := range 40 {
		fmt.Fprintf(n.Stdin, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"big.big","arguments":{"bytes":1000000}}}`+"\n", i)
	}
	select {
	case <-n.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the node kept a session whose client does not read")
	}
	log := n.Logs.String()
	stalled, _, ended := strings.Cut(log, "not reading what the node sends")
	if !ended {
		t.Error("the node did not say why it ended the session")
	}
	// While the client did not read; a ping cut short by the node's own stop after the
	// session ended is not the bundle's failure.
	if strings.Contains(stalled, "did not answer a ping") {
		t.Error("a healthy bundle was killed by its ping")
	}
}

// Requests received before stdin ends are answered, initialize included.
func TestRequestsBeforeEOFAreAnswered(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "eof"})
	n := stdioNode(t, dir)
	fmt.Fprintln(n.Stdin, initLine)
	fmt.Fprintln(n.Stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	fmt.Fprintln(n.Stdin, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	fmt.Fprintln(n.Stdin, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"eof.sleep","arguments":{"ms":300}}}`)
	n.Stdin.Close()
	got := map[string]string{}
	sc := bufio.NewScanner(n.Stdout)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m struct {
			ID     json.RawMessage
			Result json.RawMessage
		}
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("not JSON on stdout: %s", sc.Bytes())
		}
		if m.ID != nil {
			got[string(m.ID)] = string(m.Result)
		}
	}
	for _, want := range []struct{ id, has string }{{`"init"`, "protocolVersion"}, {"2", "eof.sleep"}, {"3", "slept in"}} {
		if !strings.Contains(got[want.id], want.has) {
			t.Errorf("answer to %s: %q, want one holding %q", want.id, got[want.id], want.has)
		}
	}
}
