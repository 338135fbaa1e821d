package front_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnode/toolnode/runtime/internal/access"
	"github.com/toolnode/toolnode/runtime/internal/front"
	"github.com/toolnode/toolnode/runtime/internal/front/httpfront"
	"github.com/toolnode/toolnode/runtime/internal/front/stdiofront"
	"github.com/toolnode/toolnode/runtime/internal/node"
	"github.com/toolnode/toolnode/runtime/internal/reload"
	"github.com/toolnode/toolnode/runtime/internal/serve"
	"github.com/toolnode/toolnode/runtime/internal/testkit"
	"github.com/toolnode/toolnode/runtime/internal/testkit/nodekit"
)

// Two clients of one access file: "a" may use bundle pub, "b" bundle sec, and both the
// bundle iso.
var guardedClients = []struct {
	name, token string
	allow       []string
}{{"a", "token-a", []string{"pub.*", "iso.*"}}, {"b", "token-b", []string{"sec.*", "iso.*"}}}

// writeAccess writes the access file of guardedClients into dir.
func writeAccess(t *testing.T, dir string) string {
	t.Helper()
	var clients []map[string]any
	for _, c := range guardedClients {
		clients = append(clients, map[string]any{"name": c.name, "token_sha256": testkit.TokenSHA(c.token), "allow": c.allow})
	}
	b, _ := json.Marshal(map[string]any{"clients": clients})
	path := filepath.Join(dir, "access.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// guarded is a node serving the bundles pub and sec, with their prompts, resources and
// completions, under the access file of guardedClients.
type guarded struct {
	srv    *front.Server
	url    string // the HTTP front's
	access *access.Holder
	dir    string
}

// startGuarded starts a guarded node; edit adjusts the front's options (Audit, say).
func startGuarded(t *testing.T, edit func(*front.Options), fakes ...testkit.Fake) *guarded {
	t.Helper()
	return startGuardedHTTP(t, edit, httpfront.Options{}, fakes...)
}

// startGuardedHTTP is startGuarded with the HTTP front's options. Without fakes, pub and
// sec are in-memory bundles of the initialize era.
func startGuardedHTTP(t *testing.T, edit func(*front.Options), ho httpfront.Options, fakes ...testkit.Fake) *guarded {
	t.Helper()
	dir := t.TempDir()
	src := reload.Source{Dirs: []string{dir}}
	if fakes == nil {
		src.Bundles = testkit.InMemory(t, testkit.Memory{Name: "pub", Surface: true, Session: true},
			testkit.Memory{Name: "sec", Surface: true, Session: true})
	}
	for _, f := range fakes {
		testkit.Write(t, dir, f)
	}
	return guardedOf(t, dir, src, edit, ho)
}

// startGuardedMemory is startGuarded of the in-memory bundles ms.
func startGuardedMemory(t *testing.T, edit func(*front.Options), ms ...testkit.Memory) *guarded {
	t.Helper()
	return guardedOf(t, t.TempDir(), reload.Source{Bundles: testkit.InMemory(t, ms...)}, edit, httpfront.Options{})
}

// guardedOf starts a guarded node of the bundles src names, its access file in dir.
func guardedOf(t *testing.T, dir string, src reload.Source, edit func(*front.Options), ho httpfront.Options) *guarded {
	t.Helper()
	holder, err := access.Open(writeAccess(t, dir), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	opts := front.Options{Access: holder}
	if edit != nil {
		edit(&opts)
	}
	n := nodekit.Start(t, serve.Config{Source: src, Node: node.Config{Supervision: node.Supervision{PingEvery: -1}},
		Front: opts, HTTP: nodekit.Loopback, HTTPOptions: ho})
	n.Ready(t)
	return &guarded{srv: n.Server(), url: n.URL, access: holder, dir: dir}
}

// client speaks to a front the way one client of one era does: a 2025-11-25 session over
// HTTP, a 2026-07-28 client over HTTP, or the stdio front's one client.
type client interface {
	// request sends a request and returns its answer: the whole JSON-RPC message.
	request(method, params string) string
}

// sessionClient is a 2025-11-25 client over HTTP with a bearer token.
type sessionClient struct {
	t     *testing.T
	url   string
	token string
	sid   string
	ids   int
}

func newSessionClient(t *testing.T, url string, token string) *sessionClient {
	c := &sessionClient{t: t, url: url, token: token}
	resp, body := c.post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}}`, nil)
	if c.sid = resp.Header.Get(httpfront.HeaderSessionID); c.sid == "" {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	c.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil)
	return c
}

func (c *sessionClient) post(body string, hdr map[string]string) (*http.Response, string) {
	c.t.Helper()
	if hdr == nil {
		hdr = map[string]string{}
	}
	if c.token != "" {
		hdr["Authorization"] = "Bearer " + c.token
	}
	if c.sid != "" {
		hdr[httpfront.HeaderSessionID], hdr[httpfront.HeaderProtocolVersion] = c.sid, "2025-11-25"
	}
	resp, b := postTo(c.t, c.url, body, hdr)
	return resp, lastMessage(b)
}

func (c *sessionClient) request(method, params string) string {
	c.ids++
	_, b := c.post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, c.ids, method, params), nil)
	return b
}

// statelessClient is a 2026-07-28 client over HTTP with a bearer token.
type statelessClient struct {
	t     *testing.T
	url   string
	token string
	ids   int
}

// withMeta adds the _meta every 2026-07-28 request carries to params.
func withMeta(params string) string {
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`
	if strings.TrimSpace(params) == "{}" {
		return "{" + meta + "}"
	}
	return strings.TrimSuffix(strings.TrimSpace(params), "}") + "," + meta + "}"
}

// target is what a request's Mcp-Name header names: the exact member the body names.
func target(method, params string) (string, bool) {
	var p map[string]json.RawMessage
	_ = json.Unmarshal([]byte(params), &p)
	key := "name"
	switch method {
	case "resources/read":
		key = "uri"
	case "tools/call", "prompts/get":
	default:
		return "", false
	}
	var v string
	_ = json.Unmarshal(p[key], &v)
	return v, true
}

func (c *statelessClient) post(method, params string, extra map[string]string) (*http.Response, string) {
	c.t.Helper()
	c.ids++
	hdr := map[string]string{httpfront.HeaderProtocolVersion: "2026-07-28", httpfront.HeaderMethod: method}
	if name, ok := target(method, params); ok {
		hdr[httpfront.HeaderName] = name
	}
	if c.token != "" {
		hdr["Authorization"] = "Bearer " + c.token
	}
	for k, v := range extra {
		hdr[k] = v
	}
	resp, b := postTo(c.t, c.url, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, c.ids, method, withMeta(params)), hdr)
	return resp, lastMessage(b)
}

// tryPost is post for another goroutine than the test's: it returns "" when the request
// failed or went unanswered for 20 seconds.
func (c *statelessClient) tryPost(method, params string) string {
	hdr := map[string]string{httpfront.HeaderProtocolVersion: "2026-07-28", httpfront.HeaderMethod: method, "Authorization": "Bearer " + c.token}
	if name, ok := target(method, params); ok {
		hdr[httpfront.HeaderName] = name
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, c.url, strings.NewReader(`{"jsonrpc":"2.0","id":99,"method":"`+method+`","params":`+withMeta(params)+`}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req) // the time limit is the request's
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return lastMessage(string(b))
}

func (c *statelessClient) request(method, params string) string {
	_, b := c.post(method, params, nil)
	return b
}

// stdioClient is the stdio front's one client.
type stdioClient struct {
	t       *testing.T
	in      io.Writer
	answers *bufio.Reader
	ids     int
}

// stdioPipes serves srv's stdio front on pipes: what is written to in is the client's
// input, out what the front writes; done gives Serve's outcome once in is closed and out
// read to its end.
func stdioPipes(srv *front.Server) (in io.WriteCloser, out io.Reader, done <-chan error) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- stdiofront.Serve(context.Background(), srv, inR, outW)
		outW.Close()
	}()
	return inW, outR, served
}

func newStdioClient(t *testing.T, srv *front.Server) *stdioClient {
	inW, outR, done := stdioPipes(srv)
	t.Cleanup(func() {
		inW.Close()
		io.Copy(io.Discard, outR)
		<-done
	})
	c := &stdioClient{t: t, in: inW, answers: bufio.NewReader(outR)}
	c.request("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`)
	io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	return c
}

func (c *stdioClient) request(method, params string) string {
	c.t.Helper()
	c.ids++
	if _, err := fmt.Fprintf(c.in, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", c.ids, method, params); err != nil {
		c.t.Fatal(err)
	}
	for {
		line, err := c.answers.ReadString('\n')
		if err != nil {
			c.t.Fatalf("reading the answer to %s: %v", method, err)
		}
		var m struct{ ID json.RawMessage }
		if json.Unmarshal([]byte(line), &m) == nil && string(m.ID) == fmt.Sprint(c.ids) {
			return line
		}
	}
}

// lastMessage is the JSON-RPC message an answer carries, plain or as the last event of a
// stream.
func lastMessage(body string) string {
	if !strings.Contains(body, "data: ") {
		return body
	}
	var last string
	for _, line := range strings.Split(body, "\n") {
		if d, ok := strings.CutPrefix(line, "data: "); ok && strings.TrimSpace(d) != "" {
			last = d
		}
	}
	return last
}

// Everything a bundle serves is covered by the caller's patterns, whatever way it asks:
// tools, prompts, resources and their templates, subscriptions and completions, in both
// eras and over stdio, and members are read exactly as the node acts on them.
func TestAccessCoversEverythingABundleServes(t *testing.T) {
	g := startGuarded(t, func(o *front.Options) { o.Client = "a" })
	clients := map[string]client{
		"2025-11-25 session": newSessionClient(t, g.url, "token-a"),
		"2026-07-28":         &statelessClient{t: t, url: g.url, token: "token-a"},
		"stdio --client a":   newStdioClient(t, g.srv),
	}
	tests := []struct {
		name, method, params string
		want, not            []string
		onlyFor              string // "" for every client
	}{
		{"tools are listed by pattern", "tools/list", `{}`, []string{`"pub.echo"`}, []string{`"sec.`}, ""},
		{"a denied tool is unknown", "tools/call", `{"name":"sec.echo","arguments":{"text":"x"}}`, []string{`unknown tool`}, []string{"sec:x"}, ""},
		{"prompts are listed by pattern", "prompts/list", `{}`, []string{`"pub.greet"`}, []string{`"sec.greet"`}, ""},
		{"a denied prompt is unknown", "prompts/get", `{"name":"sec.greet","arguments":{"who":"x"}}`, []string{`unknown prompt`}, []string{"of sec"}, ""},
		{"a second spelling of name does not lend its access", "prompts/get", `{"name":"sec.greet","Name":"pub.greet"}`,
			[]string{`"error"`}, []string{"of sec", "of pub"}, ""},
		{"a name spelled twice is refused", "prompts/get", `{"Name":"sec.greet","name":"pub.greet"}`,
			[]string{`"error"`, `member \"Name\"`}, []string{"of sec", "of pub"}, ""},
		{"a tool named twice is refused", "tools/call", `{"name":"pub.echo","Name":"sec.echo","arguments":{"text":"x"}}`,
			[]string{`"error"`, `member \"Name\"`}, []string{"sec:x", "pub:x"}, ""},
		{"resources are listed by bundle", "resources/list", `{}`, []string{`fake://pub/readme`}, []string{`fake://sec/`}, ""},
		{"templates are listed by bundle", "resources/templates/list", `{}`, []string{`fake://pub/items/{id}`}, []string{`fake://sec/`}, ""},
		{"an allowed resource is read", "resources/read", `{"uri":"fake://pub/readme"}`, []string{"read by pub"}, nil, ""},
		{"a denied resource is not found", "resources/read", `{"uri":"fake://sec/readme"}`, []string{`"error"`, "fake://sec/readme"}, []string{"read by sec"}, ""},
		{"a denied template's resource is not found", "resources/read", `{"uri":"fake://sec/items/7"}`, []string{`"error"`}, []string{"read by sec"}, ""},
		{"a second spelling of uri does not lend its access", "resources/read", `{"uri":"fake://sec/readme","URI":"fake://pub/readme"}`,
			[]string{`"error"`}, []string{"read by"}, ""},
		{"a denied resource cannot be watched", "resources/subscribe", `{"uri":"fake://sec/readme"}`, []string{`"error"`}, nil, "2025-11-25 session"},
		{"an allowed resource can be watched", "resources/subscribe", `{"uri":"fake://pub/readme"}`, []string{`"result"`}, []string{`"error"`}, "2025-11-25 session"},
		{"a denied prompt is not completed", "completion/complete", `{"ref":{"type":"ref/prompt","name":"sec.greet"},"argument":{"name":"who","value":"x"}}`,
			[]string{`"error"`}, []string{"completed by sec"}, ""},
		{"an allowed prompt is completed", "completion/complete", `{"ref":{"type":"ref/prompt","name":"pub.greet"},"argument":{"name":"who","value":"x"}}`,
			[]string{"completed by pub"}, nil, ""},
		{"a denied template is not completed", "completion/complete", `{"ref":{"type":"ref/resource","uri":"fake://sec/items/{id}"},"argument":{"name":"id","value":"x"}}`,
			[]string{`"error"`}, []string{"completed by sec"}, ""},
		{"execute reads the exact name", "tools/call", `{"name":"toolnode.execute","arguments":{"name":"pub.echo","NAME":"sec.echo","arguments":{"text":"x"}}}`,
			[]string{`"isError":true`}, []string{"sec:x", "pub:x"}, ""},
	}
	for clientName, c := range clients {
		for _, tt := range tests {
			if tt.onlyFor != "" && tt.onlyFor != clientName {
				continue
			}
			t.Run(clientName+"/"+tt.name, func(t *testing.T) {
				got := c.request(tt.method, tt.params)
				for _, w := range tt.want {
					if !strings.Contains(got, w) {
						t.Errorf("%s %s: the answer lacks %s:\n%s", tt.method, tt.params, w, got)
					}
				}
				for _, n := range tt.not {
					if strings.Contains(got, n) {
						t.Errorf("%s %s: the answer holds %s:\n%s", tt.method, tt.params, n, got)
					}
				}
			})
		}
	}
}

// A 2026-07-28 client's subscriptions/listen is agreed only for the resources its patterns
// allow, and is held until the bundles have started instead of agreeing to nothing.
func TestListenAgreesOnlyToAllowedResources(t *testing.T) {
	g := startGuarded(t, nil)
	if data := listenAck(t, g.url, "token-a", "fake://sec/readme", "fake://pub/readme"); !strings.Contains(data, "fake://pub/readme") ||
		strings.Contains(data, "fake://sec/readme") {
		t.Errorf("the listen was agreed for %s; want fake://pub/readme alone", data)
	}
}

// listenAck sends a 2026-07-28 subscriptions/listen for the resources uris to the HTTP
// front at url, with the bearer token when there is one, and returns the data of the
// acknowledgment it gets.
func listenAck(t *testing.T, url, token string, uris ...string) string {
	t.Helper()
	subs, _ := json.Marshal(uris)
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":5,"method":"subscriptions/listen","params":`+
		withMeta(`{"notifications":{"resourceSubscriptions":`+string(subs)+`}}`)+`}`))
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		httpfront.HeaderProtocolVersion: "2026-07-28", httpfront.HeaderMethod: "subscriptions/listen"} {
		req.Header.Set(k, v)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok && strings.Contains(data, "acknowledged") {
			return data
		}
	}
	t.Fatalf("no acknowledgment: %v", sc.Err())
	return ""
}

// A listen sent while the bundles still start waits for them, and agrees to the resources
// they serve, rather than to none.
func TestAListenBeforeTheBundlesAreReadyWaitsForThem(t *testing.T) {
	n := nodekit.StartMemory(t, serve.Config{Node: node.Config{Supervision: node.Supervision{PingEvery: -1}}, HTTP: nodekit.Loopback},
		testkit.Memory{Name: "pub", Surface: true, Session: true, Delay: 300 * time.Millisecond})
	select {
	case <-n.Node().Ready():
		t.Fatal("the bundle was ready before the listen: nothing tested")
	default:
	}
	if data := listenAck(t, n.URL, "", "fake://pub/readme"); !strings.Contains(data, "fake://pub/readme") {
		t.Errorf("a listen before the bundle was ready was agreed for %s", data)
	}
}

// listed are the names of the tools s is shown, sorted.
func listed(t *testing.T, s *mcp.ClientSession) []string {
	t.Helper()
	return nodekit.Names(nodekit.Tools(t, s))
}

// writeFile writes content to path, or fails the test.
func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// execError reads the structured error of a failed toolnode.execute.
func execError(t *testing.T, res *mcp.CallToolResult) (kind string, dispatched bool) {
	t.Helper()
	b, _ := json.Marshal(res.StructuredContent)
	var v struct {
		Error struct {
			Kind       string `json:"kind"`
			Dispatched bool   `json:"dispatched"`
		} `json:"error"`
	}
	if err := json.Unmarshal(b, &v); err != nil || !res.IsError {
		t.Fatalf("not an execute error: %s (isError %v)", b, res.IsError)
	}
	return v.Error.Kind, v.Error.Dispatched
}

// Two clients of one node, each with its token, patterns and view, see, find and call only
// their tools; a forbidden tool never reaches its bundle; the audit log names the client and
// holds no arguments.
func TestClientsSeeFindAndCallOnlyTheirTools(t *testing.T) {
	received := &testkit.SyncBuffer{}
	bundles := []testkit.Memory{{Name: "alpha", Session: true, Manifest: `"timeouts": {"call": "500ms"}`},
		{Name: "beta", Session: true, Received: received}}
	accessFile := filepath.Join(t.TempDir(), "access.json")
	auditFile := filepath.Join(t.TempDir(), "audit.jsonl")
	writeFile(t, accessFile, fmt.Sprintf(`{"clients": [
		{"name": "analyst", "token_sha256": %q, "allow": ["alpha.*"]},
		{"name": "ops", "token_sha256": %q, "allow": ["beta.echo", "beta.pid"], "view": "search"}]}`,
		testkit.TokenSHA("analyst-token"), testkit.TokenSHA("ops-token")))
	url := nodekit.StartMemory(t, serve.Config{HTTP: nodekit.Loopback, AccessFile: accessFile, AuditFile: auditFile}, bundles...).URL

	analyst := nodekit.ConnectWithToken(t, url, "analyst-token")
	ops := nodekit.ConnectWithToken(t, url, "ops-token")

	for _, name := range listed(t, analyst) {
		if !strings.HasPrefix(name, "alpha.") && name != "toolnode.search" && name != "toolnode.execute" {
			t.Errorf("the analyst sees %s", name)
		}
	}
	if got := strings.Join(listed(t, ops), " "); got != "toolnode.execute toolnode.search" {
		t.Errorf("ops, in the search view, lists %s", got)
	}

	// A forbidden tool is unknown to a direct call and never reaches its bundle.
	if _, err := analyst.CallTool(context.Background(), &mcp.CallToolParams{Name: "beta.echo", Arguments: map[string]any{"text": "FORBIDDEN"}}); err == nil ||
		!strings.Contains(err.Error(), "unknown tool") {
		t.Errorf("the analyst called beta.echo: %v", err)
	}

	res, err := ops.CallTool(context.Background(), &mcp.CallToolParams{Name: "toolnode.search", Arguments: map[string]any{"query": "echo text"}})
	if err != nil {
		t.Fatal(err)
	}
	found, _ := json.Marshal(res.StructuredContent)
	if !strings.Contains(string(found), `"beta.echo"`) || strings.Contains(string(found), `"alpha.`) {
		t.Errorf("ops found %s", found)
	}

	execute := func(s *mcp.ClientSession, args map[string]any) *mcp.CallToolResult {
		t.Helper()
		res, err := nodekit.CallWithin(t, s, 20*time.Second, "toolnode.execute", args)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	for _, c := range []struct {
		who        *mcp.ClientSession
		args       map[string]any
		kind       string
		dispatched bool
	}{
		{ops, map[string]any{"name": "alpha.echo", "arguments": map[string]any{"text": "FORBIDDEN"}}, "unknown_tool", false}, // as a missing one
		{ops, map[string]any{"name": "beta.nope"}, "unknown_tool", false},
		{ops, map[string]any{"name": "beta.echo", "arguments": map[string]any{"text": 5}}, "invalid_arguments", false},
		{analyst, map[string]any{"name": "alpha.sleep", "arguments": map[string]any{"ms": 3000}}, "timeout", true},
	} {
		kind, dispatched := execError(t, execute(c.who, c.args))
		if kind != c.kind || dispatched != c.dispatched {
			t.Errorf("execute %v: kind %s dispatched %v, want %s %v", c.args, kind, dispatched, c.kind, c.dispatched)
		}
	}
	if got := nodekit.ResultText(execute(ops, map[string]any{"name": "beta.echo", "arguments": map[string]any{"text": "SECRET-ARG"}})); got != "beta:SECRET-ARG" {
		t.Errorf("execute beta.echo answered %q", got)
	}

	if strings.Contains(received.String(), "FORBIDDEN") {
		t.Error("a forbidden call reached the bundle")
	}

	// An unknown token is refused.
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Authorization", "Bearer nobody")
	req.Header.Set("Content-Type", "application/json")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("an unknown token got %v %v", resp.StatusCode, err)
	}

	testkit.Eventually(t, 15*time.Second, func() string {
		b, _ := os.ReadFile(auditFile)
		if !strings.Contains(string(b), `"client":"ops"`) || !strings.Contains(string(b), `"outcome":"forbidden"`) {
			return "the audit log lacks the calls: " + string(b)
		}
		return ""
	})
	f, _ := os.Open(auditFile)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var rec map[string]any
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		if rec["client"] == nil || rec["tool"] == nil || rec["outcome"] == nil || rec["duration_ms"] == nil {
			t.Errorf("audit line lacks a field: %s", sc.Text())
		}
		if strings.Contains(sc.Text(), "SECRET-ARG") || rec["arguments"] != nil {
			t.Errorf("the audit log holds arguments: %s", sc.Text())
		}
	}
}
