// Package node runs the bundles, keeps the merged catalog of their tools, and routes the
// calls and notifications of client sessions to and from them.
package node

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"

	"github.com/toolnode/toolnode/runtime/catalog"
	"github.com/toolnode/toolnode/runtime/manifest"
	"github.com/toolnode/toolnode/runtime/proc"
	"github.com/toolnode/toolnode/runtime/upstream"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// Session is a client connection of a front, as the node sees it. Implementations must be
// safe for concurrent use and must not block for long in Notify.
//
// The ctx given to Notify and Request is the ctx of the client's call the message relates
// to, when there is one, so that a transport can send it on that call's stream.
type Session interface {
	// Notify sends a notification to the client.
	Notify(ctx context.Context, method string, params any) error
	// Request sends a request to the client (sampling, elicitation, roots) and waits for
	// its answer.
	Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
}

// Config configures a Node.
type Config struct {
	// Logger is the node's logger; each bundle logs to a sub-logger named after it.
	// Default: discard.
	Logger hclog.Logger
	// Manifests are the bundles to run.
	Manifests []*manifest.Manifest
	// Version is reported to bundles in clientInfo. Default "dev".
	Version string
	// LookupEnv reads the node's environment for the bundles' base and inherited
	// variables. Default os.LookupEnv.
	LookupEnv func(string) (string, bool)
}

// Node runs bundles and routes between them and the sessions of the fronts.
type Node struct {
	cfg Config
	log hclog.Logger

	mu       sync.Mutex
	bundles  map[string]*bundle
	sessions map[Session]struct{}
	closed   bool

	catalog     atomic.Pointer[catalog.Catalog]
	prompts     atomic.Pointer[catalog.Catalog]
	resources   atomic.Pointer[catalog.Resources]
	subs        subscriptions
	ready       chan struct{}
	settled     atomic.Bool // the first start is over: report collisions and changes
	cancelStart context.CancelFunc

	progress sync.Map // bundle-side token (string) -> progressRoute
	tokens   atomic.Uint64
	wg       sync.WaitGroup
}

// State is where a bundle is in its life.
type State string

// Bundle states.
const (
	StateStarting State = "starting"
	StateReady    State = "ready"
	StateFailed   State = "failed"
	StateStopped  State = "stopped"
)

type bundle struct {
	m      *manifest.Manifest
	log    hclog.Logger
	client *upstream.Client
	state  State
	err    error
	lists  lists

	flights map[uint64]*flight // calls in flight by bundle-side request id; guarded by Node.mu
}

// flight is a client's call being served by a bundle.
type flight struct {
	sess Session
	ctx  context.Context
}

type progressRoute struct {
	flight *flight
	token  json.RawMessage
}

// New returns a node for cfg; Start launches its bundles.
func New(cfg Config) *Node {
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	n := &Node{
		cfg:      cfg,
		log:      cfg.Logger,
		bundles:  map[string]*bundle{},
		sessions: map[Session]struct{}{},
		ready:    make(chan struct{}),
	}
	n.catalog.Store(&catalog.Catalog{})
	n.prompts.Store(&catalog.Catalog{})
	n.resources.Store(&catalog.Resources{})
	n.subs = subscriptions{byURI: map[string]map[Session]bool{}}
	return n
}

// Start launches every bundle in parallel and returns at once. Ready is closed when each
// has answered its handshake and tool list or failed.
func (n *Node) Start(ctx context.Context) {
	ctx, n.cancelStart = context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, m := range n.cfg.Manifests {
		b := &bundle{m: m, log: n.log.Named(m.Name), state: StateStarting, flights: map[uint64]*flight{}}
		n.mu.Lock()
		n.bundles[m.Name] = b
		n.mu.Unlock()
		wg.Add(1)
		n.wg.Add(1)
		go func() {
			defer n.wg.Done()
			n.startBundle(ctx, b, wg.Done)
		}()
	}
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		wg.Wait()
		n.settled.Store(true)
		n.rebuild()
		close(n.ready)
		n.log.Info("node ready", "bundles", len(n.cfg.Manifests), "tools", n.Catalog().Len())
	}()
}

// Ready is closed once every bundle given at Start has started or failed.
func (n *Node) Ready() <-chan struct{} { return n.ready }

// startBundle starts one bundle and calls settled once it is ready or has failed; a
// failed bundle is then stopped without holding up the others.
func (n *Node) startBundle(ctx context.Context, b *bundle, settled func()) {
	m := b.m
	timeout := m.Timeouts.Start.Std(manifest.DefaultStartTimeout)
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, fmt.Errorf("no answer within the start timeout of %s", timeout))
	defer cancel()
	c, l, err := n.launch(ctx, b)
	n.mu.Lock()
	if err != nil {
		b.state, b.err = StateFailed, err
	} else {
		b.state, b.client, b.lists = StateReady, c, l
	}
	n.mu.Unlock()
	if err != nil {
		b.log.Error("bundle failed to start", "manifest", m.Path, "error", err)
		settled()
		if c != nil {
			c.Close(context.Background())
		}
		return
	}
	b.log.Info("bundle ready", "pid", c.Pid(), "tools", len(l.tools), "prompts", len(l.prompts), "resources", len(l.resources))
	n.rebuild()
	settled()
	n.watchExit(b)
}

// launch starts the process, runs the handshake and lists what the bundle offers. On failure
// the client is returned too when the process runs, for the caller to stop.
func (n *Node) launch(ctx context.Context, b *bundle) (*upstream.Client, lists, error) {
	m := b.m
	prog, err := m.Program()
	if err != nil {
		return nil, lists{}, err
	}
	c, err := upstream.Start(upstream.Config{
		Name: m.Name,
		Process: proc.Config{
			Path:   prog,
			Args:   m.Command[1:],
			Dir:    m.Dir,
			Env:    m.Environ(n.cfg.LookupEnv),
			Logger: b.log,
			Grace:  m.Timeouts.Shutdown.Std(manifest.DefaultShutdownTimeout),
		},
		Logger:     b.log,
		Handler:    bundleHandler{n: n, b: b},
		ClientInfo: mcp.Implementation{Name: "toolnode", Version: n.cfg.Version},
		// Offered so that bundles may ask; the node relays each request to the client
		// whose call caused it, which answers or refuses.
		Capabilities: json.RawMessage(`{"roots":{"listChanged":true},"sampling":{},"elicitation":{}}`),
	})
	if err != nil {
		return nil, lists{}, err
	}
	if err := c.Initialize(ctx); err != nil {
		return c, lists{}, err
	}
	l, err := fetchLists(ctx, c)
	return c, l, err
}

// watchExit withdraws the tools of a bundle whose process ended while the node runs.
func (n *Node) watchExit(b *bundle) {
	<-b.client.Done()
	n.mu.Lock()
	stopping := n.closed || b.state == StateStopped
	if !stopping {
		b.state = StateFailed
		b.err = fmt.Errorf("exited (%s)", b.client.ExitStatus())
	}
	n.mu.Unlock()
	if stopping {
		return
	}
	b.log.Error("bundle exited; its tools are withdrawn", "status", b.client.ExitStatus())
	n.rebuild()
}

// rebuild merges what the ready bundles offer and tells sessions what changed.
func (n *Node) rebuild() {
	n.mu.Lock()
	names := make([]string, 0, len(n.bundles))
	for name, b := range n.bundles {
		if b.state == StateReady {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	var tools, prompts []catalog.Source
	var resources []catalog.ResourceSource
	for _, name := range names {
		b := n.bundles[name]
		tools = append(tools, catalog.Source{Bundle: name, Seats: b.m.Seats, NoPrefix: !b.m.Prefixed(), Tools: b.lists.tools})
		prompts = append(prompts, catalog.Source{Bundle: name, NoPrefix: !b.m.Prefixed(), Tools: b.lists.prompts})
		resources = append(resources, catalog.ResourceSource{Bundle: name, Resources: b.lists.resources, Templates: b.lists.templates})
	}
	toolCat, toolNotices := catalog.Build(tools)
	promptCat, promptNotices := catalog.Build(prompts)
	resCat, resNotices := catalog.BuildResources(resources)
	oldTools := n.catalog.Swap(toolCat)
	oldPrompts := n.prompts.Swap(promptCat)
	oldRes := n.resources.Swap(resCat)
	n.mu.Unlock()

	if !n.settled.Load() {
		// Collisions among half the bundles mean nothing yet; report the settled outcome.
		return
	}
	for _, no := range toolNotices {
		n.log.Warn(no.String())
	}
	for _, no := range promptNotices {
		n.log.Warn("prompt: " + no.String())
	}
	for _, no := range resNotices {
		n.log.Warn(no.String())
	}
	if !toolCat.Equal(oldTools) {
		n.broadcast(mcp.NotifyToolsListChanged, nil)
	}
	if !promptCat.Equal(oldPrompts) {
		n.broadcast(mcp.NotifyPromptsListChanged, nil)
	}
	if !resCat.Equal(oldRes) {
		n.broadcast(mcp.NotifyResourcesChanged, nil)
	}
}

// Catalog returns the current merged tool list.
func (n *Node) Catalog() *catalog.Catalog { return n.catalog.Load() }

// Attach registers a session for broadcasts; Detach removes it.
func (n *Node) Attach(s Session) {
	n.mu.Lock()
	n.sessions[s] = struct{}{}
	n.mu.Unlock()
}

// Detach removes a session registered with Attach.
func (n *Node) Detach(s Session) {
	n.mu.Lock()
	delete(n.sessions, s)
	n.mu.Unlock()
	n.dropSubscriptions(s)
}

func (n *Node) broadcast(method string, params any) {
	n.mu.Lock()
	sessions := make([]Session, 0, len(n.sessions))
	for s := range n.sessions {
		sessions = append(sessions, s)
	}
	n.mu.Unlock()
	for _, s := range sessions {
		if err := s.Notify(context.Background(), method, params); err != nil {
			n.log.Debug("notify session", "method", method, "error", err)
		}
	}
}

// Close stops every bundle in parallel, each as the stdio transport says (stdin closed,
// then SIGTERM, then SIGKILL after its shutdown grace). Cancelling ctx hurries them.
func (n *Node) Close(ctx context.Context) {
	if n.cancelStart != nil {
		n.cancelStart()
		<-n.ready
	}
	n.mu.Lock()
	n.closed = true
	var clients []*upstream.Client
	for _, b := range n.bundles {
		if b.client != nil {
			clients = append(clients, b.client)
			b.state = StateStopped
		}
	}
	n.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.Close(ctx)
		}()
	}
	wg.Wait()
	n.wg.Wait()
}
