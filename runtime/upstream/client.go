// Package upstream is the node's client side: one MCP session with one bundle process over
// its stdin and stdout, on the message engine of package rpc.
package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/toolnode/toolnode/runtime/proc"
	"github.com/toolnode/toolnode/runtime/rpc"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// Handler receives what a bundle sends on its own: notifications, and requests to the
// client (sampling, elicitation, roots). Its methods may be called concurrently.
type Handler interface {
	// Notify is called on the reading goroutine, so notifications keep their order with
	// respect to the answers that follow them; it must not block.
	Notify(c *Client, method string, params json.RawMessage)
	// Request answers a request from the bundle. It runs on its own goroutine.
	Request(ctx context.Context, c *Client, method string, params json.RawMessage) (json.RawMessage, error)
}

// Config describes a bundle session.
type Config struct {
	// Name is the bundle's name, used in errors and logs.
	Name string
	// Process says what to run.
	Process proc.Config
	// Logger logs the session; the bundle's stderr goes to Process.Logger.
	Logger hclog.Logger
	// Handler receives the bundle's notifications and requests. Required.
	Handler Handler
	// ClientInfo is sent in initialize. Default {"toolnode", "dev"}.
	ClientInfo mcp.Implementation
	// Capabilities are the client capabilities offered in initialize. Default {}.
	Capabilities json.RawMessage
	// MaxLine is the longest stdout line accepted. Default rpc.DefaultMaxLine.
	MaxLine int
	// MaxQueue bounds what the node holds for a bundle that does not read its stdin;
	// past it, calls to the bundle fail at once. Default rpc.DefaultMaxQueue.
	MaxQueue int
	// Limits are the checks every message of the bundle passes.
	Limits rpc.Limits
	// OnJunk, when set, is also told of each stdout line that is not MCP (after it is
	// logged).
	OnJunk func(line []byte, err error)
}

// Client is a live session with a bundle. Its methods are safe for concurrent use.
type Client struct {
	cfg  Config
	log  hclog.Logger
	proc *proc.Process
	conn *rpc.Conn
	gone func() error // why calls fail once the bundle has gone, worked out once

	// The bundle's own requests being answered, so that it can cancel them.
	incomingMu sync.Mutex
	incoming   map[rpc.ID]context.CancelFunc

	// Init is the bundle's answer to initialize.
	Init mcp.InitializeResult
}

// ErrGone is wrapped by errors of calls to a bundle that has gone away.
var ErrGone = errors.New("bundle gone")

// Start starts the bundle's process and opens the session; Initialize runs the handshake.
func Start(cfg Config) (*Client, error) {
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.ClientInfo.Name == "" {
		cfg.ClientInfo = mcp.Implementation{Name: "toolnode", Version: "dev"}
	}
	if cfg.Capabilities == nil {
		cfg.Capabilities = json.RawMessage(`{}`)
	}
	p, err := proc.Start(cfg.Process)
	if err != nil {
		return nil, err
	}
	c := &Client{cfg: cfg, log: cfg.Logger, proc: p, incoming: map[rpc.ID]context.CancelFunc{}}
	c.gone = sync.OnceValue(c.goneError)
	c.conn = rpc.NewConn(p.Stdout(), p.Stdin(), p.Stdin(), rpc.ConnOptions{
		MaxLine:     cfg.MaxLine,
		MaxQueue:    cfg.MaxQueue,
		Limits:      cfg.Limits,
		Handle:      c.handle,
		OnInvalid:   c.invalid,
		OnUnmatched: c.unmatched,
	})
	go c.closeOnExit()
	return c, nil
}

// Initialize runs the MCP handshake: initialize, offering the latest revision and accepting
// any supported one, then notifications/initialized. ctx bounds it.
func (c *Client) Initialize(ctx context.Context) error {
	params := mcp.InitializeParams{
		ProtocolVersion: mcp.LatestVersion,
		Capabilities:    c.cfg.Capabilities,
		ClientInfo:      c.cfg.ClientInfo,
	}
	raw, err := c.Call(ctx, mcp.MethodInitialize, params)
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	if err := json.Unmarshal(raw, &c.Init); err != nil {
		return fmt.Errorf("initialize: bad answer: %w", err)
	}
	if !mcp.IsSupportedVersion(c.Init.ProtocolVersion) {
		return fmt.Errorf("initialize: bundle answered protocol version %q; supported: %v",
			c.Init.ProtocolVersion, mcp.SupportedVersions())
	}
	return c.Notify(mcp.NotifyInitialized, nil)
}

// closeOnExit closes the session once the process is gone, even if a grandchild still holds
// its stdout open, so that calls in flight fail at once instead of hanging.
func (c *Client) closeOnExit() {
	<-c.proc.Done()
	select {
	case <-c.conn.Done():
	case <-time.After(100 * time.Millisecond):
		// Give the reader a moment to take what the bundle wrote before exiting.
	}
	c.conn.Close()
}

// Name is the bundle's name.
func (c *Client) Name() string { return c.cfg.Name }

// Pid is the bundle's process id.
func (c *Client) Pid() int { return c.proc.Pid() }

// Done is closed when the session has ended.
func (c *Client) Done() <-chan struct{} { return c.conn.Done() }

// ExitStatus describes how the process ended, or "running".
func (c *Client) ExitStatus() string { return c.proc.ExitStatus() }

// Queued is how many bytes wait for the bundle to read them.
func (c *Client) Queued() int { return c.conn.Queued() }

// Waiting is how many calls wait for the bundle's answers.
func (c *Client) Waiting() int { return c.conn.Waiting() }

// Call sends a request and waits for its answer. params may be a json.RawMessage. When ctx
// ends first, the bundle is sent notifications/cancelled for the request and ctx's cause is
// returned. When the bundle goes away, the error names it and how it exited. A JSON-RPC
// error from the bundle is returned as an *rpc.Error.
func (c *Client) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	raw, err := rpc.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("encode %s params: %w", method, err)
	}
	var cancelled func(rpc.ID)
	if method != mcp.MethodInitialize { // the spec forbids cancelling initialize
		cancelled = func(id rpc.ID) { c.tellCancelled(id, context.Cause(ctx).Error()) }
	}
	return rpc.CallWait(ctx, clientPeer{c}, method, raw, cancelled)
}

// clientPeer lets rpc.CallWait use the client's own Expect and Send, which name the bundle in
// their errors.
type clientPeer struct{ c *Client }

func (p clientPeer) Expect(done rpc.Done) (rpc.ID, error) { return p.c.Expect(done) }
func (p clientPeer) Request(id rpc.ID, method string, params json.RawMessage) error {
	return p.c.Send(id, method, params)
}
func (p clientPeer) Forget(id rpc.ID) bool { return p.c.conn.Forget(id) }

// Expect registers done for the outcome of a request about to be sent with Send, and
// returns its id: the caller can relate what the bundle says about the call to it before
// the bundle can say anything. done runs once (see rpc.Done): with the bundle's result, its
// JSON-RPC error, or an error naming the bundle and how it exited. A caller that gives up
// calls Abandon.
func (c *Client) Expect(done rpc.Done) (rpc.ID, error) {
	id, err := c.conn.Expect(func(res json.RawMessage, err error) {
		switch {
		case errors.Is(err, rpc.ErrClosed):
			err = c.gone()
		case errors.Is(err, rpc.ErrBadAnswer):
			err = fmt.Errorf("bundle %q: %w", c.cfg.Name, err)
		}
		done(res, err)
	})
	if errors.Is(err, rpc.ErrClosed) {
		return id, c.gone()
	}
	return id, err
}

// Send sends the request id got from Expect. When it cannot be sent (the bundle is gone, or
// has left too much unread on its stdin) the call is taken back and the error says why;
// done is then not called.
func (c *Client) Send(id rpc.ID, method string, params json.RawMessage) error {
	if err := c.conn.Request(id, method, params); err != nil {
		if errors.Is(err, rpc.ErrNotReading) {
			return fmt.Errorf("bundle %q is not reading its stdin: %w", c.cfg.Name, err)
		}
		return c.gone()
	}
	return nil
}

// Abandon gives up on a request still waiting, telling the bundle with
// notifications/cancelled, and reports whether it was still waiting (if not, its done has
// run or is running).
func (c *Client) Abandon(id rpc.ID, reason string) bool {
	if !c.conn.Forget(id) {
		return false
	}
	c.tellCancelled(id, reason)
	return true
}

func (c *Client) tellCancelled(id rpc.ID, reason string) {
	_ = c.conn.Notify(mcp.NotifyCancelled, mcp.CancelledNotice(id.String(), reason))
}

// Notify sends a notification to the bundle.
func (c *Client) Notify(method string, params any) error {
	raw, err := rpc.Marshal(params)
	if err != nil {
		return fmt.Errorf("encode %s params: %w", method, err)
	}
	if err := c.conn.Notify(method, raw); err != nil {
		return fmt.Errorf("notify bundle %q: %w", c.cfg.Name, err)
	}
	return nil
}

func (c *Client) goneError() error {
	select {
	case <-c.proc.Done():
	case <-time.After(time.Second):
		return fmt.Errorf("%w: bundle %q closed its stdout (process still running)", ErrGone, c.cfg.Name)
	}
	return fmt.Errorf("%w: bundle %q exited (%s)", ErrGone, c.cfg.Name, c.proc.ExitStatus())
}

// ListTools fetches every tool of the bundle, following nextCursor to the end.
func (c *Client) ListTools(ctx context.Context) ([]json.RawMessage, error) {
	return c.ListAll(ctx, mcp.MethodToolsList, "tools")
}

// ListAll calls a */list method and follows nextCursor to the end, returning the items of
// the answers' field member (e.g. "tools", "prompts", "resourceTemplates").
func (c *Client) ListAll(ctx context.Context, method, field string) ([]json.RawMessage, error) {
	var all []json.RawMessage
	seen := map[string]bool{}
	cursor := ""
	for {
		var params any = struct{}{}
		if cursor != "" {
			params = mcp.PaginatedParams{Cursor: cursor}
		}
		raw, err := c.Call(ctx, method, params)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", method, err)
		}
		var page map[string]json.RawMessage
		if err := json.Unmarshal(raw, &page); err != nil {
			return nil, fmt.Errorf("%s: bad answer: %w", method, err)
		}
		var items []json.RawMessage
		if err := json.Unmarshal(page[field], &items); err != nil && page[field] != nil {
			return nil, fmt.Errorf("%s: bad %q: %w", method, field, err)
		}
		all = append(all, items...)
		var next string
		_ = json.Unmarshal(page["nextCursor"], &next)
		if next == "" {
			return all, nil
		}
		if seen[next] {
			return nil, fmt.Errorf("%s: cursor %q came back twice; the bundle's pagination loops", method, next)
		}
		seen[next] = true
		cursor = next
	}
}

// Close stops the bundle (stdin closed, then SIGTERM, then SIGKILL, each after the grace
// period) and ends the session. Cancelling ctx hurries the stop. Safe to call many times.
func (c *Client) Close(ctx context.Context) error {
	err := c.proc.Stop(ctx)
	c.conn.Close()
	return err
}

// handle receives the bundle's requests and notifications on the reading goroutine.
func (c *Client) handle(m *rpc.Message) {
	if m.IsNotification() {
		if m.Method == mcp.NotifyCancelled && c.cancelIncoming(m.Params) {
			return
		}
		c.cfg.Handler.Notify(c, m.Method, m.Params)
		return
	}
	if m.Method == mcp.MethodPing {
		_ = c.conn.Reply(m.ID, json.RawMessage(`{}`))
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.incomingMu.Lock()
	if _, dup := c.incoming[m.ID]; dup {
		c.incomingMu.Unlock()
		cancel()
		_ = c.conn.ReplyError(m.ID, rpc.Errorf(rpc.CodeInvalidRequest, "request id %s is already in use", m.ID))
		return
	}
	c.incoming[m.ID] = cancel
	c.incomingMu.Unlock()
	go func() {
		defer func() {
			c.incomingMu.Lock()
			delete(c.incoming, m.ID)
			c.incomingMu.Unlock()
			cancel()
		}()
		res, err := c.cfg.Handler.Request(ctx, c, m.Method, m.Params)
		if ctx.Err() != nil {
			return // cancelled by the bundle: it wants no answer
		}
		if err != nil {
			_ = c.conn.ReplyError(m.ID, err)
			return
		}
		_ = c.conn.Reply(m.ID, res)
	}()
}

// invalid logs a stdout line that is not a valid MCP message; a request among them is
// answered with the error, so that the bundle does not wait for an answer.
func (c *Client) invalid(line []byte, m *rpc.Message, err *rpc.Error) {
	c.log.Warn("skipped a stdout line that is not MCP (bundles must write only MCP messages to stdout; log to stderr)",
		"reason", err.Message, "line", clip(line))
	if m.Method != "" && !m.ID.IsZero() && !m.ID.IsNull() {
		_ = c.conn.ReplyError(m.ID, err)
	}
	if c.cfg.OnJunk != nil {
		c.cfg.OnJunk(line, err)
	}
}

func (c *Client) unmatched(m *rpc.Message) {
	c.log.Debug("dropped an answer no call waits for (given up on, answered twice, or never asked)", "id", m.ID.String())
}

func clip(b []byte) string {
	const max = 200
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(b)
}

// cancelIncoming cancels the bundle's own request that a notifications/cancelled of the
// bundle names, and reports whether there was one.
func (c *Client) cancelIncoming(params json.RawMessage) bool {
	var p mcp.CancelledParams
	var id rpc.ID
	if json.Unmarshal(params, &p) != nil || json.Unmarshal(p.RequestID, &id) != nil {
		return false
	}
	c.incomingMu.Lock()
	cancel := c.incoming[id]
	c.incomingMu.Unlock()
	if cancel != nil {
		cancel()
	}
	return cancel != nil
}
