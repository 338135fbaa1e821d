// Package cli is toolnode's command line: it parses flags and runs the node.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/toolnode/toolnode/runtime/front"
	"github.com/toolnode/toolnode/runtime/node"
	"github.com/toolnode/toolnode/runtime/reload"
)

// Version is toolnode's version.
const Version = "0.1.0"

// Exit codes.
const (
	ExitOK    = 0
	ExitError = 1
	ExitUsage = 2
)

const usage = `toolnode runs MCP tool bundles and fronts all their tools as one MCP endpoint.

Usage:
  toolnode serve [flags]               run the node (see toolnode serve --help)
  toolnode tools [flags]               list the merged tools of bundle folders or a running node
  toolnode call TOOL [k=v]... [flags]  call one tool and print its result
  toolnode status [--url URL]          show the bundles of a running node
  toolnode check DIR                   check a bundle without serving it
  toolnode new go|c|python NAME        create a bundle from our SDKs
  toolnode version                     print the version
  toolnode help                        print this help

Each command explains its flags with --help.

A bundle is a directory holding a bundle.json, for example:

  {"name": "weather", "command": ["./weather"], "seats": ["node-lamp"]}

Its tools appear as <bundle>.<tool>, or as <seat>.<verb> for seats it declares.
`

// Main runs toolnode with args (without the program name) and returns the exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return ExitUsage
	}
	switch args[0] {
	case "serve":
		return serve(args[1:], stdin, stdout, stderr)
	case "tools":
		return toolsCommand(args[1:], stdout, stderr)
	case "call":
		return callCommand(args[1:], stdout, stderr)
	case "status":
		return statusCommand(args[1:], stdout, stderr)
	case "check":
		return checkCommand(args[1:], stdout, stderr)
	case "new":
		return newCommand(args[1:], stdout, stderr)
	case "version", "--version", "-version":
		fmt.Fprintf(stdout, "toolnode %s\n", Version)
		return ExitOK
	case "help", "--help", "-help", "-h":
		fmt.Fprint(stdout, usage)
		return ExitOK
	}
	fmt.Fprintf(stderr, "toolnode: unknown command %q\n\n%s", args[0], usage)
	return ExitUsage
}

// listFlag is a flag that may be given many times.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

type serveFlags struct {
	bundles     listFlag
	config      string
	stdio       bool
	http        string
	allowOrigin listFlag
	tokenFile   string
	maxBody     int64
	logLevel    string
	logJSON     bool
	pageSize    int
	watch       bool
	names       string
	pingEvery   time.Duration
}

func parseServe(args []string, stderr io.Writer) (*serveFlags, error) {
	f := &serveFlags{}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Var(&f.bundles, "bundles", "`DIR` whose subdirectories holding a bundle.json are bundles (may be repeated)")
	fs.StringVar(&f.config, "config", "", "`FILE` in the mcpServers JSON of Claude Desktop, Cursor or VS Code (servers); each entry becomes a bundle")
	fs.BoolVar(&f.stdio, "stdio", false, "serve MCP on stdin/stdout (the default when no --http is given)")
	fs.StringVar(&f.http, "http", "", "serve MCP Streamable HTTP at http://`ADDR`/mcp, e.g. 127.0.0.1:7777 (keep it on loopback unless a --token-file guards it)")
	fs.Var(&f.allowOrigin, "allow-origin", "accept browser requests from `ORIGIN` besides loopback ones, e.g. https://app.example.com; * for any (may be repeated)")
	fs.StringVar(&f.tokenFile, "token-file", "", "require \"Authorization: Bearer <token>\" on HTTP, the token read from `FILE`")
	fs.Int64Var(&f.maxBody, "max-body", 16<<20, "largest HTTP request body in `BYTES`; larger ones get 413")
	fs.StringVar(&f.logLevel, "log-level", "info", "log `LEVEL`: trace, debug, info, warn or error")
	fs.BoolVar(&f.logJSON, "log-json", false, "write logs as JSON lines")
	fs.BoolVar(&f.watch, "watch", true, "watch the bundle folders and --config file: start, restart and stop bundles as they change (--watch=false to turn off)")
	fs.StringVar(&f.names, "names", front.NamesAuto, "tool names shown to clients: `MODE` canonical (seat.verb), underscore (seat_verb, at most 64 characters, for clients such as GitHub Copilot and Windsurf), or auto (underscore for clients known to need it)")
	fs.DurationVar(&f.pingEvery, "ping-every", 30*time.Second, "ping each bundle process every `DURATION`; one that does not answer within 10s (or the interval, if shorter) is restarted; 0 turns pings off")
	fs.IntVar(&f.pageSize, "page-size", 500, "tools per tools/list page (`N`); 0 lists all at once")
	fs.Usage = func() {
		fmt.Fprint(stderr, `Usage: toolnode serve [--bundles DIR]... [--config FILE] [--stdio] [--http ADDR] [flags]

Starts every bundle found, merges their tools and serves them as one MCP endpoint.
Logs go to stderr, never to stdout.

Flags:
`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q (bundle folders go after --bundles)", fs.Arg(0))
	}
	if len(f.bundles) == 0 && f.config == "" {
		return nil, errors.New("nothing to serve: give --bundles DIR or --config FILE")
	}
	if hclog.LevelFromString(f.logLevel) == hclog.NoLevel {
		return nil, fmt.Errorf("unknown --log-level %q: use trace, debug, info, warn or error", f.logLevel)
	}
	if f.http != "" {
		if _, _, err := net.SplitHostPort(f.http); err != nil {
			return nil, fmt.Errorf("--http %q: want HOST:PORT, e.g. 127.0.0.1:7777", f.http)
		}
	} else {
		f.stdio = true
	}
	switch f.names {
	case front.NamesAuto, front.NamesCanonical, front.NamesStrict:
	default:
		return nil, fmt.Errorf("--names %q: use canonical, underscore or auto", f.names)
	}
	if f.tokenFile != "" && f.http == "" {
		return nil, errors.New("--token-file guards the HTTP front: give --http too")
	}
	return f, nil
}

func serve(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	f, err := parseServe(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return ExitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "toolnode serve: %v\n", err)
		return ExitUsage
	}
	log := hclog.New(&hclog.LoggerOptions{
		Name:       "toolnode",
		Level:      hclog.LevelFromString(f.logLevel),
		JSONFormat: f.logJSON,
		Output:     stderr,
	})
	loader := reload.NewLoader(reload.Source{Dirs: f.bundles, Config: f.config}, log)
	manifests := loader.Load()
	if len(manifests) == 0 {
		log.Warn("no bundles found; the node serves no tools until some are added", "bundles", f.bundles.String())
	}

	token := ""
	if f.tokenFile != "" {
		b, err := os.ReadFile(f.tokenFile)
		if err != nil {
			fmt.Fprintf(stderr, "toolnode serve: --token-file: %v\n", err)
			return ExitUsage
		}
		if token = strings.TrimSpace(string(b)); token == "" {
			fmt.Fprintf(stderr, "toolnode serve: --token-file %s is empty\n", f.tokenFile)
			return ExitUsage
		}
	}

	if path := os.Getenv("TOOLNODE_CPUPROFILE"); path != "" {
		// For finding what a benchmark spends its time on; see docs/PERFORMANCE.md.
		if f, err := os.Create(fmt.Sprintf("%s.%d", path, os.Getpid())); err == nil {
			if pprof.StartCPUProfile(f) == nil {
				defer pprof.StopCPUProfile()
			}
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	sup := node.Supervision{PingEvery: f.pingEvery, PingTimeout: min(10*time.Second, f.pingEvery)}
	if f.pingEvery <= 0 {
		sup.PingEvery = -1
	}
	n := node.New(node.Config{Logger: log, Manifests: manifests, Version: Version, Supervision: sup,
		OnStarting: startProgress(stderr, len(manifests))})
	n.Start()
	srv := front.NewServer(n, front.Options{Version: Version, PageSize: f.pageSize, Names: f.names, Logger: log.Named("front")})

	// Either front ending (stdin closed, the listener failing) or a signal stops the node.
	ctx, cancel := context.WithCancelCause(ctx)
	var wg sync.WaitGroup
	if f.watch {
		w, err := reload.NewWatcher(log.Named("reload"), 0)
		if err != nil {
			log.Warn("hot reload is off", "error", err)
		} else {
			w.Watch(loader.WatchPaths(manifests))
			wg.Add(1)
			go func() {
				defer wg.Done()
				w.Run(ctx, func() {
					ms := loader.Load()
					n.Apply(ms)
					w.Watch(loader.WatchPaths(ms))
				})
			}()
		}
	}
	if f.http != "" {
		h := srv.NewHTTPHandler(front.HTTPOptions{AllowOrigins: f.allowOrigin, Token: token, MaxBody: f.maxBody})
		ln, err := net.Listen("tcp", f.http)
		if err != nil {
			log.Error("cannot listen", "addr", f.http, "error", err)
			cancel(err)
			wg.Wait()
			shutdown(n, log)
			return ExitError
		}
		if host, _, _ := net.SplitHostPort(f.http); !isLoopback(host) && token == "" {
			log.Warn("the HTTP front listens beyond loopback without a --token-file: anyone who reaches it can call every tool", "addr", f.http)
		}
		log.Info("HTTP front listening", "url", "http://"+ln.Addr().String()+"/mcp")
		wg.Add(1)
		go func() {
			defer wg.Done()
			cancel(serveHTTP(ctx, ln, h, log))
		}()
	}
	if f.stdio {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cancel(srv.ServeStdio(ctx, stdin, stdout))
		}()
	}
	<-ctx.Done()
	cancel(nil)
	wg.Wait()
	stop()
	shutdown(n, log)
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		log.Error("front failed", "error", err)
		return ExitError
	}
	return ExitOK
}

// startProgress shows how many bundles have started on a terminal, where starting many
// takes long enough to wonder; elsewhere (logs, pipes) the log lines say it.
func startProgress(w io.Writer, total int) func(done, total int) {
	f, ok := w.(*os.File)
	if !ok || total < 2 {
		return nil
	}
	if fi, err := f.Stat(); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return nil
	}
	var mu sync.Mutex
	return func(done, total int) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(f, "\rstarting bundles: %d/%d", done, total)
		if done == total {
			fmt.Fprintln(f)
		}
	}
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// serveHTTP serves h on ln until ctx ends, then closes the sessions and the server.
func serveHTTP(ctx context.Context, ln net.Listener, h *front.HTTPHandler, log hclog.Logger) error {
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	hs := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          log.StandardLogger(&hclog.StandardLoggerOptions{InferLevels: true}),
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		h.Close()
		return fmt.Errorf("HTTP front: %w", err)
	case <-ctx.Done():
	}
	h.Close()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = hs.Shutdown(sctx)
	<-errc
	return nil
}

// shutdown stops the bundles gracefully; a second SIGINT or SIGTERM hurries them to SIGKILL.
func shutdown(n *node.Node, log hclog.Logger) {
	log.Info("stopping bundles")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sig)
	go func() {
		select {
		case <-sig:
			log.Warn("second signal: killing bundles now")
			cancel()
		case <-ctx.Done():
		}
	}()
	start := time.Now()
	n.Close(ctx)
	log.Info("stopped", "took", time.Since(start).Round(time.Millisecond))
}
