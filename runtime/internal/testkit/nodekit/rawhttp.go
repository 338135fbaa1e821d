package nodekit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// RawHTTP is a Streamable HTTP client driven by hand, for what the official clients never
// do: a session of 2025-03-26 with its batches, a stream opened and never read, a flood.
type RawHTTP struct {
	t   testing.TB
	url string
	// Session and Version are the session's id and protocol version once Initialize has
	// opened one; every request then carries them.
	Session, Version string
	// Token, when set, goes with every request as a bearer token.
	Token string
}

// NewRawHTTP returns a client of the HTTP front at url, with no session yet.
func NewRawHTTP(t testing.TB, url string) *RawHTTP { return &RawHTTP{t: t, url: url} }

// Post posts body with the Accept header accept, and the session's headers once there is
// a session; the caller reads and closes the response's body.
func (c *RawHTTP) Post(body string, accept string) *http.Response {
	c.t.Helper()
	resp, err := c.post(body, accept)
	if err != nil {
		c.t.Fatal(err)
	}
	return resp
}

// post is Post for any goroutine: it returns its failure.
func (c *RawHTTP) post(body, accept string) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodPost, c.url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", accept)
	if c.Session != "" {
		req.Header.Set("Mcp-Session-Id", c.Session)
		req.Header.Set("Mcp-Protocol-Version", c.Version)
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	return http.DefaultClient.Do(req)
}

// WireError is a JSON-RPC error as it came.
type WireError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Stateless sends method with params (an object, to which it adds the revision's _meta) as
// a 2026-07-28 client does, without a session: with the revision's headers, Mcp-Name for
// what names a target, and returns the answer's result, or its error.
func (c *RawHTTP) Stateless(method string, params map[string]any) (json.RawMessage, *WireError) {
	c.t.Helper()
	p := map[string]any{"_meta": map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": map[string]any{}}}
	for k, v := range params {
		p[k] = v
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": p})
	req, err := http.NewRequest(http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	for _, key := range []string{"name", "uri"} {
		if v, ok := params[key].(string); ok && method != "skills/get" {
			req.Header.Set("Mcp-Name", v)
		}
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	msg := Message(resp)
	var a struct {
		Result json.RawMessage `json:"result"`
		Error  *WireError      `json:"error"`
	}
	if err := json.Unmarshal(msg, &a); err != nil || a.Result == nil && a.Error == nil {
		c.t.Fatalf("%s: %s, no JSON-RPC answer (%v):\n%s", method, resp.Status, err, msg)
	}
	return a.Result, a.Error
}

// Message reads and closes the body of an answer to a POST: the one JSON-RPC message of a
// JSON body, or the first of an event stream.
func Message(resp *http.Response) []byte {
	defer resp.Body.Close()
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return <-SSEMessages(resp.Body)
	}
	b, _ := io.ReadAll(resp.Body)
	return b
}

// Initialize opens a session of protocol version with the client capabilities caps (a
// JSON object), and sends notifications/initialized.
func (c *RawHTTP) Initialize(version, caps string) {
	c.t.Helper()
	resp := c.Post(fmt.Sprintf(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":%q,"capabilities":%s,"clientInfo":{"name":"raw","version":"1"}}}`, version, caps),
		"application/json, text/event-stream")
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	c.Session, c.Version = resp.Header.Get("Mcp-Session-Id"), version
	if c.Session == "" {
		c.t.Fatalf("initialize: %s, no session", resp.Status)
	}
	resp = c.Post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, "application/json, text/event-stream")
	resp.Body.Close()
}

// Call makes a tools/call of tool with args (a JSON object) under id and returns its
// result. It may be called from any goroutine: it reports a failure rather than failing
// the test.
func (c *RawHTTP) Call(id int, tool, args string) (json.RawMessage, error) {
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, tool, args)
	resp, err := c.post(body, "application/json")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out struct {
		Result json.RawMessage `json:"result"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.Result == nil {
		return nil, fmt.Errorf("call %d: %s, no result (%v)", id, resp.Status, err)
	}
	return out.Result, nil
}

// SSEMessages yields the data of each event of an event stream, until it ends.
func SSEMessages(r io.Reader) <-chan []byte {
	ch := make(chan []byte)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(r)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			if data, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: ")); ok && len(data) > 0 {
				ch <- bytes.Clone(data)
			}
		}
	}()
	return ch
}
