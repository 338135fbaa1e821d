package front_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/toolnode/toolnode/runtime/internal/front/httpfront"
	"github.com/toolnode/toolnode/runtime/internal/serve"
	"github.com/toolnode/toolnode/runtime/internal/testkit"
	"github.com/toolnode/toolnode/runtime/internal/testkit/nodekit"
)

// The _meta of a 2026-07-28 request, as the cases below write it.
const (
	meta2026    = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	metaNoCaps  = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`
	metaFuture  = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}`
	metaBadType = `"_meta":{"io.modelcontextprotocol/protocolVersion":7,"io.modelcontextprotocol/clientCapabilities":{}}`
)

// admissionCases are requests good and bad, of a 2025 session (stateless false) and of a
// 2026-07-28 client: each transport admits them alike, and its answer is the one every other
// gives. code is the JSON-RPC error every transport answers (0 for a result); status is the
// HTTP status of the stateless answer.
var admissionCases = []struct {
	name      string
	stateless bool
	method    string
	params    string
	code      int
	status    int
}{
	{"a call", false, "tools/call", `{"name":"a.echo","arguments":{"text":"hi"}}`, 0, 0},
	{"a call whose _meta names no revision", false, "tools/call", `{"name":"a.echo","arguments":{"text":"hi"},"_meta":{"progressToken":null}}`, 0, 0},
	{"a list", false, "tools/list", `{}`, 0, 0},
	{"ping", false, "ping", `{}`, 0, 0},
	{"a misspelled member", false, "tools/call", `{"nam":"a.echo"}`, -32602, 0},
	{"a cursor not a string", false, "tools/list", `{"cursor":5}`, -32602, 0},
	{"an unknown method", false, "no/such", `{}`, -32601, 0},
	{"an unknown tool", false, "tools/call", `{"name":"a.nope"}`, -32602, 0},

	{"a call", true, "tools/call", `{"name":"a.echo","arguments":{"text":"hi"},` + meta2026 + `}`, 0, 200},
	{"a list", true, "tools/list", `{` + meta2026 + `}`, 0, 200},
	{"discover", true, "server/discover", `{` + meta2026 + `}`, 0, 200},
	{"a misspelled member", true, "tools/call", `{"nam":"a.echo",` + meta2026 + `}`, -32602, 200},
	{"a removed method", true, "ping", `{` + meta2026 + `}`, -32601, 404},
	{"initialize", true, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"},` + meta2026 + `}`, -32601, 404},
	{"a removed method with bad params", true, "logging/setLevel", `{"lvl":"x",` + meta2026 + `}`, -32601, 404},
	{"a removed method with a bad _meta", true, "ping", `{` + metaNoCaps + `}`, -32601, 404},
	{"a _meta without capabilities", true, "tools/list", `{` + metaNoCaps + `}`, -32602, 400},
	{"a revision the node does not serve", true, "tools/list", `{` + metaFuture + `}`, -32022, 400},
	{"a revision not a string", true, "tools/list", `{` + metaBadType + `}`, -32602, 400},
	{"an unknown method", true, "no/such", `{` + meta2026 + `}`, -32601, 404},
	{"an unknown tool", true, "tools/call", `{"name":"a.nope",` + meta2026 + `}`, -32602, 200},
}

// Every transport admits a request alike (front.Server.Admit): the same requests, good and
// bad, of a 2025 session and of a 2026-07-28 client, get the same answers over stdio and
// over HTTP, from one node serving both.
func TestEveryTransportAdmitsARequestAlike(t *testing.T) {
	n := nodekit.StartFakes(t, serve.Config{Stdio: true, HTTP: nodekit.Loopback}, testkit.Fake{Name: "a"})
	n.Ready(t)
	stdio := newLineClient(t, n.Stdin, n.Stdout)
	stdio.ask(`"initialize"`, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`)
	fmt.Fprintln(n.Stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	session := nodekit.NewRawHTTP(t, n.URL)
	session.Initialize("2025-11-25", "{}")

	for i, tc := range admissionCases {
		era := "2025"
		if tc.stateless {
			era = "2026"
		}
		t.Run(era+" "+tc.name, func(t *testing.T) {
			id := fmt.Sprint(i + 1)
			overStdio := stdio.ask(id, tc.method, tc.params)
			var overHTTP []byte
			if tc.stateless {
				var status int
				overHTTP, status = postStateless(t, n.URL, id, tc.method, tc.params)
				if status != tc.status {
					t.Errorf("over HTTP: status %d, want %d: %s", status, tc.status, overHTTP)
				}
			} else {
				resp := session.Post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q,"params":%s}`, id, tc.method, tc.params),
					"application/json, text/event-stream")
				overHTTP = nodekit.Message(resp)
			}
			a, b := readWireAnswer(t, overStdio), readWireAnswer(t, overHTTP)
			if d := cmp.Diff(a, b); d != "" {
				t.Errorf("stdio and HTTP answer apart (-stdio +http):\n%s", d)
			}
			if got := a.code(); got != tc.code {
				t.Errorf("error code %d, want %d: %s", got, tc.code, overStdio)
			}
		})
	}
}

// wireAnswer is a JSON-RPC answer as it came, but for its id.
type wireAnswer struct {
	Result any                `json:"result"`
	Error  *nodekit.WireError `json:"error"`
}

func (a wireAnswer) code() int {
	if a.Error == nil {
		return 0
	}
	return a.Error.Code
}

func readWireAnswer(t *testing.T, b []byte) wireAnswer {
	t.Helper()
	var a wireAnswer
	if err := json.Unmarshal(b, &a); err != nil || a.Result == nil && a.Error == nil {
		t.Fatalf("not a JSON-RPC answer (%v): %s", err, b)
	}
	return a
}

// postStateless posts a request of a 2026-07-28 client with the headers that revision
// mirrors from the body, as they say what the body says, and returns its answer and status.
func postStateless(t *testing.T, url, id, method, params string) ([]byte, int) {
	t.Helper()
	var p struct {
		Name, URI string
		Meta      map[string]any `json:"_meta"`
	}
	_ = json.Unmarshal([]byte(params), &p)
	version, ok := p.Meta["io.modelcontextprotocol/protocolVersion"].(string)
	if !ok {
		version = "2026-07-28"
	}
	hdr := map[string]string{httpfront.HeaderProtocolVersion: version, httpfront.HeaderMethod: method}
	switch method {
	case "tools/call", "prompts/get":
		hdr[httpfront.HeaderName] = p.Name
	case "resources/read":
		hdr[httpfront.HeaderName] = p.URI
	}
	resp, body := postTo(t, url, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q,"params":%s}`, id, method, params), hdr)
	return []byte(body), resp.StatusCode
}

// lineClient speaks to the stdio front line by line.
type lineClient struct {
	t     *testing.T
	in    io.Writer
	lines chan []byte
}

func newLineClient(t *testing.T, in io.Writer, out io.Reader) *lineClient {
	c := &lineClient{t: t, in: in, lines: make(chan []byte)}
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	go func() { // reads to the end of out, which comes when the node stops
		defer close(c.lines)
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			select {
			case c.lines <- append([]byte(nil), sc.Bytes()...):
			case <-done: // the test is over: what comes is read and dropped
			}
		}
	}()
	return c
}

// ask sends a request with the id id (JSON) and returns its answer, passing over the
// notifications that come before it.
func (c *lineClient) ask(id, method, params string) []byte {
	c.t.Helper()
	fmt.Fprintf(c.in, `{"jsonrpc":"2.0","id":%s,"method":%q,"params":%s}`+"\n", id, method, params)
	bound := time.After(20 * time.Second) // a request the front leaves unanswered fails here
	for {
		select {
		case line, ok := <-c.lines:
			if !ok {
				c.t.Fatalf("the stdio front ended before answering %s", id)
			}
			var m struct{ ID json.RawMessage }
			if json.Unmarshal(line, &m) == nil && string(m.ID) == id {
				return line
			}
		case <-bound:
			c.t.Fatalf("no answer to %s %s over stdio", method, id)
		}
	}
}
