// Package serve runs a node: it wires the loader, the node, the fronts, the watcher and the
// shutdown together, so that the command line only parses flags and calls Run.
package serve

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"golang.org/x/net/netutil"

	"github.com/toolnode/toolnode/runtime/internal/access"
	"github.com/toolnode/toolnode/runtime/internal/audit"
	"github.com/toolnode/toolnode/runtime/internal/card"
	"github.com/toolnode/toolnode/runtime/internal/cluster"
	"github.com/toolnode/toolnode/runtime/internal/front"
	"github.com/toolnode/toolnode/runtime/internal/front/httpfront"
	"github.com/toolnode/toolnode/runtime/internal/front/stdiofront"
	"github.com/toolnode/toolnode/runtime/internal/manifest"
	"github.com/toolnode/toolnode/runtime/internal/node"
	"github.com/toolnode/toolnode/runtime/internal/oauth"
	"github.com/toolnode/toolnode/runtime/internal/reload"
	"github.com/toolnode/toolnode/runtime/internal/telemetry"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// Config says what a node serves and how. Zero fields take the defaults their types name.
type Config struct {
	// Logger is the node's logger. Default: discard.
	Logger hclog.Logger
	// Version is the node's version, shown to clients and bundles.
	Version string
	// Source says where the bundles are: folders and an mcpServers file.
	Source reload.Source
	// Watch restarts, starts and stops bundles as their folders and files change.
	Watch bool
	// Node configures supervision and the bundles' limits; its Manifests and Logger are
	// filled by Run.
	Node node.Config
	// Front configures what both fronts share.
	Front front.Options
	// Stdio serves one client on Stdin and Stdout.
	Stdio  bool
	Stdin  io.Reader
	Stdout io.Writer
	// HTTP is the address of the Streamable HTTP front ("" for none), with its options.
	HTTP        string
	HTTPOptions httpfront.Options
	// MaxConns bounds the HTTP connections open at once. Default DefaultMaxConns.
	MaxConns int
	// ReadTimeout bounds the time a client takes to send a request, body included.
	// Default DefaultReadTimeout.
	ReadTimeout time.Duration
	// ConnIdle closes kept-alive connections idle this long. Default DefaultConnIdle.
	ConnIdle time.Duration
	// OnListening, when set, is told the URL of the HTTP front once it listens.
	OnListening func(url string)
	// OnServing, when set, is given the fronts' server once everything is built, before
	// anything is served: a test's way to the node and the front it runs in process.
	OnServing func(*front.Server)
	// Hurry, when it ends during shutdown, stops the bundles at once (SIGKILL) instead of
	// gracefully. Default: never.
	Hurry context.Context
	// AccessFile, when set, is the access file: the clients, their tokens and what each may
	// see and call. It is watched and reloaded; a bad file keeps the last good one.
	AccessFile string
	// AuditFile, when set, receives one JSON line per tools/call; AuditArgs adds the
	// arguments and results, each left out when over AuditMaxValue bytes. The file is
	// rotated at AuditMaxSize bytes, AuditKeep old files kept. Zero values take the audit
	// package's defaults.
	AuditFile     string
	AuditArgs     bool
	AuditMaxValue int
	AuditMaxSize  int64
	AuditKeep     int
	// Metrics, when set, is the address of a listener serving Prometheus metrics at
	// /metrics. Traces and metrics also go out by OTLP when the standard OTEL_EXPORTER_OTLP_*
	// variables say where.
	Metrics string
	// OAuthIssuer, when set, makes the HTTP front an OAuth 2.1 resource server of that
	// issuer; OAuthAudience is the audience tokens must carry, the front's own URL.
	// OAuthRequireATJWT accepts only tokens typed at+jwt (RFC 9068).
	OAuthIssuer, OAuthAudience string
	OAuthRequireATJWT          bool
	// Cluster, when set, joins the node to a NATS cluster: it fronts the bundles of every
	// node, and serves its own to the others.
	Cluster *cluster.Config
	// LockFile, when set, is the lock file (toolnode pin writes it): only the tools it pins,
	// as it pins them, are served; the others are held back. It is watched and reloaded
	// with Watch; a bad file keeps the last good one.
	LockFile string
}

// HTTP server bounds: a client may take this long to send its headers and its whole
// request, and a kept-alive connection may sit idle this long.
const (
	ReadHeaderTimeout  = 10 * time.Second
	DefaultReadTimeout = time.Minute
	DefaultConnIdle    = 2 * time.Minute
	// DefaultMaxConns is how many HTTP connections may be open at once by default; each
	// costs a file descriptor, which bundles need too.
	DefaultMaxConns = 1024
)

// Run starts the bundles and serves them until ctx ends or a front fails (stdin closed,
// the listener failing), then stops everything. A front's failure is its error.
func Run(ctx context.Context, cfg Config) error {
	cfg = cfg.withDefaults()
	r, err := build(ctx, cfg)
	if err != nil {
		return err
	}
	if cfg.OnServing != nil {
		cfg.OnServing(r.srv)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	r.start(ctx, cancel)
	<-ctx.Done()
	cancel(nil)
	r.stop()
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

func (cfg Config) withDefaults() Config {
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.Hurry == nil {
		cfg.Hurry = context.Background()
	}
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = DefaultMaxConns
	}
	if cfg.ReadTimeout <= 0 {
		cfg.ReadTimeout = DefaultReadTimeout
	}
	if cfg.ConnIdle <= 0 {
		cfg.ConnIdle = DefaultConnIdle
	}
	return cfg
}

// running is a node and everything that serves it, as build makes it: start serves,
// stop ends it all.
type running struct {
	cfg       Config
	log       hclog.Logger
	loader    *reload.Loader
	manifests []*manifest.Manifest
	tel       *telemetry.Telemetry
	node      *node.Node
	srv       *front.Server
	access    *access.Holder
	audit     *audit.Log
	rs        *oauth.ResourceServer
	cluster   *cluster.Cluster
	apply     func([]*manifest.Manifest) // what a reload applies the manifests to
	lock      *lockFile                  // nil without a lock file
	metrics   net.Listener               // nil without --metrics
	http      net.Listener               // nil without --http
	front     *httpfront.Handler
	wg        sync.WaitGroup
}

// build makes the node and its fronts and starts the bundles; it listens on the addresses
// cfg names, so that a bad one fails here, before anything serves. On failure it stops
// what it made.
func build(ctx context.Context, cfg Config) (r *running, err error) {
	log := cfg.Logger
	r = &running{cfg: cfg, log: log, loader: reload.NewLoader(cfg.Source, log)}
	r.manifests = r.loader.Load()
	if len(r.manifests) == 0 {
		log.Warn("no bundles found; the node serves no tools until some are added", "bundles", fmt.Sprint(cfg.Source.Dirs))
	}
	stateKey, err := requestStateKey(cfg.Cluster)
	if err != nil {
		return nil, err
	}
	if r.tel, err = telemetry.New(ctx, telemetry.Config{ServiceVersion: cfg.Version, Prometheus: cfg.Metrics != "", Logger: log.Named("telemetry")}); err != nil {
		return nil, fmt.Errorf("telemetry: %w", err)
	}
	nc := cfg.Node
	nc.Logger, nc.Manifests, nc.Version, nc.Telemetry = log, r.manifests, cfg.Version, r.tel.Recorder()
	nc.StateKey = cluster.Derive(stateKey, "bundles")
	if cfg.LockFile != "" {
		if r.lock, nc.Lock, err = openLock(cfg.LockFile, log.Named("pin")); err != nil {
			return nil, err
		}
	}
	r.node = node.New(nc)
	if r.lock != nil {
		r.lock.serveTo(r.node)
	}
	r.node.Start()
	r.apply = r.node.Apply
	defer func() {
		if err != nil {
			r.stop()
		}
	}()
	fo := cfg.Front
	fo.Version, fo.Telemetry, fo.StateKey = cfg.Version, r.tel.Recorder(), cluster.Derive(stateKey, "front")
	if fo.Logger == nil {
		fo.Logger = log.Named("front")
	}
	if cfg.AccessFile != "" {
		n := r.node
		if r.access, err = access.Open(cfg.AccessFile, log.Named("access"), func(p *access.Policy) {
			log.Info("access file reloaded", "file", cfg.AccessFile)
			n.SetApprovals(len(p.Approvals()) > 0, r.recordApproval)
			n.Announce(mcp.NotifyToolsListChanged, mcp.NotifyPromptsListChanged, mcp.NotifyResourcesChanged)
		}); err != nil {
			return r, fmt.Errorf("--access: %w", err)
		}
		if fo.Client != "" {
			if _, ok := r.access.Policy().Client(fo.Client); !ok {
				return r, fmt.Errorf("--client %s: the access file %s has no client of that name (it has %s)", fo.Client, cfg.AccessFile, clientNames(r.access.Policy()))
			}
		}
		fo.Access = r.access
	}
	if cfg.AuditFile != "" {
		if r.audit, err = audit.Open(cfg.AuditFile, audit.Config{Args: cfg.AuditArgs, MaxValue: cfg.AuditMaxValue,
			MaxSize: cfg.AuditMaxSize, Keep: cfg.AuditKeep, Log: log.Named("audit")}); err != nil {
			return r, fmt.Errorf("--audit: %w", err)
		}
		fo.Audit = r.audit
		a := r.audit
		r.node.AddBounds(func() []node.Bound {
			return []node.Bound{{Name: "audit.queued_bytes", Limit: a.QueueBytes(), Used: a.Queued()}}
		})
	}
	if r.access != nil {
		r.node.SetApprovals(len(r.access.Policy().Approvals()) > 0, r.recordApproval)
	}
	if cfg.Cluster != nil {
		cc := *cfg.Cluster
		cc.Logger, cc.Approvals = log.Named("cluster"), r.access != nil
		if r.cluster, err = cluster.Join(cc, r.node, r.manifests); err != nil {
			return r, fmt.Errorf("--cluster: %w", err)
		}
		r.node.SetClusterReport(r.cluster.Report)
		r.apply = r.cluster.SetLocal
	}
	if r.cluster != nil {
		// A retry that lands on another replica is taken to the one holding its call.
		fo.NodeID = r.cluster.ID()
	}
	r.srv = front.NewServer(r.node, fo)
	if cfg.Metrics != "" {
		if r.metrics, err = net.Listen("tcp", cfg.Metrics); err != nil {
			return r, fmt.Errorf("--metrics %s: %w", cfg.Metrics, err)
		}
	}
	if cfg.OAuthIssuer != "" {
		var scopes []string
		if r.access != nil {
			for _, c := range r.access.Policy().Clients() {
				scopes = append(scopes, c.Scopes...)
			}
		}
		if r.rs, err = oauth.New(ctx, oauth.Config{Issuer: cfg.OAuthIssuer, ResourceURL: cfg.OAuthAudience, ScopesSupported: scopes,
			RequireATJWT: cfg.OAuthRequireATJWT, Logger: log.Named("oauth")}); err != nil {
			return r, err
		}
	}
	if cfg.HTTP != "" {
		if r.http, err = net.Listen("tcp", cfg.HTTP); err != nil {
			return r, fmt.Errorf("listen on %s: %w", cfg.HTTP, err)
		}
		ho := cfg.HTTPOptions
		if host, _, _ := net.SplitHostPort(r.http.Addr().String()); loopbackIP(host) {
			ho.CheckHost = true
		} else if ho.Token == "" && r.access == nil && r.rs == nil {
			log.Warn("the HTTP front listens beyond loopback without a --token-file, --access or --oauth-issuer: anyone who reaches it can call every tool", "addr", cfg.HTTP)
		}
		if r.cluster != nil {
			ho.Replicas = replicas{r.cluster}
		}
		r.front = httpfront.New(r.srv, ho)
		r.node.AddBounds(r.front.Bounds)
		if r.cluster != nil {
			h := r.front
			if err := r.cluster.ServeFront(func(w http.ResponseWriter, req *http.Request, f *cluster.Forwarded) {
				h.ServeForwarded(w, req, front.Identity{Client: f.Client, Subject: f.Subject, Source: f.Source, Groups: f.Groups})
			}); err != nil {
				return r, err
			}
		}
	}
	return r, nil
}

// clientNames lists the clients of an access file, for an error naming them.
func clientNames(p *access.Policy) string {
	var names []string
	for _, c := range p.Clients() {
		names = append(names, c.Name)
	}
	return strings.Join(names, ", ")
}

// start serves: the fronts, the metrics listener, the watchers of the bundles and the access
// file. A front that fails or ends (stdin closed) ends ctx through cancel.
func (r *running) start(ctx context.Context, cancel context.CancelCauseFunc) {
	cfg, log := r.cfg, r.log
	if r.access != nil && cfg.Watch {
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			if err := r.access.Watch(ctx, 0); err != nil {
				log.Warn("the access file is not watched", "error", err)
			}
		}()
	}
	if r.metrics != nil {
		log.Info("metrics listening", "url", "http://"+r.metrics.Addr().String()+"/metrics")
		mux := http.NewServeMux()
		mux.Handle("/metrics", telemetry.CheckHost(cfg.Metrics, r.tel.MetricsHandler()))
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			if err := serveMux(ctx, r.metrics, mux, cfg, log); err != nil {
				log.Error("metrics listener failed", "error", err)
			}
		}()
	}
	if cfg.Watch {
		watch(ctx, &r.wg, r.loader, r.manifests, r.apply, log)
		if r.lock != nil {
			r.lock.watch(ctx, &r.wg)
		}
	}
	if r.http != nil {
		url := "http://" + r.http.Addr().String() + "/mcp"
		log.Info("HTTP front listening", "url", url)
		if cfg.OnListening != nil {
			cfg.OnListening(url)
		}
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			ln := httpfront.WrapListener(netutil.LimitListener(r.http, cfg.MaxConns), cfg.HTTPOptions.TrustedProxies)
			cancel(serveHTTP(ctx, ln, r.front, r.node, r.rs, cfg, log))
		}()
	}
	if cfg.Stdio {
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			cancel(stdiofront.Serve(ctx, r.srv, cfg.Stdin, cfg.Stdout))
		}()
	}
}

// stop ends what start serves and stops the bundles: the cluster is told first, so that
// no call comes from it while they stop, then the node, then the cluster link, the audit
// log and telemetry, which record the stops.
func (r *running) stop() {
	r.wg.Wait()
	for _, ln := range []net.Listener{r.metrics, r.http} {
		if ln != nil {
			ln.Close() // a no-op after serving; listened on but never served otherwise
		}
	}
	if r.cluster != nil {
		r.cluster.Leave()
	}
	r.log.Info("stopping bundles")
	start := time.Now()
	r.node.Close(r.cfg.Hurry)
	r.log.Info("stopped", "took", time.Since(start).Round(time.Millisecond))
	if r.cluster != nil {
		r.cluster.Close()
	}
	if r.audit != nil {
		r.audit.Close()
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := r.tel.Shutdown(sctx); err != nil {
		r.log.Warn("telemetry did not flush", "error", err)
	}
}

// watch restarts, starts and stops bundles as their manifests, programs and config change.
func watch(ctx context.Context, wg *sync.WaitGroup, loader *reload.Loader, manifests []*manifest.Manifest, apply func([]*manifest.Manifest), log hclog.Logger) {
	w, err := reload.NewWatcher(log.Named("reload"), 0)
	if err != nil {
		log.Warn("hot reload is off", "error", err)
		return
	}
	w.Watch(loader.WatchPaths(manifests))
	wg.Add(1)
	go func() {
		defer wg.Done()
		w.Run(ctx, func() {
			ms := loader.Load()
			apply(ms)
			w.Watch(loader.WatchPaths(ms))
		})
	}()
}

func loopbackIP(host string) bool {
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// serveHTTP serves the HTTP front on ln until ctx ends or serving fails, with n's server
// card beside it; with rs, as an OAuth resource server publishing its metadata.
func serveHTTP(ctx context.Context, ln net.Listener, h *httpfront.Handler, n *node.Node, rs *oauth.ResourceServer, cfg Config, log hclog.Logger) error {
	mux := http.NewServeMux()
	var mcp http.Handler = h
	if rs != nil {
		for _, p := range rs.MetadataPaths() {
			mux.Handle(p, rs.MetadataHandler())
		}
		mcp = h.WithOAuth(rs)
	}
	mux.Handle("/mcp", mcp)
	mux.Handle(httpfront.ApprovalsPath, mcp)
	cards := cardHandler(n, cfg)
	mux.Handle("/mcp"+card.Suffix, cards)
	mux.Handle(card.CatalogPath, cards)
	err := serveMux(ctx, ln, mux, cfg, log)
	h.Close()
	return err
}

// serveMux serves mux on ln with the node's HTTP bounds until ctx ends or serving fails.
func serveMux(ctx context.Context, ln net.Listener, mux *http.ServeMux, cfg Config, log hclog.Logger) error {
	hs := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: min(ReadHeaderTimeout, cfg.ReadTimeout),
		ReadTimeout:       cfg.ReadTimeout,
		IdleTimeout:       cfg.ConnIdle,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          log.StandardLogger(&hclog.StandardLoggerOptions{InferLevels: true}),
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("HTTP front: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = hs.Shutdown(sctx)
	<-errc
	return nil
}

// replicas is the cluster as the HTTP front's replicas: requests for another node's
// session or waiting call are forwarded there over NATS.
type replicas struct{ c *cluster.Cluster }

func (rs replicas) Self() string { return rs.c.ID() }

// forwardedHeaders are the headers of a client's request that its forwarding carries: what
// MCP reads (credentials stay with the replica that checked them).
var forwardedHeaders = []string{"Content-Type", "Accept", "Last-Event-Id", httpfront.HeaderSessionID,
	httpfront.HeaderProtocolVersion, httpfront.HeaderMethod, httpfront.HeaderName}

func (rs replicas) Forward(ctx context.Context, owner string, r *http.Request, body []byte, id front.Identity, w http.ResponseWriter) error {
	hdr := http.Header{}
	for _, k := range forwardedHeaders {
		if v := r.Header.Values(k); len(v) > 0 {
			hdr[http.CanonicalHeaderKey(k)] = v
		}
	}
	for k, v := range r.Header {
		if strings.HasPrefix(k, http.CanonicalHeaderKey(httpfront.HeaderParamStart)) {
			hdr[k] = v
		}
	}
	err := rs.c.Forward(ctx, owner, &cluster.Forwarded{Method: r.Method, Header: hdr, Body: body,
		Client: id.Client, Subject: id.Subject, Source: id.Source, Groups: id.Groups}, w)
	if errors.Is(err, cluster.ErrUnknownNode) {
		return fmt.Errorf("%w: %v", httpfront.ErrUnknownReplica, err)
	}
	return err
}

// requestStateKey is the key the requestStates of the node and of its bundles derive from.
// The replicas of a cluster with a key share it, derived from the cluster key, so that each
// checks the states the others gave out; otherwise it is new for each run.
func requestStateKey(cc *cluster.Config) ([]byte, error) {
	if cc != nil && cc.KeyFile != "" {
		key, err := cluster.ReadKey(cc.KeyFile, func(string) {})
		if err != nil {
			return nil, fmt.Errorf("--cluster-key: %w", err)
		}
		return cluster.Derive(key, "toolnode requestState"), nil
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("a requestState key: %w", err)
	}
	return key, nil
}

// recordApproval writes what happened to a request for approval in the audit log, when
// there is one.
func (r *running) recordApproval(ev node.ApprovalEvent) {
	if r.audit == nil {
		return
	}
	r.audit.Record(audit.Record{Time: time.Now(), Client: ev.Caller, Tool: ev.Tool, Outcome: ev.What,
		Arguments: ev.Arguments, Approval: ev.ID, Approver: ev.By})
}
