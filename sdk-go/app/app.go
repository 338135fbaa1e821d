// Package app puts a toolnode node's tools inside any LLM call: the tools in the request
// formats of OpenAI (Chat Completions, Responses), Anthropic Messages and Gemini, and a
// model's tool calls run through the node, in parallel, their results in the API's format.
//
// It is built on the official MCP Go SDK (github.com/modelcontextprotocol/go-sdk), which
// speaks the protocol and negotiates its era; package provider holds the formats. A Node
// is one endpoint's shared session: make one per endpoint (or get it from a Pool) and use
// it from every goroutine. See docs/applications.md.
package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnode/toolnode/sdk-go/app/provider"
)

// ClientName is the clientInfo name the package gives: the node shows it canonical names
// and pages, and it maps names itself.
const ClientName = "toolnode-app"

// Version is the package's version, sent as clientInfo.version: the release of the node and
// its SDKs (the checkout's VERSION file).
const Version = "0.3.0"

// maxPages bounds a server whose cursors never end.
const maxPages = 1000

// Config says where a node is and how to use it. Give URL or Command.
type Config struct {
	// URL is a node's Streamable HTTP endpoint, e.g. http://127.0.0.1:7777/mcp.
	URL string
	// Token is sent as "Authorization: Bearer <Token>" (a node's token, or an OAuth access
	// token). Default: none.
	Token string
	// HTTPClient carries the HTTP requests. Default: http.DefaultClient's transport.
	HTTPClient *http.Client
	// Command starts a node serving MCP on stdio, e.g. {"toolnode", "serve", "--bundles",
	// "bundles"}; it is started again after it exits, on the next call.
	Command []string
	// Allow and Deny are patterns over tool names as in the node's access files (* any run
	// of characters, ? one): the tools allowed and not denied are the ones used. Default:
	// every tool.
	Allow, Deny []string
	// Timeout bounds each tool call. Default 60s.
	Timeout time.Duration
	// ProtocolVersion asks for a protocol revision; default: the SDK's negotiation.
	ProtocolVersion string
}

// Node is the shared session to one node: connects and listings already in flight are
// joined, the tool list is cached until the node says it changed (list_changed) or its
// ttlMs runs out, and a lost session is opened again on the next call. Safe for concurrent
// use.
type Node struct {
	cfg   Config
	allow func(string) bool

	mu         sync.Mutex
	session    *mcp.ClientSession
	connecting *flight[*mcp.ClientSession]
	tools      *toolList
	expires    time.Time // zero: until list_changed
	listing    *flight[*toolList]
	epoch      int // bumped by list_changed and a lost session: a listing under an older one is stale
	fetches    int
	defs       map[defsKey]*provider.Definitions
	closed     bool
}

type defsKey struct {
	format  string
	strict  bool
	version int
}

// toolList is the tools of the node, as tools/list gave them.
type toolList struct {
	tools   []provider.Tool
	version int
}

// flight is one connect or listing that every caller waiting for it shares.
type flight[T any] struct {
	done chan struct{}
	val  T
	err  error
}

// New checks cfg and returns a Node; nothing is connected before the first call.
func New(cfg Config) (*Node, error) {
	if (cfg.URL == "") == (len(cfg.Command) == 0) {
		return nil, errors.New("app: give Config.URL (a running node) or Config.Command (one to start over stdio)")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 60 * time.Second
	}
	allow, err := Filter(cfg.Allow, cfg.Deny)
	if err != nil {
		return nil, err
	}
	return &Node{cfg: cfg, allow: allow, defs: map[defsKey]*provider.Definitions{}}, nil
}

func (n *Node) describe() string {
	if n.cfg.URL != "" {
		return n.cfg.URL
	}
	return fmt.Sprint(n.cfg.Command)
}

type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

func (n *Node) transport() mcp.Transport {
	if n.cfg.URL == "" {
		return &mcp.CommandTransport{Command: exec.Command(n.cfg.Command[0], n.cfg.Command[1:]...)}
	}
	hc := n.cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	if n.cfg.Token != "" {
		next := hc.Transport
		if next == nil {
			next = http.DefaultTransport
		}
		c := *hc
		c.Transport = bearer{n.cfg.Token, next}
		hc = &c
	}
	return &mcp.StreamableClientTransport{Endpoint: n.cfg.URL, HTTPClient: hc}
}

// client returns the open session, opening it (once, for every caller at that moment)
// when there is none. The connect runs on its own: a caller that gives up does not end it
// for the others.
func (n *Node) client(ctx context.Context) (*mcp.ClientSession, error) {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return nil, errors.New("app: the node is closed")
	}
	if n.session != nil {
		s := n.session
		n.mu.Unlock()
		return s, nil
	}
	f := n.connecting
	if f == nil {
		f = &flight[*mcp.ClientSession]{done: make(chan struct{})}
		n.connecting = f
		go n.connect(f)
	}
	n.mu.Unlock()
	return f.wait(ctx)
}

// wait returns the flight's outcome, or ctx's error if ctx ends first (the flight goes on
// for the others).
func (f *flight[T]) wait(ctx context.Context) (T, error) {
	select {
	case <-f.done:
		return f.val, f.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

func (n *Node) connect(f *flight[*mcp.ClientSession]) {
	ctx, cancel := context.WithTimeout(context.Background(), n.cfg.Timeout)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: ClientName, Version: Version}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { n.changed() },
	})
	var opts *mcp.ClientSessionOptions
	if n.cfg.ProtocolVersion != "" {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: n.cfg.ProtocolVersion}
	}
	s, err := c.Connect(ctx, n.transport(), opts)
	if err != nil {
		err = fmt.Errorf("%w: cannot reach the node at %s: %w", ErrUnreachable, n.describe(), err)
	}
	n.mu.Lock()
	f.val, f.err = s, err
	n.connecting = nil
	if err == nil {
		if n.closed {
			s.Close()
			f.val, f.err = nil, errors.New("app: the node is closed")
		} else {
			n.session = s
		}
	}
	n.mu.Unlock()
	close(f.done)
}

// ErrUnreachable is wrapped by the errors of a node that cannot be reached, or whose
// session was lost; the next call opens the session again.
var ErrUnreachable = errors.New("node unreachable")

// changed forgets the tool list: the node announced a change.
func (n *Node) changed() {
	n.mu.Lock()
	n.epoch++
	n.tools = nil
	n.mu.Unlock()
}

// lost forgets a session found broken.
func (n *Node) lost(s *mcp.ClientSession) {
	n.mu.Lock()
	if n.session == s {
		n.session = nil
		n.epoch++
		n.tools = nil
	}
	n.mu.Unlock()
	s.Close()
}

// broken reports whether an error means the session is gone rather than an answer of the
// node's, or the caller's own deadline or cancellation.
func broken(ctx context.Context, err error) bool {
	if ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var wire *jsonrpc.Error
	var netErr net.Error
	if !errors.As(err, &wire) || errors.Is(err, mcp.ErrConnectionClosed) || errors.As(err, &netErr) {
		return true
	}
	// The SDK's own codes for a request its transport could not carry, or a closing end.
	switch wire.Code {
	case codeRejected, codeClientClosing, codeServerClosing:
		return true
	}
	return false
}

// Codes the SDK gives errors it makes itself (internal/jsonrpc2's ErrRejected,
// ErrClientClosing, ErrServerClosing), not the node's answers.
const (
	codeRejected      = -32005
	codeClientClosing = -32003
	codeServerClosing = -32004
)

// Close ends the session (a node started over stdio stops with it).
func (n *Node) Close() error {
	n.mu.Lock()
	s := n.session
	n.session, n.closed, n.tools = nil, true, nil
	n.mu.Unlock()
	if s != nil {
		return s.Close()
	}
	return nil
}

// list returns every tool of the node, from the cache while it holds; concurrent callers
// share one listing.
func (n *Node) list(ctx context.Context) (*toolList, error) {
	n.mu.Lock()
	if n.tools != nil && (n.expires.IsZero() || time.Now().Before(n.expires)) {
		t := n.tools
		n.mu.Unlock()
		return t, nil
	}
	f := n.listing
	if f == nil {
		f = &flight[*toolList]{done: make(chan struct{})}
		n.listing = f
		go n.fetch(f, n.epoch)
	}
	n.mu.Unlock()
	return f.wait(ctx)
}

func (n *Node) fetch(f *flight[*toolList], epoch int) {
	ctx, cancel := context.WithTimeout(context.Background(), n.cfg.Timeout)
	defer cancel()
	list, ttl, err := n.fetchPages(ctx)
	n.mu.Lock()
	n.listing = nil
	if err == nil {
		n.fetches++
		list.version = n.fetches
		if epoch == n.epoch { // a change announced during the listing makes it stale at once
			n.tools = list
			n.expires = time.Time{}
			if ttl >= 0 {
				n.expires = time.Now().Add(time.Duration(ttl) * time.Millisecond)
			}
		}
	}
	f.val, f.err = list, err
	n.mu.Unlock()
	close(f.done)
}

// fetchPages lists every page; ttl is the first page's ttlMs under 2026-07-28, -1 under a
// session (whose list holds until list_changed).
func (n *Node) fetchPages(ctx context.Context) (*toolList, int, error) {
	s, err := n.client(ctx)
	if err != nil {
		return nil, 0, err
	}
	stateless := s.InitializeResult() != nil && s.InitializeResult().ProtocolVersion >= "2026-07-28"
	ttl := -1
	var tools []provider.Tool
	cursor := ""
	for range maxPages {
		page, err := s.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			if broken(ctx, err) {
				n.lost(s)
				return nil, 0, fmt.Errorf("%w: lost the node at %s while listing tools: %w", ErrUnreachable, n.describe(), err)
			}
			return nil, 0, fmt.Errorf("tools/list: %w", err)
		}
		if cursor == "" && stateless {
			ttl = page.TTLMs
		}
		for _, t := range page.Tools {
			pt, err := toProvider(t)
			if err != nil {
				return nil, 0, err
			}
			tools = append(tools, pt)
		}
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	return &toolList{tools: tools}, ttl, nil
}
