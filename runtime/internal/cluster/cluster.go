// Package cluster joins toolnode nodes on a NATS cluster, so that any node fronts the tools
// of every node. Each node announces its own bundles in heartbeats; every node lists the
// bundles of the others as bundles of its own whose connection is a link over NATS, so the
// merge rules give the same names on every node. A call to such a bundle is a request to
// the bundle's subject, where the nodes serving it share calls in a queue group; what the
// call carries (progress, log messages, cancellation, the bundle's requests, results larger
// than a NATS message) crosses with it. A node silent for Config.Silence, or saying
// goodbye, is withdrawn: its bundles leave the lists and the calls it holds fail at once.
//
// Other nodes are not trusted with the node's memory: what they can make it hold is
// bounded (Bounds), and checked before any of it is kept. With a cluster key
// (Config.KeyFile) every message is signed, and one that is not is dropped first thing;
// see docs/cluster.md for what a peer is trusted with.
//
// A file per job: cluster.go joins and leaves; membership.go sends and hears heartbeats
// and keeps the members; announce.go turns the others' announcements into bundles of this
// node; link.go is such a bundle's connection, forward.go and serve.go the two ends of a
// call, tasks.go the tasks that cross; bounds.go and auth.go hold what peers are trusted
// with; status.go says what the cluster looks like.
package cluster

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/nats-io/nats.go"

	"github.com/toolnode/toolnode/runtime/internal/clock"
	"github.com/toolnode/toolnode/runtime/internal/manifest"
	"github.com/toolnode/toolnode/runtime/internal/node"
)

// Defaults of Config.
const (
	DefaultName          = "toolnode"
	DefaultHeartbeat     = time.Second
	DefaultSilence       = 3 * time.Second
	DefaultAcceptTimeout = 10 * time.Second
)

// Config says how a node joins a cluster.
type Config struct {
	// URL is the NATS server, e.g. nats://127.0.0.1:4222 (several, comma-separated).
	URL string
	// Name is the cluster's name: nodes of one name see each other, on subjects
	// toolnode.<Name>.>. Default DefaultName.
	Name string
	// NodeID names this node to the others, in errors and status. Default the host name,
	// the process id and a few random characters.
	NodeID string
	// Creds is a NATS credentials file (a user JWT and its NKey seed).
	Creds string
	// TLSCA is a PEM file of the CAs that sign the server's certificate; TLSCert and TLSKey
	// are this node's client certificate and key, when the server asks for one.
	TLSCA, TLSCert, TLSKey string
	// Logger logs the cluster's events. Default: discard.
	Logger hclog.Logger
	// Heartbeat is how often the node announces its bundles. Default DefaultHeartbeat.
	Heartbeat time.Duration
	// Silence is how long a node may go unheard before it is withdrawn. Default
	// DefaultSilence.
	Silence time.Duration
	// AcceptTimeout bounds the wait for a node to take a call. Default
	// DefaultAcceptTimeout; longer than Silence, so that a call lost with a node that died
	// fails when the node is withdrawn, naming it.
	AcceptTimeout time.Duration
	// KeyFile holds the cluster key (see ReadKey). With one, every message a node sends is
	// signed with it, and a message not signed with it is dropped before anything of it is
	// held: only nodes holding the key are members. Without one, anything that can publish
	// on the cluster's subjects is a member. Default: none.
	KeyFile string
	// Skew is how far the clocks of two nodes may disagree: a signed message older or
	// further ahead than this is refused, so that it cannot be replayed later. Default
	// DefaultSkew.
	Skew time.Duration
	// Bounds limit what the other nodes can make this node hold.
	Bounds Bounds
	// Clock is the time heartbeats are sent and silence is counted by. Default the
	// system's; tests give a clock.Fake to pass a silence at once.
	Clock clock.Clock
	// Approvals shares the node's requests for approval with the other nodes (a node
	// with an access file, which may have approval rules; see approvals.go). Default
	// false: the node needs no permission on the subjects of approvals.
	Approvals bool
}

// DefaultSkew is the default of Config.Skew.
const DefaultSkew = 30 * time.Second

// Cluster is this node's membership of a cluster.
type Cluster struct {
	cfg Config
	id  string
	log hclog.Logger
	n   *node.Node
	nc  *nats.Conn // calls
	ctl *nats.Conn // heartbeats and goodbyes
	b   Bounds

	keys            *keyring
	out, ctlOut     *stream // what this node sends on nc and ctl
	announces, byes guard
	inboxGuard      guard
	approvalGuard   guard
	bundleGuards    map[string]*guard // by bundle served: they outlive subscriptions
	tasks           clusterTasks
	refusals        refusals

	fwd forwards // requests forwarded between replicas (forward.go)

	applyMu sync.Mutex // one Apply at a time, in order

	mu       sync.Mutex
	local    []*manifest.Manifest
	members  map[string]*member
	remote   map[string]*manifest.Manifest // bundles of other nodes listed here, by name
	digests  map[string]string             // what the lists of each remote bundle looked like
	links    map[*link]struct{}
	serving  map[string]*nats.Subscription
	served   map[string]*served
	lastBeat []byte
	lists    map[*link]map[string]listSize // what the lists of each link hold
	listed   listSize                      // the sum of lists
	left     []string                      // bundles left out, past Bounds.RemoteBundles
	unkeyed  string                        // what fails for replicas without a cluster key; "" when nothing does

	stop chan struct{}
	wg   sync.WaitGroup
}

// Join connects to the cluster and starts announcing n's bundles and listing the others'.
// It returns at once even when the server cannot be reached: the node serves its own
// bundles meanwhile and joins when it can. local are the node's own bundles, as given to
// n; change them with SetLocal from then on, not with n.Apply.
func Join(cfg Config, n *node.Node, local []*manifest.Manifest) (*Cluster, error) {
	if cfg.URL == "" {
		return nil, fmt.Errorf("cluster: no NATS server URL")
	}
	if cfg.Name == "" {
		cfg.Name = DefaultName
	}
	if !manifest.ValidName(cfg.Name) {
		return nil, fmt.Errorf("cluster name %q: use letters, digits, '_' and '-' only", cfg.Name)
	}
	if cfg.NodeID == "" {
		host, _ := os.Hostname()
		var r [3]byte
		_, _ = rand.Read(r[:])
		cfg.NodeID = fmt.Sprintf("%s-%d-%s", strings.Trim(unsafe.ReplaceAllString(host, "-"), "-"), os.Getpid(), hex.EncodeToString(r[:]))
	}
	if !manifest.ValidName(cfg.NodeID) {
		return nil, fmt.Errorf("node id %q: use letters, digits, '_' and '-' only", cfg.NodeID)
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = DefaultHeartbeat
	}
	cfg.Clock = clock.Or(cfg.Clock)
	if cfg.Silence <= 0 {
		cfg.Silence = DefaultSilence
	}
	if cfg.AcceptTimeout <= 0 {
		cfg.AcceptTimeout = DefaultAcceptTimeout
	}
	if cfg.Skew <= 0 {
		cfg.Skew = DefaultSkew
	}
	keys := &keyring{node: cfg.NodeID, window: cfg.Skew}
	if cfg.KeyFile != "" {
		key, err := ReadKey(cfg.KeyFile, func(w string) { cfg.Logger.Warn(w) })
		if err != nil {
			return nil, err
		}
		keys.key = key
	} else {
		cfg.Logger.Warn("cluster messages are not signed (no cluster key): whatever can publish on the cluster's subjects can announce bundles, say goodbye for a node and call this node's bundles; see docs/cluster.md",
			"subjects", "toolnode."+cfg.Name+".>")
	}
	c := &Cluster{cfg: cfg, id: cfg.NodeID, log: cfg.Logger, n: n, local: local, keys: keys,
		b:       cfg.Bounds.withDefaults(n.MaxBundleMessage()),
		members: map[string]*member{}, remote: map[string]*manifest.Manifest{}, digests: map[string]string{},
		links: map[*link]struct{}{}, serving: map[string]*nats.Subscription{}, served: map[string]*served{},
		bundleGuards: map[string]*guard{}, lists: map[*link]map[string]listSize{},
		stop: make(chan struct{})}
	c.refusals.log = c.log
	// Heartbeats go on a connection of their own: a large answer on the calls' connection
	// must not hold them up, or the nodes at both ends would think each other gone.
	ctl, err := c.connect("control",
		nats.ReconnectHandler(func(nc *nats.Conn) {
			c.log.Info("connected to the cluster again", "server", nc.ConnectedUrl())
			c.beat()
		}),
		nats.ConnectHandler(func(nc *nats.Conn) { c.log.Info("joined the cluster", "server", nc.ConnectedUrl()) }))
	if err != nil {
		return nil, err
	}
	// Answers come on subjects under this node's name, so that NATS permissions can keep
	// each node to its own (see docs/cluster.md).
	nc, err := c.connect("calls", nats.DisconnectErrHandler(c.disconnected), nats.CustomInboxPrefix(c.subject("reply."+c.id)))
	if err != nil {
		ctl.Close()
		return nil, err
	}
	c.ctl, c.nc = ctl, nc
	c.ctlOut, c.out = newStream(keys, ctl), newStream(keys, nc)
	subs := []struct {
		nc          *nats.Conn
		subject     string
		f           nats.MsgHandler
		msgs, bytes int
	}{
		{ctl, c.subject("announce.*"), c.heard, 1024, 16 << 20},
		{ctl, c.subject("bye.*"), c.bye, 1024, 1 << 20},
		{nc, c.inboxSubject(c.id), c.inbox, 1 << 16, c.b.Message + 8<<20},
	}
	for _, s := range subs {
		sub, err := s.nc.Subscribe(s.subject, s.f)
		if err != nil {
			nc.Close()
			ctl.Close()
			return nil, fmt.Errorf("cluster: subscribe to %s: %w", s.subject, err)
		}
		_ = sub.SetPendingLimits(s.msgs, s.bytes)
	}
	c.joinTasks()
	if err := c.joinApprovals(); err != nil {
		nc.Close()
		ctl.Close()
		return nil, err
	}
	n.AddBounds(c.bounds)
	c.log.Info("cluster", "name", cfg.Name, "node", c.id, "server", cfg.URL, "signed", keys.key != nil)
	c.wg.Add(1)
	go c.loop()
	return c, nil
}

// connect opens a connection to the cluster's server that reconnects for ever; role names
// it on the server.
func (c *Cluster) connect(role string, more ...nats.Option) (*nats.Conn, error) {
	opts := []nats.Option{
		nats.Name("toolnode " + c.id + " " + role),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250 * time.Millisecond),
		nats.RetryOnFailedConnect(true),
		nats.PingInterval(2 * time.Second),
		nats.MaxPingsOutstanding(2),
	}
	if c.cfg.Creds != "" {
		opts = append(opts, nats.UserCredentials(c.cfg.Creds))
	}
	if c.cfg.TLSCA != "" {
		opts = append(opts, nats.RootCAs(c.cfg.TLSCA))
	}
	if c.cfg.TLSCert != "" || c.cfg.TLSKey != "" {
		opts = append(opts, nats.ClientCert(c.cfg.TLSCert, c.cfg.TLSKey))
	}
	nc, err := nats.Connect(c.cfg.URL, append(opts, more...)...)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", c.cfg.URL, err)
	}
	return nc, nil
}

// ID is this node's id in the cluster.
func (c *Cluster) ID() string { return c.id }

func (c *Cluster) subject(tail string) string { return "toolnode." + c.cfg.Name + "." + tail }

func (c *Cluster) bundleSubject(bundle string) string { return c.subject("bundle." + bundle) }

func (c *Cluster) inboxSubject(node string) string { return c.subject("node." + node) }

// tell sends a message about a call to the node serving it: a line of the call, or, with
// a kind, what the kind says (kindGone: its client left).
func (c *Cluster) tell(node, key, kind string, line []byte) {
	hdr := nats.Header{}
	if kind != "" {
		hdr.Set(hKind, kind)
	}
	hdr.Set(hKey, key)
	hdr.Set(hFrom, c.id)
	if err := publish(c.out, c.inboxSubject(node), "", hdr, line); err != nil {
		c.log.Warn("message to a node of the cluster not sent", "node", node, "error", err)
	}
}

// disconnected fails the calls in flight to other nodes at once: their answers cannot come
// back. The node's own bundles are served meanwhile; nats.go reconnects.
func (c *Cluster) disconnected(_ *nats.Conn, err error) {
	select {
	case <-c.stop:
		return
	default:
	}
	c.log.Warn("lost the connection to the cluster; serving this node's own bundles and reconnecting", "error", err)
	c.mu.Lock()
	links := make([]*link, 0, len(c.links))
	for l := range c.links {
		links = append(links, l)
	}
	c.mu.Unlock()
	for _, l := range links {
		l.failWhere("", func(cl *call) string {
			return fmt.Sprintf("node %q lost its connection to cluster %q during the call to bundle %q", c.id, c.cfg.Name, l.bundle)
		})
	}
}

// Leave says goodbye, stops serving this node's bundles to the others and closes the
// connection. Bundles of other nodes stay listed until the node stops them.
func (c *Cluster) Leave() {
	select {
	case <-c.stop:
		return
	default:
	}
	close(c.stop)
	c.endForwards(fmt.Errorf("node %q is leaving the cluster", c.id))
	c.wg.Wait()
	c.mu.Lock()
	for name, sub := range c.serving {
		_ = sub.Unsubscribe()
		delete(c.serving, name)
	}
	c.mu.Unlock()
	if c.ctl.IsConnected() {
		_ = c.ctlOut.publish(&nats.Msg{Subject: c.subject("bye." + c.id)})
		_ = c.ctl.FlushTimeout(time.Second)
	}
	if c.nc.IsConnected() {
		_ = c.nc.FlushTimeout(time.Second)
	}
}

// Close ends the connection; call it after the node has stopped the bundles of the others.
func (c *Cluster) Close() {
	c.Leave()
	c.nc.Close()
	c.ctl.Close()
}
