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
	return http.DefaultClient.Do(req)
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
