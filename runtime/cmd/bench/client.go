package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolnode/toolnode/sdk-go/rawjson"
)

// caller makes one MCP call and returns when its answer is in.
type caller interface {
	call(args string) error
	close()
}

// pending matches answers to the calls waiting for them, by numeric id.
type pending struct {
	mu   sync.Mutex
	wait map[uint64]chan []byte
}

// add registers a call and returns where its answer will come.
func (p *pending) add(id uint64) chan []byte {
	ch := make(chan []byte, 1)
	p.mu.Lock()
	if p.wait == nil {
		p.wait = map[uint64]chan []byte{}
	}
	p.wait[id] = ch
	p.mu.Unlock()
	return ch
}

// drop forgets a call whose request could not be sent.
func (p *pending) drop(id uint64) {
	p.mu.Lock()
	delete(p.wait, id)
	p.mu.Unlock()
}

// deliver hands msg to the call its id names, if one waits.
func (p *pending) deliver(msg []byte) {
	var m struct {
		ID *uint64 `json:"id"`
	}
	if json.Unmarshal(msg, &m) != nil || m.ID == nil {
		return
	}
	p.mu.Lock()
	ch := p.wait[*m.ID]
	delete(p.wait, *m.ID)
	p.mu.Unlock()
	if ch != nil {
		ch <- msg
	}
}

// closeAll ends every waiting call: the connection is gone.
func (p *pending) closeAll() {
	p.mu.Lock()
	for id, ch := range p.wait {
		close(ch)
		delete(p.wait, id)
	}
	p.mu.Unlock()
}

// readLines hands each line read from out to the call it answers, until out ends, and then
// ends every call still waiting.
func (p *pending) readLines(out io.Reader) {
	r := bufio.NewReaderSize(out, 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			p.closeAll()
			return
		}
		p.deliver(line)
	}
}

// spawn starts a program with pipes to its stdin and from its stdout.
func spawn(name string, args ...string) (*exec.Cmd, io.WriteCloser, io.ReadCloser, error) {
	cmd := exec.Command(name, args...)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, nil, err
	}
	return cmd, in, out, nil
}

// stdioClient speaks newline-delimited JSON-RPC to a child process, with any number of
// calls in flight matched to their answers by id.
type stdioClient struct {
	cmd     *exec.Cmd
	in      io.WriteCloser
	wmu     sync.Mutex
	ids     atomic.Uint64
	pending pending
	tool    string
	meta    string // the _meta member of each call's params: a stateless client's
}

// statelessMeta is what a 2026-07-28 request carries instead of a session.
const statelessMeta = `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// startStdioStateless starts a client that speaks MCP 2026-07-28: no initialize, each call
// on its own.
func startStdioStateless(tool string, name string, args ...string) (*stdioClient, error) {
	cmd, in, out, err := spawn(name, args...)
	if err != nil {
		return nil, err
	}
	c := &stdioClient{cmd: cmd, in: in, tool: tool, meta: statelessMeta}
	go c.pending.readLines(out)
	if _, err := c.roundTrip(`"server/discover","params":{` + statelessMeta[1:] + `}`); err != nil {
		c.close()
		return nil, fmt.Errorf("server/discover %s: %w", name, err)
	}
	return c, nil
}

func startStdio(tool string, name string, args ...string) (*stdioClient, error) {
	cmd, in, out, err := spawn(name, args...)
	if err != nil {
		return nil, err
	}
	c := &stdioClient{cmd: cmd, in: in, tool: tool}
	go c.pending.readLines(out)
	if _, err := c.roundTrip(`"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}`); err != nil {
		c.close()
		return nil, fmt.Errorf("initialize %s: %w", name, err)
	}
	c.send([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"))
	return c, nil
}

func (c *stdioClient) send(b []byte) {
	c.wmu.Lock()
	c.in.Write(b)
	c.wmu.Unlock()
}

// roundTrip sends a request whose body after "method": is rest and waits for its answer.
func (c *stdioClient) roundTrip(rest string) ([]byte, error) {
	id := c.ids.Add(1)
	ch := c.pending.add(id)
	c.send([]byte(`{"jsonrpc":"2.0","id":` + strconv.FormatUint(id, 10) + `,"method":` + rest + "}\n"))
	line, ok := <-ch
	if !ok {
		return nil, fmt.Errorf("connection closed")
	}
	if failed(line) {
		return nil, fmt.Errorf("call failed: %s", line)
	}
	return line, nil
}

// failed tells whether an answer is a JSON-RPC error or a tool's error result. It reads
// the members themselves: a result may hold the word "error" anywhere (a tool's schema
// does).
func failed(answer []byte) bool {
	if _, ok := rawjson.Member(answer, "error"); ok {
		return true
	}
	result, _ := rawjson.Member(answer, "result")
	isError, _ := rawjson.Member(result, "isError")
	return string(isError) == "true"
}

func (c *stdioClient) call(args string) error {
	_, err := c.roundTrip(`"tools/call","params":{"name":"` + c.tool + `","arguments":` + args + c.meta + `}`)
	return err
}

func (c *stdioClient) close() { stopChild(c.cmd, c.in) }

// stopChild closes a child's stdin, which ends an MCP server, and kills it if it does not
// exit within 5s.
func stopChild(cmd *exec.Cmd, in io.Closer) {
	in.Close()
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		cmd.Process.Kill()
		<-done
	}
}

// httpClient speaks Streamable HTTP to a node, as MCP clients do: it accepts JSON and event
// streams and reads the answer from either, keeps the session the server names and sends
// the protocol version it agreed to.
type httpClient struct {
	url, session, version, tool string
	stateless                   bool   // 2026-07-28: no session, the revision's headers and _meta
	meta                        string // the _meta member of each call's params, as stdioClient's; a stateless client's when empty is statelessMeta
	hc                          *http.Client
	ids                         atomic.Uint64
	check                       func(msg []byte, args string) error // checks an answer; nil: echoed
}

// newHTTPClient is the connection pool of one client, or of many sharing it.
func newHTTPClient() *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
}

// startHTTPStateless starts a client that speaks MCP 2026-07-28 over HTTP.
func startHTTPStateless(url, tool string) *httpClient {
	return &httpClient{url: url, tool: tool, version: "2026-07-28", stateless: true, hc: newHTTPClient()}
}

func startHTTP(url, tool string) (*httpClient, error) {
	return startHTTPOn(newHTTPClient(), url, tool)
}

// startHTTPOn opens a 2025-11-25 session over hc's connections, which other sessions may
// share.
func startHTTPOn(hc *http.Client, url, tool string) (*httpClient, error) {
	c := &httpClient{url: url, tool: tool, hc: hc}
	resp, err := c.post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
	if err != nil {
		return nil, err
	}
	session := resp.Header.Get("Mcp-Session-Id")
	b, err := answer(resp)
	if err != nil {
		return nil, fmt.Errorf("initialize: %w", err)
	}
	var init struct {
		Result struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"result"`
	}
	if err := json.Unmarshal(b, &init); err != nil || init.Result.ProtocolVersion == "" {
		return nil, fmt.Errorf("initialize: no protocol version in %s", b)
	}
	c.session, c.version = session, init.Result.ProtocolVersion
	resp, err = c.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if err != nil {
		return nil, fmt.Errorf("notifications/initialized: %w", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return c, nil
}

// post sends one JSON-RPC message and returns the response if its status is 2xx.
func (c *httpClient) post(body string) (*http.Response, error) {
	return c.postAs("tools/call", c.tool, body)
}

// postAs is post for a request of method naming name, as a stateless client's headers say.
func (c *httpClient) postAs(method, name, body string) (*http.Response, error) {
	req, err := http.NewRequest("POST", c.url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
	}
	if c.version != "" {
		req.Header.Set("Mcp-Protocol-Version", c.version)
	}
	if c.stateless {
		req.Header.Set("Mcp-Method", method)
		req.Header.Set("Mcp-Name", name)
	}
	resp, err := c.hc.Do(req)
	if err == nil && resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return nil, fmt.Errorf("HTTP %d: %s", resp.StatusCode, b)
	}
	return resp, err
}

// answer reads the JSON-RPC response out of an HTTP response, a JSON body or the first
// event of a stream that carries a result or an error, and closes the body.
func answer(resp *http.Response) ([]byte, error) {
	defer resp.Body.Close()
	if ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); ct != "text/event-stream" {
		return io.ReadAll(resp.Body)
	}
	events := bufio.NewReader(resp.Body)
	for {
		event, data, err := readEvent(events)
		if err != nil {
			return nil, fmt.Errorf("event stream ended before the answer: %w", err)
		}
		if event == "message" && (bytes.Contains(data, []byte(`"result"`)) || bytes.Contains(data, []byte(`"error"`))) {
			return data, nil
		}
	}
}

// call calls the client's tool with args and checks the answer (with check when set, else
// that it echoes args).
func (c *httpClient) call(args string) error {
	meta := c.meta
	if c.stateless && meta == "" {
		meta = statelessMeta
	}
	body := `{"jsonrpc":"2.0","id":` + strconv.FormatUint(c.ids.Add(1), 10) +
		`,"method":"tools/call","params":{"name":"` + c.tool + `","arguments":` + args + meta + `}}`
	resp, err := c.post(body)
	if err != nil {
		return err
	}
	b, err := answer(resp)
	if err != nil {
		return err
	}
	if c.check != nil {
		return c.check(b, args)
	}
	return echoed(b, args)
}

// echoed checks that a tools/call response is a result whose text holds the value of the
// call's one argument, so that a gateway answering errors fast is not taken for a fast one.
func echoed(msg []byte, args string) error {
	var in map[string]any
	if err := json.Unmarshal([]byte(args), &in); err != nil || len(in) != 1 {
		return fmt.Errorf("arguments %s: want one", args)
	}
	var want string
	for _, v := range in {
		want = fmt.Sprint(v)
	}
	var out struct {
		Result *struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			IsError bool `json:"isError"`
		} `json:"result"`
	}
	if err := json.Unmarshal(msg, &out); err != nil || out.Result == nil || out.Result.IsError ||
		len(out.Result.Content) == 0 || !strings.Contains(out.Result.Content[0].Text, want) {
		return fmt.Errorf("call failed: %.300s", msg)
	}
	return nil
}

func (c *httpClient) close() { c.hc.CloseIdleConnections() }
