// Package node runs the bundles, keeps the merged catalog of their tools, and routes the
// calls and notifications of client sessions to and from them.
package node

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"github.com/toolnode/toolnode/runtime/internal/oauth"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/toolnode/toolnode/runtime/internal/catalog"
	"github.com/toolnode/toolnode/runtime/internal/clock"
	"github.com/toolnode/toolnode/runtime/internal/codemode"
	"github.com/toolnode/toolnode/runtime/internal/codemode/worker"
	"github.com/toolnode/toolnode/runtime/internal/manifest"
	"github.com/toolnode/toolnode/runtime/internal/pin"
	"github.com/toolnode/toolnode/runtime/internal/rpc"
	"github.com/toolnode/toolnode/runtime/internal/sandbox"
	"github.com/toolnode/toolnode/runtime/internal/telemetry"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// Session is a client connection of a front, as the node sees it: where the messages of
// no one call go (list changes, resource updates), once attached (see Attach). What
// concerns one call goes to its Exchange. Implementations must be safe for concurrent use
// and must not block for long in Notify.
type Session interface {
	// Notify sends a notification to the client.
	Notify(ctx context.Context, method string, params any) error
}

// Config configures a Node.
type Config struct {
	// Logger is the node's logger; each bundle logs to a sub-logger named after it.
	// Default: discard.
	Logger hclog.Logger
	// Manifests are the bundles to run at Start.
	Manifests []*manifest.Manifest
	// Version is reported to bundles in clientInfo. Default "dev".
	Version string
	// LookupEnv reads the node's environment for the bundles' base and inherited
	// variables. Default os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// Supervision says how bundles are kept alive; zero fields take defaults.
	Supervision Supervision
	// OnStarting, when set, is called as each bundle of the first start is ready or has
	// failed, with how many are done out of how many: for showing progress.
	OnStarting func(done, total int)
	// Limits bound what the node holds for each bundle process.
	Limits Limits
	// Telemetry records a span per bundle call, passes the trace on to the bundle in
	// _meta, and keeps the bundles' metrics. Default: none.
	Telemetry telemetry.Recorder
	// Lazy makes every bundle lazy, as "start": "lazy" does for one: listed from its
	// cached surface, started on its first call.
	Lazy bool
	// StateDir is where the surfaces of lazy bundles are cached between runs. Default: ""
	// keeps them in memory only, so a lazy bundle starts once per run to show its surface.
	StateDir string
	// Batch gathers the writes to bundle processes that a burst of messages causes; a
	// front's connections share it through Node.Batch. Default: a new one.
	Batch *rpc.Batch
	// StateKey, when set, gives each bundle process TOOLNODE_STATE_KEY, a key of its own
	// bundle derived from it, unless its manifest sets one: every instance of a bundle,
	// a restarted one, and the same bundle on another replica of the cluster then accept
	// the requestStates the others gave out (the SDKs seal them with it).
	StateKey []byte
	// Run bounds each toolnode.run; zero fields take codemode's defaults.
	Run codemode.Bounds
	// RunWorker says where toolnode.run's programs run: in worker processes, each with
	// its memory bound, unless Off. Zero fields take the defaults of package worker.
	RunWorker worker.Config
	// Lock, when set, is the lock file's content: only the tools it pins, as it pins them,
	// are served (see package pin, and SetLock). Default: every tool served.
	Lock *pin.Lock
	// Sandbox bounds the processes of bundles whose manifest has no "sandbox" of its own
	// (--sandbox); the zero Policy, the profile "off", by default.
	Sandbox sandbox.Policy
	// Results bounds the tools/call results passed to clients and the wholes kept of those
	// cut (see ResultBounds); the zero value passes results whole.
	Results ResultBounds
	// Exchanger, when set, obtains the tokens of bundles with "token_exchange" for each
	// caller (see tokenexchange.go). Default: none, and calls to such bundles fail saying so.
	Exchanger *oauth.Exchanger
	// Clock is the time idle_stop runs by: a bundle's last use, and the looks that put an
	// idle one to sleep. Default the system's; tests give a clock.Fake.
	Clock clock.Clock
}

// Node runs bundles and routes between them and the sessions of the fronts.
type Node struct {
	cfg    Config
	sup    Supervision
	limits Limits
	log    hclog.Logger
	clk    clock.Clock // cfg.Clock or the system's
	epoch  time.Time   // what calls' deadlines count from, on clk (see sweep.go)

	mu       sync.Mutex
	bundles  map[string]*bundle
	live     atomic.Pointer[map[string]*bundle] // n.bundles as of its last change, read without mu; see liveBundle
	sessions map[Session]struct{}
	closed   bool

	boundSources  []func() []Bound
	clusterReport atomic.Pointer[func(context.Context) ClusterReport]

	quiet     atomic.Pointer[map[string]bool]     // bundles whose calls never ask a client; see noteQuiet
	own       *ownProvider                        // the node's own tools
	providers atomic.Pointer[map[string]provider] // of each source of the catalog, by its name; see providerOf
	catalog   atomic.Pointer[catalog.Catalog]
	prompts   atomic.Pointer[catalog.Catalog]
	resources atomic.Pointer[catalog.Resources]
	subs      subscriptions
	ready     chan struct{}
	settled   atomic.Bool // the first start is over: report collisions and changes

	tokens    atomic.Uint64 // names given out (newToken)
	tokenTag  string        // makes this node's names and progress tokens its own
	meta      metaIndexes
	tasks     nodeTasks
	held      heldNames
	pins      pins // the lock file's; guarded by mu but for its logging
	approvals approvals
	results   *resultStore
	skill     skillState   // see skills.go
	workers   *worker.Pool // where toolnode.run's programs run
	wg        sync.WaitGroup

	innerCalls func(InnerCall) // told of every call a run makes; see SetInnerCalls
}

// flight is a client's call being served by a bundle.
type flight struct {
	x     Exchange  // the call
	inst  *instance // the process serving it
	relay *relay    // what carries it there and back
}

// New returns a node for cfg; Start launches its bundles.
func New(cfg Config) *Node {
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	if cfg.Telemetry == nil {
		cfg.Telemetry = telemetry.Nop{}
	}
	if cfg.Batch == nil {
		cfg.Batch = &rpc.Batch{}
	}
	var tag [6]byte
	_, _ = rand.Read(tag[:])
	n := &Node{
		tokenTag: "tn-" + base64.RawURLEncoding.EncodeToString(tag[:]) + "-",
		cfg:      cfg,
		sup:      cfg.Supervision.withDefaults(),
		limits:   cfg.Limits.withDefaults(),
		log:      cfg.Logger,
		clk:      clock.Or(cfg.Clock),
		bundles:  map[string]*bundle{},
		sessions: map[Session]struct{}{},
		ready:    make(chan struct{}),
	}
	n.epoch = n.clk.Now()
	n.pins.lock = cfg.Lock
	n.own = &ownProvider{n: n}
	n.providers.Store(&map[string]provider{})
	n.noteProviders()
	n.catalog.Store(&catalog.Catalog{})
	n.prompts.Store(&catalog.Catalog{})
	n.resources.Store(&catalog.Resources{})
	n.subs = subscriptions{byURI: map[string]map[Session]bool{}}
	if cfg.RunWorker.Logger == nil {
		cfg.RunWorker.Logger = cfg.Logger
	}
	n.workers = worker.NewPool(cfg.RunWorker)
	n.boundSources = append(n.boundSources, n.runBounds, n.approvalBounds)
	n.results = newResultStore(cfg.Results, n.TaskTag)
	if n.results.b.MaxBytes > 0 {
		n.boundSources = append(n.boundSources, n.results.bounds)
	}
	return n
}

// Batch is what gathers the writes to the node's bundle processes; a front's connection
// given it has its writes gathered with theirs.
func (n *Node) Batch() *rpc.Batch { return n.cfg.Batch }

// Start launches the configured bundles in parallel and returns at once. Ready is closed
// when each has answered its handshake and lists, or failed to.
func (n *Node) Start() {
	var settle sync.WaitGroup
	var done atomic.Int64
	total := len(n.cfg.Manifests)
	n.apply(n.cfg.Manifests, &settle, func() {
		if n.cfg.OnStarting != nil {
			n.cfg.OnStarting(int(done.Add(1)), total)
		}
	})
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		settle.Wait()
		n.settled.Store(true)
		n.rebuild()
		close(n.ready)
		n.log.Info("node ready", "bundles", len(n.cfg.Manifests), "tools", n.Catalog().Len(), "toolnode.run", n.workers.Enforced())
	}()
}

// Ready is closed once every bundle given at Start has started or failed.
func (n *Node) Ready() <-chan struct{} { return n.ready }

// Apply makes the running bundles those of manifests: new ones start, missing ones stop,
// and ones whose manifest or program changed restart. Calls in flight to a bundle that
// stops get an error saying so.
func (n *Node) Apply(manifests []*manifest.Manifest) {
	n.apply(manifests, nil, func() {})
}

func (n *Node) apply(manifests []*manifest.Manifest, settle *sync.WaitGroup, settled func()) {
	want := map[string]*manifest.Manifest{}
	for _, m := range manifests {
		want[m.Name] = m
	}
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return
	}
	var stop []*bundle
	var start []*bundle
	for name, b := range n.bundles {
		m, keep := want[name]
		switch {
		case !keep:
			stop = append(stop, b)
			delete(n.bundles, name)
			n.setState(b, StateStopped)
			b.log.Info("bundle removed; stopping it", "manifest", b.m.Path)
		case fingerprint(m) != b.fp:
			stop = append(stop, b)
			nb := n.asleep(m, fingerprint(m))
			if nb == nil {
				nb = newBundle(n, m, fingerprint(m))
				// Its tools stay listed while it restarts, and calls made meanwhile wait
				// for the new process rather than finding the tool gone.
				nb.lists = b.lists
				n.setState(nb, StateRestarting)
				start = append(start, nb)
			}
			n.bundles[name] = nb
			b.log.Info("bundle changed; restarting it", "manifest", m.Path)
		}
	}
	for name, m := range want {
		if _, running := n.bundles[name]; !running {
			b := n.asleep(m, fingerprint(m))
			if b == nil {
				b = newBundle(n, m, fingerprint(m))
				start = append(start, b)
			}
			n.bundles[name] = b
		}
	}
	n.noteBundles()
	n.noteQuiet()
	n.noteProviders()
	n.held.holdBundles(n.bundles)
	n.mu.Unlock()

	for _, b := range stop {
		reason := "stopped: its manifest changed or its folder was removed"
		if b.m.Link != nil {
			reason = "stopped: it left the cluster"
		}
		n.requestStop(b, reason)
	}
	for _, b := range start {
		if settle != nil {
			settle.Add(1)
		}
		n.launch(b, func() {
			settled()
			if settle != nil {
				settle.Done()
			}
		})
	}
	if len(stop) > 0 {
		n.rebuild()
		for _, b := range stop {
			n.waitStopped(b)
		}
	}
}

// fingerprint sums up what makes a bundle what it is: its manifest and its program file,
// so that editing either restarts it.
func fingerprint(m *manifest.Manifest) string {
	var buf bytes.Buffer
	b, _ := json.Marshal(m)
	buf.Write(b)
	fmt.Fprintf(&buf, "|%s|%s", m.Dir, m.Path)
	if prog, err := m.Program(); err == nil {
		if fi, err := os.Stat(prog); err == nil {
			fmt.Fprintf(&buf, "|%d|%d", fi.Size(), fi.ModTime().UnixNano())
		}
	}
	return buf.String()
}

// rebuild merges what the running bundles offer and tells sessions what changed. A bundle
// restarting keeps its tools listed: calls made meanwhile wait for it.
func (n *Node) rebuild() {
	n.mu.Lock()
	names := make([]string, 0, len(n.bundles))
	tools := []catalog.Source{n.own.source()}
	var prompts []catalog.Source
	for name, b := range n.bundles {
		if listed(b) {
			names = append(names, name)
			continue
		}
		// A bundle not listed now (starting, failed) still owns the names under its own.
		tools = append(tools, catalog.Source{Bundle: name})
		prompts = append(prompts, catalog.Source{Bundle: name})
	}
	sort.Strings(names)
	var resources []catalog.ResourceSource
	viewSources := make([]catalog.ViewSource, 0, len(names))
	for _, name := range names {
		b := n.bundles[name]
		viewSources = append(viewSources, catalog.ViewSource{Bundle: name, Tools: b.lists.tools, Resources: b.lists.resources})
	}
	views, viewNotices := catalog.PlanViews(viewSources)
	for _, name := range names {
		b := n.bundles[name]
		tools = append(tools, catalog.Source{Bundle: name, Seats: b.m.Seats, NoPrefix: !b.m.Prefixed(), Tools: taskTools(b.m, b.lists.tools), Views: views.Of(name),
			Featured: b.m.IsFeatured})
		prompts = append(prompts, catalog.Source{Bundle: name, NoPrefix: !b.m.Prefixed(), Tools: b.lists.prompts})
		resources = append(resources, catalog.ResourceSource{Bundle: name, Resources: b.lists.resources, Templates: b.lists.templates, Views: views.Of(name)})
	}
	toolCat, toolNotices := catalog.Build(tools)
	built := toolCat // every name, held back by the lock or not, belongs to its bundle
	toolCat = n.pinned(toolCat)
	promptCat, promptNotices := catalog.Build(prompts)
	resCat, resNotices := catalog.BuildResources(resources)
	oldTools := n.catalog.Swap(toolCat)
	oldPrompts := n.prompts.Swap(promptCat)
	oldRes := n.resources.Swap(resCat)
	n.held.hold(n.bundles, built, resCat)
	n.mu.Unlock()

	if !n.settled.Load() {
		// Collisions among half the bundles mean nothing yet; report the settled outcome.
		return
	}
	for _, no := range toolNotices {
		if no.Shared {
			n.log.Info(no.String()) // a seat served by the bundle that sorts first, as designed
			continue
		}
		n.log.Warn(no.String())
	}
	for _, no := range promptNotices {
		n.log.Warn("prompt: " + no.String())
	}
	for _, no := range resNotices {
		n.log.Warn(no.String())
	}
	for _, no := range viewNotices {
		n.log.Warn(no.String())
	}
	n.logPins(oldTools, toolCat)
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

func listsEqual(a, b lists) bool {
	eq := func(x, y []json.RawMessage) bool {
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if !bytes.Equal(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return eq(a.tools, b.tools) && eq(a.prompts, b.prompts) && eq(a.resources, b.resources) && eq(a.templates, b.templates) &&
		eq(a.skills, b.skills)
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

// Announce tells every session that the lists named by the notification methods changed
// (for example after an access file changed what clients may see).
func (n *Node) Announce(methods ...string) {
	for _, m := range methods {
		n.broadcast(m, nil)
	}
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
	n.mu.Lock()
	n.closed = true
	bundles := make([]*bundle, 0, len(n.bundles))
	for _, b := range n.bundles {
		bundles = append(bundles, b)
	}
	n.mu.Unlock()
	// Slots stop their processes with a fresh context; a cancelled ctx must still hurry
	// them, so stop them here in parallel with ctx too.
	var wg sync.WaitGroup
	for _, b := range bundles {
		n.requestStop(b, "stopped: the node is shutting down")
		n.mu.Lock()
		var clients []*instance
		for _, s := range b.slots {
			if s != nil {
				clients = append(clients, s)
			}
		}
		n.mu.Unlock()
		for _, s := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.client.Close(ctx)
			}()
		}
	}
	wg.Wait()
	n.workers.Close()
	n.wg.Wait()
}
