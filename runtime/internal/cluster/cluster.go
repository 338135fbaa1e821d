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
package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/nats-io/nats.go"

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
}

// DefaultSkew is the default of Config.Skew.
const DefaultSkew = 30 * time.Second

// Bounds limit what the other nodes of a cluster can make this node hold. Zero fields take
// the defaults.
type Bounds struct {
	// Nodes is the most other nodes listed at once; the heartbeats of more are ignored.
	// Default 128.
	Nodes int
	// Announce is the largest heartbeat taken, in bytes. Default 256 KiB.
	Announce int
	// Bundles is the most bundles one heartbeat may announce; one with more is ignored.
	// Default 256.
	Bundles int
	// RemoteBundles is the most bundles of other nodes listed at once; past it, bundles of
	// the nodes whose ids sort last are left out. Default 512.
	RemoteBundles int
	// Tools is the most tools, prompts, resources and templates the bundles of other nodes
	// may list together (and one bundle may announce). Default 50,000.
	Tools int
	// Lists is the most bytes the lists of the bundles of other nodes may take together.
	// Default 64 MiB.
	Lists int
	// Message is the largest message about one call, once put together from its parts,
	// and the most bytes of parts held for one call. Default the node's bound on a bundle's
	// message (node.Limits.MaxLine).
	Message int
	// Parts is the most messages about one call put together from parts at once. Default 4.
	Parts int
	// PartGap is how long a message in parts may wait for its next part before it is
	// dropped. Default 30 s.
	PartGap time.Duration
}

func (b Bounds) withDefaults(message int) Bounds {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&b.Nodes, 128)
	def(&b.Announce, 256<<10)
	def(&b.Bundles, 256)
	def(&b.RemoteBundles, 512)
	def(&b.Tools, 50000)
	def(&b.Lists, 64<<20)
	def(&b.Message, message)
	def(&b.Parts, 4)
	if b.PartGap <= 0 {
		b.PartGap = 30 * time.Second
	}
	return b
}

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

// member is another node of the cluster, as its heartbeats describe it.
type member struct {
	ID      string         `json:"node"`
	Bundles []Announcement `json:"bundles"`
	// Tasks is the tag the ids of the node's tasks begin with (see node.TaskTag).
	Tasks string `json:"tasks,omitempty"`
	seen  time.Time
}

// Announcement is one bundle in a heartbeat: what a node serves.
type Announcement struct {
	Name   string   `json:"name"`
	Seats  []string `json:"seats,omitempty"`
	Prefix bool     `json:"prefix"`
	Era    string   `json:"era,omitempty"`
	Tools  int      `json:"tools"`
	Digest string   `json:"digest"`
}

var unsafe = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

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

// SetLocal makes the node's own bundles those of ms (as n.Apply would), keeping the bundles
// of the other nodes listed beside them.
func (c *Cluster) SetLocal(ms []*manifest.Manifest) {
	c.mu.Lock()
	c.local = ms
	c.mu.Unlock()
	c.apply("this node now runs it itself")
}

// apply gives the node its own bundles and those only other nodes serve. A bundle of the
// same name here wins: calls go to the node's own first. why says why bundles of other
// nodes that leave the list do: the calls still waiting for them end with it.
func (c *Cluster) apply(why string) {
	c.applyMu.Lock()
	defer c.applyMu.Unlock()
	c.mu.Lock()
	own := map[string]bool{}
	for _, m := range c.local {
		own[m.Name] = true
	}
	want := map[string]Announcement{}
	servers := map[string][]string{}
	var left []string
	var replicas, sharedBundles []string // without a key: nodes serving bundles this node serves too
	for _, id := range sortedKeys(c.members) {
		for _, a := range c.members[id].Bundles {
			if own[a.Name] {
				if c.keys.key == nil {
					replicas = appendNew(replicas, id)
					sharedBundles = appendNew(sharedBundles, a.Name)
				}
				continue
			}
			if _, seen := want[a.Name]; !seen {
				if len(want) >= c.b.RemoteBundles {
					left = append(left, a.Name)
					continue
				}
				want[a.Name] = a
			}
			servers[a.Name] = append(servers[a.Name], a.Digest)
		}
	}
	if len(left) > 0 && !slices.Equal(left, c.left) {
		c.log.Warn("bundles of other nodes left out: this node lists at most Bounds.RemoteBundles of them",
			"bound", c.b.RemoteBundles, "left_out", len(left), "first", left[0])
	}
	c.left = left
	c.noteUnkeyed(replicas, sharedBundles)
	var relist, gone []*link
	for name := range c.remote {
		if _, ok := want[name]; !ok {
			delete(c.remote, name)
			delete(c.digests, name)
			for l := range c.links {
				if l.bundle == name {
					gone = append(gone, l)
				}
			}
		}
	}
	for name, a := range want {
		prefix := a.Prefix
		m := c.remote[name]
		if m == nil || !slices.Equal(m.Seats, a.Seats) || m.Prefixed() != prefix {
			m = c.remoteManifest(a)
			c.remote[name] = m
		}
		slices.Sort(servers[name])
		digest := strings.Join(slices.Compact(servers[name]), ",")
		if old, ok := c.digests[name]; ok && old != digest {
			for l := range c.links {
				if l.bundle == name {
					relist = append(relist, l)
				}
			}
		}
		c.digests[name] = digest
	}
	all := append([]*manifest.Manifest(nil), c.local...)
	for _, name := range sortedKeys(c.remote) {
		all = append(all, c.remote[name])
	}
	c.mu.Unlock()
	for _, l := range gone {
		l.leave(fmt.Sprintf("bundle %q left cluster %q: %s", l.bundle, c.cfg.Name, why))
	}
	c.n.Apply(all)
	for _, l := range relist {
		l.listChanged()
	}
}

// servers names the other nodes that announce bundle.
func (c *Cluster) servers(bundle string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var ids []string
	for _, id := range sortedKeys(c.members) {
		if slices.ContainsFunc(c.members[id].Bundles, func(a Announcement) bool { return a.Name == bundle }) {
			ids = append(ids, id)
		}
	}
	return ids
}

// remoteManifest is the manifest of a bundle other nodes serve.
func (c *Cluster) remoteManifest(a Announcement) *manifest.Manifest {
	prefix := a.Prefix
	name := a.Name
	return &manifest.Manifest{
		Name:   name,
		Seats:  slices.Clone(a.Seats),
		Prefix: &prefix,
		Start:  manifest.StartEager,
		Timeouts: manifest.Timeouts{
			Start:    10 * time.Second,
			Call:     manifest.DefaultCallTimeout,
			CallMax:  manifest.DefaultCallMaxTimeout,
			Shutdown: time.Second,
		},
		Isolation: manifest.IsolationShared,
		Link:      func() (io.ReadWriteCloser, error) { return c.openLink(name) },
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// loop announces the node's bundles, serves them, and withdraws the nodes gone silent.
func (c *Cluster) loop() {
	defer c.wg.Done()
	beat := time.NewTicker(c.cfg.Heartbeat)
	defer beat.Stop()
	check := time.NewTicker(c.cfg.Silence / 12)
	defer check.Stop()
	c.beat()
	for {
		select {
		case <-c.stop:
			return
		case <-beat.C:
			c.beat()
		case <-check.C:
			c.mu.Lock()
			var silent []string
			for id, m := range c.members {
				if time.Since(m.seen) > c.cfg.Silence {
					silent = append(silent, id)
				}
			}
			c.mu.Unlock()
			for _, id := range silent {
				c.withdraw(id, fmt.Sprintf("it was not heard from for %s", c.cfg.Silence))
			}
			c.sweep()
		}
	}
}

// sweep drops the messages in parts whose next part stopped coming, and reports the bytes
// of parts held.
func (c *Cluster) sweep() int {
	now := time.Now()
	c.mu.Lock()
	links := make([]*link, 0, len(c.links))
	for l := range c.links {
		links = append(links, l)
	}
	served := make([]*served, 0, len(c.served))
	for _, s := range c.served {
		served = append(served, s)
	}
	c.mu.Unlock()
	held := 0
	for _, l := range links {
		held += l.sweep(now)
	}
	for _, s := range served {
		held += s.asm.sweep(now)
	}
	return held
}

// beat serves the node's own bundles on their subjects and announces them.
func (c *Cluster) beat() {
	shared := c.n.SharedBundles()
	out := member{ID: c.id, Tasks: c.n.TaskTag(), Bundles: make([]Announcement, 0, len(shared))}
	want := map[string]bool{}
	for _, b := range shared {
		want[b.Name] = true
		out.Bundles = append(out.Bundles, Announcement{Name: b.Name, Seats: b.Seats, Prefix: b.Prefix, Era: b.Era, Tools: len(b.Tools), Digest: b.Digest})
	}
	c.mu.Lock()
	for name, sub := range c.serving {
		if !want[name] {
			_ = sub.Unsubscribe()
			delete(c.serving, name)
		}
	}
	for name := range want {
		if c.serving[name] != nil {
			continue
		}
		g := c.bundleGuards[name]
		if g == nil {
			g = &guard{}
			c.bundleGuards[name] = g
		}
		sub, err := c.nc.QueueSubscribe(c.bundleSubject(name), "bundle."+name, func(m *nats.Msg) { c.serveBundle(name, g, m) })
		if err != nil {
			c.log.Warn("bundle not served to the cluster", "bundle", name, "error", err)
			continue
		}
		// Each call is one message, at most the server's max payload.
		_ = sub.SetPendingLimits(1<<16, 64<<20)
		c.serving[name] = sub
	}
	body, _ := json.Marshal(out)
	c.lastBeat = body
	c.mu.Unlock()
	if err := c.ctlOut.publish(&nats.Msg{Subject: c.subject("announce." + c.id), Data: body}); err != nil {
		c.log.Debug("heartbeat not sent", "error", err)
	}
}

// tail is the last token of a subject.
func tail(subject string) string { return subject[strings.LastIndexByte(subject, '.')+1:] }

// sender is the node a message on a subject ending in ".<node id>" comes from, once its
// signature, when the cluster has a key, says so; "" when it is refused.
func (c *Cluster) sender(msg *nats.Msg, g *guard, what string) string {
	id := tail(msg.Subject)
	signer, err := c.keys.check(msg, g)
	if err == nil && signer != "" && signer != id {
		err = errImposter
	}
	if err != nil {
		c.refusals.add(what, id, err)
		return ""
	}
	return id
}

// heard takes another node's heartbeat. Its size, its signature and the names in it are
// checked before it is decoded or kept.
func (c *Cluster) heard(msg *nats.Msg) {
	if len(msg.Data) > c.b.Announce {
		c.refusals.add("heartbeat", tail(msg.Subject), fmt.Errorf("%d bytes, over the bound of %d", len(msg.Data), c.b.Announce))
		return
	}
	id := c.sender(msg, &c.announces, "heartbeat")
	if id == "" || id == c.id {
		return
	}
	var m member
	var dropped error
	err := json.Unmarshal(msg.Data, &m)
	switch {
	case err != nil:
	case m.ID != id:
		err = fmt.Errorf("it names node %q on the subject of node %q", m.ID, id)
	default:
		dropped, err = c.b.sift(&m)
	}
	if err != nil {
		c.refusals.add("heartbeat", id, err)
		return
	}
	if dropped != nil {
		c.refusals.add("bundle of a heartbeat", id, dropped)
	}
	if !validTag(m.Tasks) {
		m.Tasks = "" // routes no task
	}
	m.seen = time.Now()
	c.mu.Lock()
	old := c.members[m.ID]
	if old == nil && len(c.members) >= c.b.Nodes {
		c.mu.Unlock()
		c.refusals.add("heartbeat", id, fmt.Errorf("this node lists %d other nodes, the bound", c.b.Nodes))
		return
	}
	c.members[m.ID] = &m
	changed := old == nil || !reflect.DeepEqual(old.Bundles, m.Bundles)
	c.mu.Unlock()
	if old == nil {
		c.log.Info("node joined the cluster", "node", m.ID, "bundles", len(m.Bundles))
	}
	if changed {
		c.apply(fmt.Sprintf("node %q no longer serves it", m.ID))
	}
}

// maxSeats bounds the seats of one bundle in a heartbeat.
const maxSeats = 64

// sift checks a heartbeat as a node's own bundles would be checked. A heartbeat over the
// bounds is refused whole (err); a bundle whose name, seats or figures are not what a
// node announces is left out, the first reason why in dropped.
func (b Bounds) sift(m *member) (dropped, err error) {
	if !manifest.ValidName(m.ID) {
		return nil, fmt.Errorf("node id %q: use 1 to 64 of A-Z a-z 0-9 _ -", m.ID)
	}
	if len(m.Bundles) > b.Bundles {
		return nil, fmt.Errorf("%d bundles, over the bound of %d", len(m.Bundles), b.Bundles)
	}
	names := make(map[string]bool, len(m.Bundles))
	kept := m.Bundles[:0]
	for _, a := range m.Bundles {
		var why error
		switch {
		case !manifest.ValidName(a.Name):
			why = fmt.Errorf("bundle name %q: use 1 to 64 of A-Z a-z 0-9 _ - (no dots: a dot separates a bundle from its tool)", a.Name)
		case names[a.Name]:
			why = fmt.Errorf("bundle %q announced twice", a.Name)
		case len(a.Seats) > maxSeats:
			why = fmt.Errorf("bundle %q: %d seats, over the bound of %d", a.Name, len(a.Seats), maxSeats)
		case a.Tools < 0 || a.Tools > b.Tools:
			why = fmt.Errorf("bundle %q: %d tools, over the bound of %d", a.Name, a.Tools, b.Tools)
		case len(a.Digest) > 64 || len(a.Era) > 64:
			why = fmt.Errorf("bundle %q: digest or era over 64 bytes", a.Name)
		}
		for _, seat := range a.Seats {
			if why == nil && !manifest.ValidName(seat) {
				why = fmt.Errorf("bundle %q: seat %q: use 1 to 64 of A-Z a-z 0-9 _ -", a.Name, seat)
			}
		}
		if why != nil {
			if dropped == nil {
				dropped = why
			}
			continue
		}
		names[a.Name] = true
		kept = append(kept, a)
	}
	m.Bundles = kept
	return dropped, nil
}

// bye takes another node's goodbye.
func (c *Cluster) bye(msg *nats.Msg) {
	if id := c.sender(msg, &c.byes, "goodbye"); id != "" && id != c.id {
		c.withdraw(id, "it left the cluster")
	}
}

// withdraw forgets a node: the calls it holds fail at once, naming it, the calls it made
// here are cancelled, and its bundles leave the lists unless another node serves them.
func (c *Cluster) withdraw(id, why string) {
	c.mu.Lock()
	gone, known := c.members[id]
	delete(c.members, id)
	links := make([]*link, 0, len(c.links))
	for l := range c.links {
		links = append(links, l)
	}
	var orphans []*served
	for _, s := range c.served {
		if s.from == id {
			orphans = append(orphans, s)
		}
	}
	c.mu.Unlock()
	if !known {
		return
	}
	c.log.Warn("node withdrawn from the cluster", "node", id, "why", why)
	for _, l := range links {
		l.failWhere(id, func(cl *call) string {
			return fmt.Sprintf("node %q of cluster %q, which was serving this call to bundle %q, is gone (%s)", id, c.cfg.Name, l.bundle, why)
		})
		// A call no node took although it was sent well before the node fell silent went
		// to it: the server gives new calls only to nodes still connected.
		if slices.ContainsFunc(gone.Bundles, func(a Announcement) bool { return a.Name == l.bundle }) {
			l.failUntaken(time.Now().Add(-c.cfg.Silence/3), fmt.Sprintf(
				"node %q of cluster %q, which was given this call to bundle %q, is gone (%s) without taking it", id, c.cfg.Name, l.bundle, why))
		}
	}
	for _, s := range orphans {
		s.cancel(fmt.Errorf("node %q, which made the call, is gone (%s)", id, why))
	}
	c.forwardsLost(id, why)
	c.apply(fmt.Sprintf("node %q, which served it, is gone (%s)", id, why))
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

// Status is the cluster as one node sees it, for toolnode.status.
type Status struct {
	Name string `json:"name"`
	URL  string `json:"url"`
	// Node is this node's id; Connection the state of its connection to NATS.
	Node       string `json:"node"`
	Connection string `json:"connection"`
	// Nodes are this node, then the others by id.
	Nodes []NodeStatus `json:"nodes"`
	// Warning says what fails in this cluster as it is set up (replicas without a
	// cluster key); "" when nothing does.
	Warning string `json:"warning,omitempty"`
}

// NodeStatus is one node of the cluster.
type NodeStatus struct {
	ID      string         `json:"node"`
	Self    bool           `json:"self,omitempty"`
	Bundles []Announcement `json:"bundles"`
	// LatencyMs is the round trip of a ping to the node, made for this report; Error says
	// why there is none.
	LatencyMs float64 `json:"latency_ms,omitempty"`
	Error     string  `json:"error,omitempty"`
	// SeenMsAgo is how long ago its last heartbeat came.
	SeenMsAgo int64 `json:"seen_ms_ago,omitempty"`
}

// noteUnkeyed says plainly, in the log and in Status, what fails when this node, without a
// cluster key, serves bundles that the nodes replicas serve too: they are replicas, and
// without a key each checks only the requestStates it made itself. It logs once per
// change. The caller holds c.mu.
func (c *Cluster) noteUnkeyed(replicas, bundles []string) {
	warning := ""
	if len(replicas) > 0 {
		slices.Sort(bundles)
		warning = fmt.Sprintf("this node and node(s) %s serve the same bundles (%s) without a cluster key: behind a balancer, "+
			"every input_required retry (a 2026-07-28 call answered with a question, asked again with the answer) that reaches another replica fails, "+
			"for without a key each node trusts only the requestStates it made; give every replica the same --cluster-key (docs/cluster.md)",
			strings.Join(replicas, ", "), strings.Join(bundles, ", "))
	}
	if warning != "" && warning != c.unkeyed {
		c.log.Warn(warning)
	}
	c.unkeyed = warning
}

// appendNew appends s to list unless list holds it.
func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// Status reports this node and each other node with what it serves and how long a round
// trip to it takes now.
func (c *Cluster) Status(ctx context.Context) Status {
	var self member
	c.mu.Lock()
	warning := c.unkeyed
	_ = json.Unmarshal(c.lastBeat, &self)
	out := []NodeStatus{{ID: c.id, Self: true, Bundles: self.Bundles}}
	for _, id := range sortedKeys(c.members) {
		m := c.members[id]
		out = append(out, NodeStatus{ID: id, Bundles: m.Bundles, SeenMsAgo: time.Since(m.seen).Milliseconds()})
	}
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for i := range out {
		if out[i].Self {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			if err := c.ping(ctx, out[i].ID); err != nil {
				out[i].Error = err.Error()
				return
			}
			out[i].LatencyMs = float64(time.Since(start).Microseconds()) / 1000
		}()
	}
	wg.Wait()
	return Status{Name: c.cfg.Name, URL: c.cfg.URL, Node: c.id, Connection: strings.ToLower(c.nc.Status().String()), Nodes: out, Warning: warning}
}

// ping asks node for an answer; with a cluster key, an answer it signed.
func (c *Cluster) ping(ctx context.Context, node string) error {
	inbox := c.nc.NewInbox()
	sub, err := c.nc.SubscribeSync(inbox)
	if err != nil {
		return fmt.Errorf("ping: %w", err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	msg := &nats.Msg{Subject: c.inboxSubject(node), Reply: inbox, Header: nats.Header{}}
	msg.Header.Set(hKind, "ping")
	if err := c.out.publish(msg); err != nil {
		return fmt.Errorf("ping: %w", err)
	}
	for {
		m, err := sub.NextMsgWithContext(ctx)
		if err != nil {
			return fmt.Errorf("ping: %w", err)
		}
		if m.Header.Get("Status") == "503" {
			return fmt.Errorf("ping: %w", nats.ErrNoResponders)
		}
		if signer, err := c.keys.check(m, nil); err == nil && (signer == "" || signer == node) {
			return nil
		}
	}
}

// Text writes the status for people, a line per node.
func (s Status) Text() string {
	var sb strings.Builder
	if s.Warning != "" {
		fmt.Fprintf(&sb, "WARNING: %s\n", s.Warning)
	}
	fmt.Fprintf(&sb, "cluster %s via %s (%s), %d nodes:\n", s.Name, s.URL, s.Connection, len(s.Nodes))
	for _, r := range s.Nodes {
		var names []string
		for _, b := range r.Bundles {
			names = append(names, fmt.Sprintf("%s (%d tools)", b.Name, b.Tools))
		}
		served := strings.Join(names, ", ")
		if served == "" {
			served = "no bundles"
		}
		switch {
		case r.Self:
			fmt.Fprintf(&sb, "  node %s (this node): %s\n", r.ID, served)
		case r.Error != "":
			fmt.Fprintf(&sb, "  node %s: %s; ping failed: %s\n", r.ID, served, r.Error)
		default:
			fmt.Fprintf(&sb, "  node %s: %s; round trip %.2f ms\n", r.ID, served, r.LatencyMs)
		}
	}
	return sb.String()
}

// Report is the cluster part of toolnode.status.
func (c *Cluster) Report(ctx context.Context) node.ClusterReport {
	st := c.Status(ctx)
	return node.ClusterReport{Text: st.Text(), Data: st}
}
