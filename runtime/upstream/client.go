// Package upstream is the node's client side: one MCP session with one bundle process over
// its stdin and stdout, built on github.com/sourcegraph/jsonrpc2.
package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/sourcegraph/jsonrpc2"

	"github.com/toolnode/toolnode/runtime/jsonl"
	"github.com/toolnode/toolnode/runtime/proc"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// Handler receives what a bundle sends on its own: notifications, and requests to the
// client (sampling, elicitation, roots). Its methods may be called concurrently.
type Handler interface {
	// Notify is called on the reading goroutine, so notifications keep their order with
	// respect to the answers that follow them; it must not block for long.
	Notify(c *Client, method string, params json.RawMessage)
	// Request answers a request from the bundle. It runs on its own goroutine.
	Request(ctx context.Context, c *Client, method string, params json.RawMessage) (any, error)
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
	// MaxLine is the longest stdout line accepted. Default jsonl.DefaultMaxLine.
	MaxLine int
	// OnJunk, when set, is also told of each stdout line that is not MCP (after it is
	// logged).
	OnJunk func(line []byte, err error)
}

// Client is a live session with a bundle. Its methods are safe for concurrent use.
type Client struct {
	cfg    Config
	log    hclog.Logger
	proc   *proc.Process
	conn   *jsonrpc2.Conn
	stream *jsonl.Stream
	ids    atomic.Uint64

	// The bundle's own requests being answered, so that it can cancel them.
	incomingMu sync.Mutex
	incoming   map[string]context.CancelFunc

	// Init is the bundle's answer to initialize.
	Init mcp.InitializeResult
}

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
	c := &Client{cfg: cfg, log: cfg.Logger, proc: p, incoming: map[string]context.CancelFunc{}}
	stream := jsonl.New(p.Stdout(), p.Stdin(), p.Stdin(), jsonl.Options{
		MaxLine: cfg.MaxLine,
		// Requests and notifications of the bundle keep their params as sent (key order
		// matters to a form built from an elicitation schema); answers their result.
		Splice: []string{"result", "params"},
		OnJunk: func(line []byte, err error) {
			c.log.Warn("skipped a stdout line that is not MCP (bundles must write only MCP messages to stdout; log to stderr)",
				"reason", err, "line", clip(line))
			if cfg.OnJunk != nil {
				cfg.OnJunk(line, err)
			}
		},
	})
	c.stream = stream
	c.conn = jsonrpc2.NewConn(context.Background(), stream, handler{c},
		jsonrpc2.SetLogger(c.log.StandardLogger(&hclog.StandardLoggerOptions{InferLevels: true})))
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
	if err := c.conn.Notify(ctx, mcp.NotifyInitialized, nil); err != nil {
		return fmt.Errorf("send initialized: %w", err)
	}
	return nil
}

// closeOnExit closes the session once the process is gone, even if a grandchild still holds
// its stdout open, so that calls in flight fail at once instead of hanging.
func (c *Client) closeOnExit() {
	<-c.proc.Done()
	select {
	case <-c.conn.DisconnectNotify():
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
func (c *Client) Done() <-chan struct{} { return c.conn.DisconnectNotify() }

// ExitStatus describes how the process ended, or "running".
func (c *Client) ExitStatus() string { return c.proc.ExitStatus() }

// Call sends a request and waits for its answer. params may be a json.RawMessage. When ctx
// ends first, the bundle is sent notifications/cancelled for the request and ctx's error is
// returned. When the bundle goes away, the error names it and how it exited. A JSON-RPC
// error from the bundle is returned as a *jsonrpc2.Error.
func (c *Client) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	return c.CallAs(ctx, c.ReserveID(), method, params)
}

// ReserveID returns a request id no other call of this session uses, for CallAs.
func (c *Client) ReserveID() uint64 { return c.ids.Add(1) }

// CallAs is Call with an id from ReserveID, so that the caller can relate to the call what the
// bundle sends about it.
func (c *Client) CallAs(ctx context.Context, num uint64, method string, params any) (json.RawMessage, error) {
	id := jsonrpc2.ID{Num: num}
	if raw, ok := params.(json.RawMessage); ok {
		params = c.stream.Hold(raw)
	}
	w, err := c.conn.DispatchCall(ctx, method, params, jsonrpc2.PickID(id))
	if err != nil {
		if ph, ok := params.(json.RawMessage); ok {
			c.stream.Take(ph)
		}
		if errors.Is(err, jsonrpc2.ErrClosed) {
			return nil, c.goneError()
		}
		return nil, fmt.Errorf("send %s to bundle %q: %w", method, c.cfg.Name, err)
	}
	var res json.RawMessage
	err = w.Wait(ctx, &res)
	switch {
	case err == nil:
		return c.stream.Take(res), nil
	case ctx.Err() != nil:
		if method != mcp.MethodInitialize {
			// The spec forbids cancelling initialize; everything else is told.
			reason := context.Cause(ctx).Error()
			_ = c.conn.Notify(context.Background(), mcp.NotifyCancelled,
				mcp.CancelledParams{RequestID: json.RawMessage(id.String()), Reason: reason})
		}
		return nil, context.Cause(ctx)
	case errors.Is(err, jsonrpc2.ErrClosed):
		return nil, c.goneError()
	}
	return nil, err
}

// CallAsync sends a request with an id from ReserveID and calls done once: with the
// bundle's result, its JSON-RPC error (a *jsonrpc2.Error), or an error naming the bundle and
// how it exited. done runs on the goroutine reading the bundle, so that the answer can be
// written on without a hand-off, and must not block. A caller that gives up calls Abandon.
func (c *Client) CallAsync(id uint64, method string, params json.RawMessage, done func(json.RawMessage, error)) {
	gone := func() { go func() { done(nil, c.goneError()) }() }
	if !c.stream.Expect(id, func(a jsonl.Answer) {
		switch {
		case a.Err != nil:
			done(nil, c.goneError()) // failAll runs these on a goroutine of their own
		case a.Error != nil:
			rpcErr := &jsonrpc2.Error{}
			if json.Unmarshal(a.Error, rpcErr) != nil {
				rpcErr = &jsonrpc2.Error{Code: mcp.CodeInternalError, Message: "malformed error: " + string(a.Error)}
			}
			done(nil, rpcErr)
		default:
			done(a.Result, nil)
		}
	}) {
		gone()
		return
	}
	if len(params) == 0 {
		params = json.RawMessage(`{}`)
	}
	m, _ := json.Marshal(method)
	line := make([]byte, 0, len(params)+len(m)+64)
	line = append(line, `{"jsonrpc":"2.0","id":`...)
	line = strconv.AppendUint(line, id, 10)
	line = append(append(append(append(line, `,"method":`...), m...), `,"params":`...), params...)
	line = append(line, '}')
	// Written here when the pipe has room, so that the caller (often the goroutine reading
	// a client) goes on at once; else by a goroutine that waits for the bundle to read.
	written, err := c.stream.TryWriteLine(line)
	if !written && err == nil {
		go func() {
			if err := c.stream.WriteLine(line); err != nil && c.stream.Forget(id) {
				gone()
			}
		}()
		return
	}
	if err != nil && c.stream.Forget(id) {
		gone()
	}
}

// Abandon gives up on a CallAsync request still waiting, telling the bundle with
// notifications/cancelled, and reports whether it was still waiting (if not, its done has
// run or is running).
func (c *Client) Abandon(id uint64, reason string) bool {
	if !c.stream.Forget(id) {
		return false
	}
	_ = c.conn.Notify(context.Background(), mcp.NotifyCancelled,
		mcp.CancelledParams{RequestID: json.RawMessage(strconv.FormatUint(id, 10)), Reason: reason})
	return true
}

// Notify sends a notification to the bundle.
func (c *Client) Notify(ctx context.Context, method string, params any) error {
	if err := c.conn.Notify(ctx, method, params); err != nil {
		return fmt.Errorf("notify bundle %q: %w", c.cfg.Name, err)
	}
	return nil
}

// ErrGone is wrapped by errors of calls to a bundle that has gone away.
var ErrGone = errors.New("bundle gone")

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
	var id jsonrpc2.ID
	if json.Unmarshal(params, &p) != nil || json.Unmarshal(p.RequestID, &id) != nil {
		return false
	}
	c.incomingMu.Lock()
	cancel := c.incoming[id.String()]
	c.incomingMu.Unlock()
	if cancel != nil {
		cancel()
	}
	return cancel != nil
}

// handler adapts the Handler to jsonrpc2. jsonrpc2 calls it on its reading goroutine.
type handler struct{ c *Client }

func (h handler) Handle(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) {
	c := h.c
	var params json.RawMessage
	if req.Params != nil {
		params = c.stream.Take(*req.Params)
	}
	if req.Notif {
		if req.Method == mcp.NotifyCancelled && c.cancelIncoming(params) {
			return
		}
		c.cfg.Handler.Notify(c, req.Method, params)
		return
	}
	if req.Method == mcp.MethodPing {
		_ = conn.Reply(ctx, req.ID, struct{}{})
		return
	}
	ctx, cancel := context.WithCancel(ctx)
	key := req.ID.String()
	c.incomingMu.Lock()
	c.incoming[key] = cancel
	c.incomingMu.Unlock()
	go func() {
		defer func() {
			c.incomingMu.Lock()
			delete(c.incoming, key)
			c.incomingMu.Unlock()
			cancel()
		}()
		res, err := c.cfg.Handler.Request(ctx, c, req.Method, params)
		if ctx.Err() != nil {
			return // cancelled by the bundle: it wants no answer
		}
		if err != nil {
			var rpcErr *jsonrpc2.Error
			if !errors.As(err, &rpcErr) {
				rpcErr = &jsonrpc2.Error{Code: mcp.CodeInternalError, Message: err.Error()}
			}
			_ = conn.ReplyWithError(ctx, req.ID, rpcErr)
			return
		}
		_ = conn.Reply(ctx, req.ID, res)
	}()
}
