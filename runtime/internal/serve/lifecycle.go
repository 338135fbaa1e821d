package serve

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"golang.org/x/net/netutil"

	"github.com/toolnode/toolnode/runtime/internal/access"
	"github.com/toolnode/toolnode/runtime/internal/audit"
	"github.com/toolnode/toolnode/runtime/internal/cluster"
	"github.com/toolnode/toolnode/runtime/internal/front"
	"github.com/toolnode/toolnode/runtime/internal/front/httpfront"
	"github.com/toolnode/toolnode/runtime/internal/front/stdiofront"
	"github.com/toolnode/toolnode/runtime/internal/node"
	"github.com/toolnode/toolnode/runtime/internal/oauth"
	"github.com/toolnode/toolnode/runtime/internal/rawio"
	"github.com/toolnode/toolnode/runtime/internal/reload"
	"github.com/toolnode/toolnode/runtime/internal/telemetry"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// The subsystems of a running node share one lifecycle, as caddy's modules do:
//
//   - set up: made from the Config, in the order of subsystems, each seeing those made
//     before it; files are opened and addresses listened on here, so that a bad one fails
//     before anything serves. The node is made and its bundles started here, for the
//     cluster to announce them.
//   - check: held against the Config and the subsystems before it.
//   - start: serve, on goroutines of running.wg; a front that ends or fails ends the run.
//   - stop: once everything started has returned, in the reverse order: stop serving,
//     tell peers, stop the bundles.
//   - close: after every stop, in the reverse order again: let go of what is held
//     (connections, files), so that the records of the stops are kept.
//
// Each subsystem is checked right after it is set up, as caddy validates a module once
// provisioned, so that a bad setting fails before the subsystems after it act on it (a
// cluster is not joined by a node about to refuse its --client). A phase a subsystem has
// nothing to do in is nil. stop and close run for every subsystem, set up or not (a build
// that fails stops what it made): each looks at what it holds.
type subsystem struct {
	name  string
	setUp func(ctx context.Context, r *running) error
	check func(r *running) error
	start func(ctx context.Context, r *running, cancel context.CancelCauseFunc)
	stop  func(r *running)
	close func(r *running)
}

// subsystems in the order they are set up.
var subsystems = []subsystem{
	{name: "telemetry", setUp: setUpTelemetry, close: closeTelemetry},
	{name: "exchange", setUp: setUpExchange},
	{name: "node", setUp: setUpNode, start: watchBundles, stop: stopNode},
	{name: "access", setUp: setUpAccess, check: checkAccess, start: watchAccess},
	{name: "audit", setUp: setUpAudit, close: closeAudit},
	{name: "cluster", setUp: joinCluster, stop: leaveCluster, close: closeCluster},
	{name: "front", setUp: setUpFront},
	{name: "metrics", setUp: listenMetrics, start: serveMetrics, stop: closeMetrics},
	{name: "oauth", setUp: setUpOAuth},
	{name: "http", setUp: listenHTTP, start: serveHTTPFront, stop: closeHTTP},
	{name: "stdio", start: serveStdio},
}

func setUpTelemetry(ctx context.Context, r *running) (err error) {
	r.stateKey, err = requestStateKey(r.cfg.Cluster)
	if err != nil {
		return err
	}
	if r.tel, err = telemetry.New(ctx, telemetry.Config{ServiceVersion: r.cfg.Version, Prometheus: r.cfg.Metrics != "", Logger: r.log.Named("telemetry")}); err != nil {
		return fmt.Errorf("telemetry: %w", err)
	}
	return nil
}

func closeTelemetry(r *running) {
	if r.tel == nil {
		return
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := r.tel.Shutdown(sctx); err != nil {
		r.log.Warn("telemetry did not flush", "error", err)
	}
}

// setUpExchange makes the node a client of its OAuth issuer, for the bundles that call
// their services as each caller (token_exchange), when it is given a client id there.
func setUpExchange(ctx context.Context, r *running) (err error) {
	cfg := r.cfg
	if cfg.OAuthIssuer == "" || cfg.OAuthClientID == "" {
		return nil
	}
	r.exchanger, err = oauth.NewExchanger(ctx, oauth.ExchangeConfig{Issuer: cfg.OAuthIssuer,
		ClientID: cfg.OAuthClientID, ClientSecret: cfg.OAuthClientSecret})
	return err
}

// setUpNode finds the bundles, makes the node, with the lock file when there is one, and
// starts the bundles.
func setUpNode(_ context.Context, r *running) (err error) {
	cfg, log := r.cfg, r.log
	r.loader = reload.NewLoader(cfg.Source, log)
	r.manifests = r.loader.Load()
	if len(r.manifests) == 0 {
		log.Warn("no bundles found; the node serves no tools until some are added", "bundles", fmt.Sprint(cfg.Source.Dirs))
	}
	nc := cfg.Node
	nc.Logger, nc.Manifests, nc.Version, nc.Telemetry = log, r.manifests, cfg.Version, r.tel.Recorder()
	nc.StateKey = cluster.Derive(r.stateKey, "bundles")
	if cfg.LockFile != "" {
		if r.lock, nc.Lock, err = openLock(cfg.LockFile, log.Named("pin")); err != nil {
			return err
		}
	}
	nc.Exchanger = r.exchanger
	for _, m := range r.manifests {
		if m.TokenExchange != nil && r.exchanger == nil {
			log.Warn("the bundle calls its service as each caller (token_exchange), and this node exchanges no tokens: its calls fail until the node runs with --oauth-issuer and --oauth-client-id", "bundle", m.Name)
		}
	}
	r.node = node.New(nc)
	if x := r.exchanger; x != nil {
		r.node.AddBounds(func() []node.Bound {
			return []node.Bound{{Name: "oauth.exchanged_tokens", Limit: int64(x.MaxEntries()), Used: int64(x.Len())}}
		})
	}
	if r.lock != nil {
		r.lock.serveTo(r.node)
	}
	r.node.Start()
	r.apply = r.node.Apply
	return nil
}

// watchBundles restarts, starts and stops bundles as their manifests, programs, config
// and lock file change.
func watchBundles(ctx context.Context, r *running, _ context.CancelCauseFunc) {
	if !r.cfg.Watch {
		return
	}
	watch(ctx, &r.wg, r.loader, r.manifests, r.apply, r.log)
	if r.lock != nil {
		r.lock.watch(ctx, &r.wg)
	}
}

func stopNode(r *running) {
	if r.node == nil {
		return
	}
	r.log.Info("stopping bundles")
	start := time.Now()
	r.node.Close(r.cfg.Hurry)
	r.log.Info("stopped", "took", time.Since(start).Round(time.Millisecond))
}

// setUpAccess follows the access file; its approvals' events go to the audit log.
func setUpAccess(_ context.Context, r *running) (err error) {
	file, n, log := r.cfg.AccessFile, r.node, r.log
	if file == "" {
		return nil
	}
	if r.access, err = access.Open(file, log.Named("access"), func(p *access.Policy) {
		log.Info("access file reloaded", "file", file)
		n.SetApprovals(len(p.Approvals()) > 0, r.recordApproval)
		n.Announce(mcp.NotifyToolsListChanged, mcp.NotifyPromptsListChanged, mcp.NotifyResourcesChanged)
	}); err != nil {
		return fmt.Errorf("--access: %w", err)
	}
	r.node.SetApprovals(len(r.access.Policy().Approvals()) > 0, r.recordApproval)
	return nil
}

// checkAccess refuses a --client the access file does not name.
func checkAccess(r *running) error {
	if r.access == nil || r.cfg.Front.Client == "" {
		return nil
	}
	if _, ok := r.access.Policy().Client(r.cfg.Front.Client); !ok {
		return fmt.Errorf("--client %s: the access file %s has no client of that name (it has %s)", r.cfg.Front.Client, r.cfg.AccessFile, clientNames(r.access.Policy()))
	}
	return nil
}

func watchAccess(ctx context.Context, r *running, _ context.CancelCauseFunc) {
	if r.access == nil || !r.cfg.Watch {
		return
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		if err := r.access.Watch(ctx, 0); err != nil {
			r.log.Warn("the access file is not watched", "error", err)
		}
	}()
}

func setUpAudit(_ context.Context, r *running) (err error) {
	cfg := r.cfg
	if cfg.AuditFile == "" {
		return nil
	}
	if r.audit, err = audit.Open(cfg.AuditFile, audit.Config{Args: cfg.AuditArgs, MaxValue: cfg.AuditMaxValue,
		MaxSize: cfg.AuditMaxSize, Keep: cfg.AuditKeep, Log: r.log.Named("audit")}); err != nil {
		return fmt.Errorf("--audit: %w", err)
	}
	a := r.audit
	r.node.AddBounds(func() []node.Bound {
		return []node.Bound{{Name: "audit.queued_bytes", Limit: a.QueueBytes(), Used: a.Queued()}}
	})
	return nil
}

func closeAudit(r *running) {
	if r.audit != nil {
		r.audit.Close()
	}
}

// joinCluster joins the cluster, which then takes the reloads of the bundles: it
// announces them before the node applies them.
func joinCluster(_ context.Context, r *running) (err error) {
	if r.cfg.Cluster == nil {
		return nil
	}
	cc := *r.cfg.Cluster
	// A node with an access file shares its requests for approval with the others.
	cc.Logger, cc.Approvals = r.log.Named("cluster"), r.access != nil
	if r.cluster, err = cluster.Join(cc, r.node, r.manifests); err != nil {
		return fmt.Errorf("--cluster: %w", err)
	}
	r.node.SetClusterReport(r.cluster.Report)
	r.apply = r.cluster.SetLocal
	return nil
}

// leaveCluster tells the other nodes first, so that no call comes from them while the
// bundles stop.
func leaveCluster(r *running) {
	if r.cluster != nil {
		r.cluster.Leave()
	}
}

func closeCluster(r *running) {
	if r.cluster != nil {
		r.cluster.Close()
	}
}

// setUpFront makes the server every front serves, with what the subsystems before it
// give it.
func setUpFront(_ context.Context, r *running) error {
	fo := r.cfg.Front
	fo.Version, fo.Telemetry, fo.StateKey = r.cfg.Version, r.tel.Recorder(), cluster.Derive(r.stateKey, "front")
	if fo.Logger == nil {
		fo.Logger = r.log.Named("front")
	}
	if r.access != nil {
		fo.Access = r.access
	}
	if r.audit != nil {
		fo.Audit = r.audit
	}
	if r.cluster != nil {
		// A retry that lands on another replica is taken to the one holding its call.
		fo.NodeID = r.cluster.ID()
	}
	r.srv = front.NewServer(r.node, fo)
	return nil
}

func listenMetrics(_ context.Context, r *running) (err error) {
	if r.cfg.Metrics == "" {
		return nil
	}
	if r.metrics, err = net.Listen("tcp", r.cfg.Metrics); err != nil {
		return fmt.Errorf("--metrics %s: %w", r.cfg.Metrics, err)
	}
	return nil
}

func serveMetrics(ctx context.Context, r *running, _ context.CancelCauseFunc) {
	if r.metrics == nil {
		return
	}
	r.log.Info("metrics listening", "url", "http://"+r.metrics.Addr().String()+"/metrics")
	mux := http.NewServeMux()
	mux.Handle("/metrics", telemetry.CheckHost(r.cfg.Metrics, r.tel.MetricsHandler()))
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		if err := serveMux(ctx, r.metrics, mux, r.cfg, r.log); err != nil {
			r.log.Error("metrics listener failed", "error", err)
		}
	}()
}

// closeMetrics closes the listener: a no-op after serving; listened on but never served
// otherwise.
func closeMetrics(r *running) {
	if r.metrics != nil {
		r.metrics.Close()
	}
}

// setUpOAuth makes the node an OAuth resource server of the issuer, the scopes of the
// access file's clients supported.
func setUpOAuth(ctx context.Context, r *running) (err error) {
	cfg := r.cfg
	if cfg.OAuthIssuer == "" {
		return nil
	}
	var scopes []string
	if r.access != nil {
		for _, c := range r.access.Policy().Clients() {
			scopes = append(scopes, c.Scopes...)
		}
	}
	r.rs, err = oauth.New(ctx, oauth.Config{Issuer: cfg.OAuthIssuer, ResourceURL: cfg.OAuthAudience, ScopesSupported: scopes,
		RequireATJWT: cfg.OAuthRequireATJWT, Logger: r.log.Named("oauth")})
	return err
}

// listenHTTP listens for the HTTP front and makes its handler; beyond loopback without
// credentials it warns, and in a cluster it serves the requests other replicas carry here.
func listenHTTP(_ context.Context, r *running) (err error) {
	cfg := r.cfg
	if cfg.HTTP == "" {
		return nil
	}
	if r.http, err = net.Listen("tcp", cfg.HTTP); err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.HTTP, err)
	}
	ho := cfg.HTTPOptions
	if host, _, _ := net.SplitHostPort(r.http.Addr().String()); loopbackIP(host) {
		ho.CheckHost = true
	} else if ho.Token == "" && r.access == nil && r.rs == nil {
		r.log.Warn("the HTTP front listens beyond loopback without a --token-file, --access or --oauth-issuer: anyone who reaches it can call every tool", "addr", cfg.HTTP)
	}
	if r.cluster != nil {
		ho.Replicas = replicas{r.cluster}
	}
	r.front = httpfront.New(r.srv, ho)
	r.node.AddBounds(r.front.Bounds)
	if r.cluster == nil {
		return nil
	}
	h := r.front
	return r.cluster.ServeFront(func(w http.ResponseWriter, req *http.Request, f *cluster.Forwarded) {
		h.ServeForwarded(w, req, front.Identity{Client: f.Client, Subject: f.Subject, Source: f.Source, Groups: f.Groups})
	})
}

func serveHTTPFront(ctx context.Context, r *running, cancel context.CancelCauseFunc) {
	if r.http == nil {
		return
	}
	url := "http://" + r.http.Addr().String() + "/mcp"
	r.log.Info("HTTP front listening", "url", url)
	if r.cfg.OnListening != nil {
		r.cfg.OnListening(url)
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		// Raw reads and writes spare the scheduler's monitor thread a wake-up per request
		// (see rawio): about a seventh of the node's CPU per call over HTTP.
		ln := httpfront.WrapListener(netutil.LimitListener(rawio.Listener(r.http), r.cfg.MaxConns), r.cfg.HTTPOptions.TrustedProxies)
		cancel(serveHTTP(ctx, ln, r.front, r.node, r.rs, r.cfg, r.log))
	}()
}

func closeHTTP(r *running) {
	if r.http != nil {
		r.http.Close()
	}
}

func serveStdio(ctx context.Context, r *running, cancel context.CancelCauseFunc) {
	if !r.cfg.Stdio {
		return
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		cancel(stdiofront.Serve(ctx, r.srv, r.cfg.Stdin, r.cfg.Stdout))
	}()
}
