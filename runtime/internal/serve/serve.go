// Package serve runs a node: it wires the loader, the node, the fronts, the watcher and the
// shutdown together, so that the command line only parses flags and calls Run.
package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"golang.org/x/net/netutil"

	"github.com/toolnode/toolnode/runtime/internal/access"
	"github.com/toolnode/toolnode/runtime/internal/audit"
	"github.com/toolnode/toolnode/runtime/internal/cluster"
	"github.com/toolnode/toolnode/runtime/internal/front"
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
	HTTPOptions front.HTTPOptions
	// MaxConns bounds the HTTP connections open at once. Default DefaultMaxConns.
	MaxConns int
	// ReadTimeout bounds the time a client takes to send a request, body included.
	// Default DefaultReadTimeout.
	ReadTimeout time.Duration
	// ConnIdle closes kept-alive connections idle this long. Default DefaultConnIdle.
	ConnIdle time.Duration
	// OnListening, when set, is told the URL of the HTTP front once it listens.
	OnListening func(url string)
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
	log := cfg.Logger
	loader := reload.NewLoader(cfg.Source, log)
	manifests := loader.Load()
	if len(manifests) == 0 {
		log.Warn("no bundles found; the node serves no tools until some are added", "bundles", fmt.Sprint(cfg.Source.Dirs))
	}
	tel, err := telemetry.New(ctx, telemetry.Config{ServiceVersion: cfg.Version, Prometheus: cfg.Metrics != "", Logger: log.Named("telemetry")})
	if err != nil {
		return fmt.Errorf("telemetry: %w", err)
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := tel.Shutdown(sctx); err != nil {
			log.Warn("telemetry did not flush", "error", err)
		}
	}()
	nc := cfg.Node
	nc.Logger, nc.Manifests, nc.Version, nc.Telemetry = log, manifests, cfg.Version, tel.Recorder()
	n := node.New(nc)
	n.Start()
	fo := cfg.Front
	fo.Version, fo.Telemetry = cfg.Version, tel.Recorder()
	if fo.Logger == nil {
		fo.Logger = log.Named("front")
	}

	// Either front ending or ctx ending stops the node.
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	if cfg.AccessFile != "" {
		h, err := access.Open(cfg.AccessFile, log.Named("access"), func(*access.Policy) {
			log.Info("access file reloaded", "file", cfg.AccessFile)
			n.Announce(mcp.NotifyToolsListChanged, mcp.NotifyPromptsListChanged)
		})
		if err != nil {
			cancel(nil)
			shutdown(n, log, cfg.Hurry)
			return fmt.Errorf("--access: %w", err)
		}
		fo.Access = h
		if cfg.Watch {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := h.Watch(ctx, 0); err != nil {
					log.Warn("the access file is not watched", "error", err)
				}
			}()
		}
	}
	if cfg.AuditFile != "" {
		a, err := audit.Open(cfg.AuditFile, audit.Config{Args: cfg.AuditArgs, MaxValue: cfg.AuditMaxValue,
			MaxSize: cfg.AuditMaxSize, Keep: cfg.AuditKeep, Log: log.Named("audit")})
		if err != nil {
			cancel(nil)
			wg.Wait()
			shutdown(n, log, cfg.Hurry)
			return fmt.Errorf("--audit: %w", err)
		}
		defer a.Close()
		fo.Audit = a
		n.AddBounds(func() []node.Bound {
			return []node.Bound{{Name: "audit.queued_bytes", Limit: a.QueueBytes(), Used: a.Queued()}}
		})
	}
	srv := front.NewServer(n, fo)
	if cfg.Metrics != "" {
		ln, err := net.Listen("tcp", cfg.Metrics)
		if err != nil {
			cancel(nil)
			wg.Wait()
			shutdown(n, log, cfg.Hurry)
			return fmt.Errorf("--metrics %s: %w", cfg.Metrics, err)
		}
		log.Info("metrics listening", "url", "http://"+ln.Addr().String()+"/metrics")
		mux := http.NewServeMux()
		mux.Handle("/metrics", telemetry.CheckHost(cfg.Metrics, tel.MetricsHandler()))
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := serveMux(ctx, ln, mux, cfg, log); err != nil {
				log.Error("metrics listener failed", "error", err)
			}
		}()
	}
	var rs *oauth.ResourceServer
	if cfg.OAuthIssuer != "" {
		var scopes []string
		if fo.Access != nil {
			for _, c := range fo.Access.Policy().Clients() {
				scopes = append(scopes, c.Scopes...)
			}
		}
		rs, err = oauth.New(ctx, oauth.Config{Issuer: cfg.OAuthIssuer, ResourceURL: cfg.OAuthAudience, ScopesSupported: scopes,
			RequireATJWT: cfg.OAuthRequireATJWT, Logger: log.Named("oauth")})
		if err != nil {
			cancel(nil)
			wg.Wait()
			shutdown(n, log, cfg.Hurry)
			return err
		}
	}
	apply := n.Apply
	var cl *cluster.Cluster
	if cfg.Cluster != nil {
		cc := *cfg.Cluster
		cc.Logger = log.Named("cluster")
		if cl, err = cluster.Join(cc, n, manifests); err != nil {
			cancel(nil)
			wg.Wait()
			shutdown(n, log, cfg.Hurry)
			return fmt.Errorf("--cluster: %w", err)
		}
		defer cl.Close()
		n.SetClusterReport(cl.Report)
		apply = cl.SetLocal
	}
	if cfg.Watch {
		watch(ctx, &wg, loader, manifests, apply, log)
	}
	if cfg.HTTP != "" {
		ln, err := net.Listen("tcp", cfg.HTTP)
		if err != nil {
			cancel(nil)
			wg.Wait()
			shutdown(n, log, cfg.Hurry)
			return fmt.Errorf("listen on %s: %w", cfg.HTTP, err)
		}
		ho := cfg.HTTPOptions
		if host, _, _ := net.SplitHostPort(ln.Addr().String()); loopbackIP(host) {
			ho.CheckHost = true
		} else if ho.Token == "" {
			log.Warn("the HTTP front listens beyond loopback without a --token-file: anyone who reaches it can call every tool", "addr", cfg.HTTP)
		}
		h := srv.NewHTTPHandler(ho)
		n.AddBounds(h.Bounds)
		url := "http://" + ln.Addr().String() + "/mcp"
		log.Info("HTTP front listening", "url", url)
		if cfg.OnListening != nil {
			cfg.OnListening(url)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			cancel(serveHTTP(ctx, netutil.LimitListener(ln, cfg.MaxConns), h, rs, cfg, log))
		}()
	}
	if cfg.Stdio {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cancel(srv.ServeStdio(ctx, cfg.Stdin, cfg.Stdout))
		}()
	}
	<-ctx.Done()
	cancel(nil)
	wg.Wait()
	if cl != nil {
		cl.Leave()
	}
	shutdown(n, log, cfg.Hurry)
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
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

// serveHTTP serves the HTTP front on ln until ctx ends or serving fails; with rs, as an
// OAuth resource server publishing its metadata.
func serveHTTP(ctx context.Context, ln net.Listener, h *front.HTTPHandler, rs *oauth.ResourceServer, cfg Config, log hclog.Logger) error {
	mux := http.NewServeMux()
	var mcp http.Handler = h
	if rs != nil {
		for _, p := range rs.MetadataPaths() {
			mux.Handle(p, rs.MetadataHandler())
		}
		mcp = h.WithOAuth(rs)
	}
	mux.Handle("/mcp", mcp)
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

// shutdown stops the bundles gracefully, or at once when hurry ends.
func shutdown(n *node.Node, log hclog.Logger, hurry context.Context) {
	log.Info("stopping bundles")
	start := time.Now()
	n.Close(hurry)
	log.Info("stopped", "took", time.Since(start).Round(time.Millisecond))
}
