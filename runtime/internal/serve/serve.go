// Package serve runs a node: it wires the loader, the node, the fronts, the watcher and the
// shutdown together, so that the command line only parses flags and calls Run. Each part
// is a subsystem with the lifecycle every subsystem shares (lifecycle.go): set up, check,
// start, stop, close.
package serve

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/toolnode/toolnode/runtime/internal/access"
	"github.com/toolnode/toolnode/runtime/internal/audit"
	"github.com/toolnode/toolnode/runtime/internal/card"
	"github.com/toolnode/toolnode/runtime/internal/cluster"
	"github.com/toolnode/toolnode/runtime/internal/front"
	"github.com/toolnode/toolnode/runtime/internal/front/httpfront"
	"github.com/toolnode/toolnode/runtime/internal/manifest"
	"github.com/toolnode/toolnode/runtime/internal/node"
	"github.com/toolnode/toolnode/runtime/internal/oauth"
	"github.com/toolnode/toolnode/runtime/internal/reload"
	"github.com/toolnode/toolnode/runtime/internal/telemetry"
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
	// OAuthClientID and OAuthClientSecret, with OAuthIssuer, are the node's own client at
	// the issuer: it exchanges callers' tokens for the bundles with "token_exchange".
	OAuthClientID, OAuthClientSecret string
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
	stateKey  []byte // what the requestStates of the node and its bundles derive from
	loader    *reload.Loader
	manifests []*manifest.Manifest
	tel       *telemetry.Telemetry
	node      *node.Node
	srv       *front.Server
	access    *access.Holder
	audit     *audit.Log
	rs        *oauth.ResourceServer
	exchanger *oauth.Exchanger // nil unless the node exchanges tokens (token_exchange)
	cluster   *cluster.Cluster
	apply     func([]*manifest.Manifest) // what a reload applies the manifests to
	lock      *lockFile                  // nil without a lock file
	metrics   net.Listener               // nil without --metrics
	http      net.Listener               // nil without --http
	front     *httpfront.Handler
	wg        sync.WaitGroup
}

// build sets up and checks every subsystem in turn: it makes the node and its fronts,
// starts the bundles, and listens on the addresses cfg names, so that a bad one fails
// here, before anything serves. On failure it stops what it made.
func build(ctx context.Context, cfg Config) (*running, error) {
	r := &running{cfg: cfg, log: cfg.Logger}
	for _, s := range subsystems {
		var err error
		if s.setUp != nil {
			err = s.setUp(ctx, r)
		}
		if err == nil && s.check != nil {
			err = s.check(r)
		}
		if err != nil {
			r.stop()
			return nil, err
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
	for _, s := range subsystems {
		if s.start != nil {
			s.start(ctx, r, cancel)
		}
	}
}

// stop waits for what start serves to end, then stops every subsystem and closes them, each
// in the reverse order of their setting up: the listeners first, then the cluster is told
// (no call comes from it while the bundles stop), then the bundles stop; the cluster link,
// the audit log and telemetry, which record the stops, are closed last.
func (r *running) stop() {
	r.wg.Wait()
	for _, s := range slices.Backward(subsystems) {
		if s.stop != nil {
			s.stop(r)
		}
	}
	for _, s := range slices.Backward(subsystems) {
		if s.close != nil {
			s.close(r)
		}
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
