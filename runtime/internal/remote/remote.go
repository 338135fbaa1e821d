// Package remote is a small MCP client for a running node's Streamable HTTP front, for the
// command line's quick checks (toolnode tools, call, status).
package remote

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/toolnode/toolnode/runtime/internal/redirect"
	"github.com/toolnode/toolnode/runtime/internal/rpc"

	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// Client is one session with a node.
type Client struct {
	url, token, session string
	hc                  *http.Client
	ids                 atomic.Int64
}

// Dial opens a session with the node at url (http://HOST:PORT/mcp), sending token as a
// bearer token when not empty.
func Dial(ctx context.Context, url, token string) (*Client, error) {
	// The token goes to the node's origin only, not wherever a redirect points.
	c := &Client{url: url, token: token, hc: &http.Client{CheckRedirect: redirect.SameOrigin}}
	params := mcp.InitializeParams{ProtocolVersion: mcp.LatestVersion, Capabilities: json.RawMessage(`{}`),
		ClientInfo: mcp.Implementation{Name: "toolnode-cli", Version: "1"}}
	if _, err := c.Call(ctx, mcp.MethodInitialize, params); err != nil {
		return nil, fmt.Errorf("connect to %s: %w", url, err)
	}
	if err := c.post(ctx, map[string]any{"jsonrpc": "2.0", "method": mcp.NotifyInitialized}, nil); err != nil {
		return nil, fmt.Errorf("connect to %s: %w", url, err)
	}
	return c, nil
}

// Call sends a request and returns its result. A JSON-RPC error is a *rpc.Error.
func (c *Client) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	id := c.ids.Add(1)
	var resp struct {
		ID     int64           `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *rpc.Error      `json:"error"`
	}
	if err := c.post(ctx, map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}, func(msg []byte) bool {
		return json.Unmarshal(msg, &resp) == nil && resp.ID == id && (resp.Result != nil || resp.Error != nil)
	}); err != nil {
		return nil, err
	}
	if resp.Error != nil {
		return nil, resp.Error
	}
	return resp.Result, nil
}

// post sends one message; for a request, answer is given each message of the reply (JSON or
// event stream) until it reports the answer found.
func (c *Client) post(ctx context.Context, msg any, answer func([]byte) bool) error {
	body, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
		req.Header.Set("Mcp-Protocol-Version", mcp.LatestVersion)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		c.session = id
	}
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return fmt.Errorf("HTTP %s: %s", resp.Status, strings.TrimSpace(string(b)))
	}
	if answer == nil {
		return nil
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if ct != "text/event-stream" {
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		if !answer(b) {
			return fmt.Errorf("no answer in %q", b)
		}
		return nil
	}
	r := bufio.NewReaderSize(resp.Body, 64<<10)
	var data []byte
	for {
		line, err := r.ReadBytes('\n')
		line = bytes.TrimRight(line, "\r\n")
		switch {
		case bytes.HasPrefix(line, []byte("data:")):
			data = append(data, bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" "))...)
		case len(line) == 0 && len(data) > 0:
			if answer(data) {
				return nil
			}
			data = data[:0]
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return errors.New("the event stream ended without an answer")
			}
			return err
		}
	}
}

// Close ends the session.
func (c *Client) Close() {
	if c.session == "" {
		return
	}
	req, err := http.NewRequest(http.MethodDelete, c.url, nil)
	if err != nil {
		return
	}
	req.Header.Set("Mcp-Session-Id", c.session)
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if resp, err := c.hc.Do(req); err == nil {
		resp.Body.Close()
	}
}
