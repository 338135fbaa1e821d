// Package cli is toolnode's command line: it parses flags and runs the node.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/toolnode/toolnode/runtime/internal/access"
	"github.com/toolnode/toolnode/runtime/internal/audit"
	"github.com/toolnode/toolnode/runtime/internal/codemode"
	"github.com/toolnode/toolnode/runtime/internal/codemode/worker"
	"github.com/toolnode/toolnode/runtime/internal/front"
	"github.com/toolnode/toolnode/runtime/internal/front/httpfront"
	"github.com/toolnode/toolnode/runtime/internal/gcpace"
	"github.com/toolnode/toolnode/runtime/internal/node"
	"github.com/toolnode/toolnode/runtime/internal/proc"
	"github.com/toolnode/toolnode/runtime/internal/reload"
	"github.com/toolnode/toolnode/runtime/internal/rpc"
	"github.com/toolnode/toolnode/runtime/internal/sandbox"
	serveapi "github.com/toolnode/toolnode/runtime/internal/serve"
	"github.com/toolnode/toolnode/runtime/internal/telemetry"
	"github.com/toolnode/toolnode/runtime/internal/version"
)

// Version is toolnode's version: the release of the node and its SDKs (the VERSION file).
const Version = version.Version

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
  toolnode manifest [flags]            print the merged surface as deterministic JSON, or
                                       --check it against a committed file (for CI)
  toolnode call TOOL [k=v]... [flags]  call one tool and print its result
  toolnode pin [flags]                 pin the tools' definitions in toolnode.lock, show
                                       what a lock holds back (--diff), accept (--accept)
  toolnode status [--url URL]          show the bundles of a running node (and its cluster)
  toolnode check DIR                   check a bundle without serving it
  toolnode new go|c|python NAME        create a bundle from our SDKs
  toolnode version                     print the version
  toolnode help                        print this help

Each command explains its flags with --help.

A bundle is a directory holding a bundle.json, for example:

  {"name": "weather", "command": ["./weather"], "seats": ["node-lamp"]}

Its tools appear as <bundle>.<tool>, or as <seat>.<verb> for seats it declares.

Nodes joined on a NATS server (toolnode serve --cluster nats://HOST:PORT) each front the
tools of every node: see docs/cluster.md.
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
	case "manifest":
		return manifestCommand(args[1:], stdout, stderr)
	case "call":
		return callCommand(args[1:], stdout, stderr)
	case "pin":
		return pinCommand(args[1:], stdout, stderr)
	case "status":
		return statusCommand(args[1:], stdout, stderr)
	case "check":
		return checkCommand(args[1:], stdout, stderr)
	case "new":
		return newCommand(args[1:], stdout, stderr)
	case "run-worker":
		// Hidden: the node starts its own binary so, as a worker of toolnode.run (with
		// its memory bound in the environment; see package worker).
		return worker.Main(stdin, stdout, stderr, 0)
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
	proxies     listFlag
	trusted     []netip.Prefix // proxies, read
	tokenFile   string
	maxBody     byteSize
	logLevel    string
	logJSON     bool
	pageSize    int
	watch       bool
	names       string
	pingEvery   time.Duration
	lazy        bool
	stateDir    string

	maxBundleMessage  byteSize
	maxStderrLine     byteSize
	maxQueue          byteSize
	maxInflight       int
	maxSessions       int
	maxClientSessions int
	maxDepth          int
	maxConns          int
	sessionIdle       time.Duration
	readTimeout       time.Duration
	connIdle          time.Duration
	taskTTL           time.Duration
	maxClientTasks    int
	maxTaskBytes      byteSize
	maxClientBytes    byteSize

	view                        string
	pins                        listFlag
	viewMaxTools, viewMaxTokens int
	access                      string
	client                      string
	audit                       string
	auditArgs                   bool
	auditArgsMax                byteSize
	auditMaxSize                byteSize
	auditKeep                   int

	metrics           string
	oauthIssuer       string
	oauthAudience     string
	oauthRequireATJWT bool
	oauthClientID     string
	oauthSecretFile   string

	run      codemode.Bounds // toolnode.run's bounds; the flags hold them as bytes and counts
	runBytes byteSize

	results   resultFlags
	runWorker runWorkerFlags

	cluster clusterFlags
	lock    string
	sandbox sandbox.Policy // --sandbox: the profile of bundles that name no sandbox
}

// runWorkerFlags say where toolnode.run's programs run (see package worker).
type runWorkerFlags struct {
	mode   string
	memory byteSize
}

func (r *runWorkerFlags) register(fs *flag.FlagSet) {
	r.memory = worker.DefaultMaxMemory
	fs.StringVar(&r.mode, "run-worker", "on", "where toolnode.run programs run: `MODE` on (each in a worker process serving one caller, its memory bounded by --run-max-memory, with no network and no files) or off (in the node's own process, without a memory bound: for platforms without workers, Windows among them, and to compare)")
	fs.Var(&r.memory, "run-max-memory", "a toolnode.run program's worker may take `BYTES` of memory, held by the kernel (a cgroup, else an address-space rlimit); a program past it ends with an error naming this bound, and the node goes on")
}

// minRunMemory is the least --run-max-memory: a worker is a Go program, which needs some.
const minRunMemory = 32 << 20

func (r *runWorkerFlags) check() error {
	switch {
	case r.mode != "on" && r.mode != "off":
		return fmt.Errorf("--run-worker %q: use on or off", r.mode)
	case r.memory < minRunMemory:
		return fmt.Errorf("--run-max-memory %s: want at least 32MiB, what a worker process needs to start", r.memory.String())
	}
	return nil
}

func (r *runWorkerFlags) config() worker.Config {
	return worker.Config{Off: r.mode == "off", MaxMemory: int64(r.memory)}
}

// resultFlags bound the results passed to clients and those kept after a cut (see
// node.ResultBounds).
type resultFlags struct {
	maxBytes                offSize
	clientBytes, storeBytes byteSize
	ttl                     time.Duration
}

func (r *resultFlags) register(fs *flag.FlagSet) {
	r.maxBytes.byteSize, r.clientBytes, r.storeBytes = node.DefaultMaxResultBytes, node.DefaultResultClientBytes, node.DefaultResultStoreBytes
	fs.Var(&r.maxBytes, "max-result-bytes", "cut a tool result whose text passes `BYTES` (at least 4KiB; 0 keeps results whole) at a boundary that keeps it valid (whole lines, whole JSON array items), noting what was left out; the whole is kept for the caller, readable in ranges by resources/read and toolnode.read_result")
	fs.DurationVar(&r.ttl, "result-ttl", node.DefaultResultTTL, "keep the whole of a cut result for `DURATION`")
	fs.Var(&r.clientBytes, "result-client-bytes", "keep at most `BYTES` of cut results' wholes per client; the oldest go first")
	fs.Var(&r.storeBytes, "result-store-bytes", "keep at most `BYTES` of cut results' wholes for all clients together; the oldest go first")
}

// check refuses bounds that cannot hold.
func (r *resultFlags) check() error {
	switch {
	case r.maxBytes.byteSize != 0 && r.maxBytes.byteSize < node.MinMaxResultBytes:
		return fmt.Errorf("--max-result-bytes %d: want 0 (results whole) or at least %d (4KiB)", r.maxBytes.byteSize, node.MinMaxResultBytes)
	case r.ttl <= 0 || r.clientBytes < 1 || r.storeBytes < 1:
		return errors.New("--result-ttl, --result-client-bytes and --result-store-bytes must be more than 0")
	}
	return nil
}

func (r *resultFlags) bounds() node.ResultBounds {
	return node.ResultBounds{MaxBytes: int(r.maxBytes.byteSize), TTL: r.ttl, ClientBytes: int64(r.clientBytes), StoreBytes: int64(r.storeBytes)}
}

// newServeFlags registers serve's flags on a FlagSet writing its errors and usage to
// stderr, into flags holding their defaults.
func newServeFlags(stderr io.Writer) (*serveFlags, *flag.FlagSet) {
	f := &serveFlags{maxBody: 16 << 20, maxBundleMessage: rpc.DefaultMaxLine, maxQueue: rpc.DefaultMaxQueue, maxStderrLine: proc.DefaultStderrLineMax,
		auditArgsMax: audit.DefaultMaxValue, auditMaxSize: audit.DefaultMaxSize, runBytes: codemode.DefaultBytes,
		maxTaskBytes: front.DefaultMaxTaskBytes, maxClientBytes: front.DefaultMaxClientTaskBytes}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Var(&f.bundles, "bundles", "`DIR` whose subdirectories holding a bundle.json are bundles (may be repeated)")
	fs.StringVar(&f.config, "config", "", "`FILE` in the mcpServers JSON of Claude Desktop, Cursor or VS Code (servers); each entry becomes a bundle")
	fs.BoolVar(&f.stdio, "stdio", false, "serve MCP on stdin/stdout (the default when no --http is given)")
	fs.StringVar(&f.http, "http", "", "serve MCP Streamable HTTP at http://`ADDR`/mcp, e.g. 127.0.0.1:7777 (keep it on loopback unless a --token-file guards it)")
	fs.Var(&f.proxies, "trusted-proxy", "a balancer at `ADDR` (an IP address or CIDR range) that says who its clients are, by the PROXY protocol (HAProxy's send-proxy-v2) or X-Forwarded-For, so that per-client bounds count clients, not the balancer (may be repeated)")
	fs.Var(&f.allowOrigin, "allow-origin", "accept browser requests from `ORIGIN` besides loopback ones, e.g. https://app.example.com; * for any (may be repeated)")
	fs.StringVar(&f.tokenFile, "token-file", "", "require \"Authorization: Bearer <token>\" on HTTP, the token read from `FILE`")
	fs.Var(&f.maxBody, "max-body", "largest client message in `BYTES` (an HTTP body, or a stdio line), e.g. 16MiB; larger HTTP bodies get 413")
	fs.Var(&f.maxBundleMessage, "max-bundle-message", "largest message a bundle may send, in `BYTES` (e.g. 128MiB); a larger answer fails its call")
	fs.Var(&f.maxStderrLine, "max-stderr-line", "longest line in `BYTES` kept of a bundle's stderr; longer ones (a progress bar without newlines) are cut and logged as such")
	fs.Var(&f.maxQueue, "max-queue", "`BYTES` the node holds for one peer that does not read (a bundle's stdin, a client's stream); past it the bundle's calls fail or the client's stream is closed")
	fs.IntVar(&f.maxInflight, "max-inflight", front.DefaultMaxInflight, "requests one client session may have in flight (`N`), and messages in one batch")
	fs.IntVar(&f.maxSessions, "max-sessions", httpfront.DefaultMaxSessions, "HTTP sessions open at once (`N`); past it initialize gets 503")
	fs.IntVar(&f.maxClientSessions, "max-client-sessions", httpfront.DefaultMaxClientSessions, "HTTP sessions one client may have open at once (`N`; a client is its OAuth subject or access-file client, else its address); past it its initialize gets 503")
	fs.DurationVar(&f.sessionIdle, "session-idle", 30*time.Minute, "end HTTP sessions idle for `DURATION` (a minute while over half of --max-sessions are open)")
	fs.IntVar(&f.maxConns, "max-conns", serveapi.DefaultMaxConns, "HTTP connections open at once (`N`)")
	fs.DurationVar(&f.readTimeout, "read-timeout", serveapi.DefaultReadTimeout, "close HTTP connections whose request, body included, takes longer than `DURATION` to arrive")
	fs.DurationVar(&f.connIdle, "conn-idle", serveapi.DefaultConnIdle, "close kept-alive HTTP connections idle for `DURATION`")
	fs.DurationVar(&f.taskTTL, "task-ttl", front.DefaultTaskTTL, "keep each task of MCP's tasks extension, its result included, for `DURATION` after it is made (its ttlMs); a task still working then is cancelled")
	fs.IntVar(&f.maxClientTasks, "max-client-tasks", front.DefaultMaxClientTasks, "tasks one client may hold at once, working or kept (`N`); past it a call that would make one is refused")
	fs.Var(&f.maxTaskBytes, "max-task-bytes", "`BYTES` of results and errors the node keeps for all tasks together; while they are reached a call that would make a task is refused, before its tool runs")
	fs.Var(&f.maxClientBytes, "max-client-task-bytes", "`BYTES` of results and errors the node keeps for one client's tasks; while they are reached the client's calls that would make a task are refused, before their tool runs")
	fs.IntVar(&f.maxDepth, "max-depth", rpc.DefaultMaxDepth, "deepest nesting of arrays and objects accepted in any message (`N`)")
	fs.StringVar(&f.view, "view", string(access.ViewAuto), "what tools/list shows: `VIEW` auto (every tool when they fit --view-max-tools and --view-max-tokens, else the search view with the tools bundles feature, within them), full (every tool) or search (toolnode.search, toolnode.execute, toolnode.run, toolnode.status and --pin tools); every tool stays callable")
	fs.IntVar(&f.viewMaxTools, "view-max-tools", front.DefaultViewMaxTools, "the auto view lists at most `N` tools (OpenAI takes 128 functions per request)")
	fs.IntVar(&f.viewMaxTokens, "view-max-tokens", front.DefaultViewMaxTokens, "the auto view lists at most about `N` tokens of tool definitions (a token counted as 4 bytes)")
	fs.Var(&f.pins, "pin", "in the search and auto views, also list the tools matching `PATTERN` (* matches any run of characters, dots included; may be repeated)")
	fs.StringVar(&f.access, "access", "", "access `FILE` (JSON) naming the clients, their bearer tokens' SHA-256 and the tools each may see and call; watched and reloaded")
	fs.StringVar(&f.client, "client", "", "the access file's client `NAME` the stdio front serves (required with --access and stdio)")
	fs.StringVar(&f.audit, "audit", "", "append one JSON line per tool call (time, client, tool, bundle, outcome, duration) to `FILE`")
	fs.BoolVar(&f.auditArgs, "audit-args", false, "with --audit, also record each call's arguments and result")
	fs.Var(&f.auditArgsMax, "audit-args-max", "with --audit-args, the most `BYTES` of a call's arguments, and of its result, an audit line holds; a larger one is left out and its size noted")
	fs.Var(&f.auditMaxSize, "audit-max-size", "rotate the --audit file when it reaches `BYTES`: it becomes FILE.1, FILE.1 becomes FILE.2, and so on")
	fs.IntVar(&f.auditKeep, "audit-keep", audit.DefaultKeep, "rotated --audit files to keep (`N`); the oldest beyond them is removed")
	fs.StringVar(&f.metrics, "metrics", "", "serve Prometheus metrics at http://`ADDR`/metrics, e.g. 127.0.0.1:9464 (traces and metrics also go out by OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set)")
	fs.StringVar(&f.oauthIssuer, "oauth-issuer", "", "accept OAuth 2.1 access tokens (JWT) of the issuer at `URL` on the HTTP front; their scopes select --access entries")
	fs.StringVar(&f.oauthAudience, "oauth-audience", "", "the audience (`AUD`) tokens must carry: this front's URL, e.g. https://node.example.com/mcp (default http://<--http>/mcp)")
	fs.BoolVar(&f.oauthRequireATJWT, "oauth-require-at-jwt", false, "with --oauth-issuer, accept only tokens whose header says typ at+jwt (RFC 9068); by default typ JWT, as Hydra, Keycloak and Entra ID issue them, and no typ pass too")
	fs.StringVar(&f.oauthClientID, "oauth-client-id", "", "with --oauth-issuer, the node's client `ID` at the issuer, for exchanging callers' tokens for bundles with token_exchange (RFC 8693)")
	fs.StringVar(&f.oauthSecretFile, "oauth-client-secret-file", "", "the node's client secret at the issuer, read from `FILE` (with --oauth-client-id)")
	fs.Uint64Var(&f.run.Steps, "run-max-steps", codemode.DefaultSteps, "a toolnode.run program may run `N` Starlark execution steps")
	fs.DurationVar(&f.run.Time, "run-max-time", codemode.DefaultTime, "a toolnode.run program may run for `DURATION`, its calls included")
	fs.IntVar(&f.run.Calls, "run-max-calls", codemode.DefaultCalls, "a toolnode.run program may make `N` calls (searches included)")
	fs.IntVar(&f.run.Parallel, "run-max-parallel", codemode.DefaultParallel, "a toolnode.run program's parallel() may make `N` calls at once")
	fs.Var(&f.runBytes, "run-max-bytes", "a toolnode.run program may take in `BYTES` of results, and send, print or answer as many")
	f.runWorker.register(fs)
	f.results.register(fs)
	f.cluster.register(fs)
	fs.StringVar(&f.lock, "lock", "", "serve only the tool definitions the lock `FILE` pins (toolnode pin writes it); a changed or new tool is held back until accepted with toolnode pin --accept; watched and reloaded")
	fs.StringVar(&f.logLevel, "log-level", "info", "log `LEVEL`: trace, debug, info, warn or error")
	fs.BoolVar(&f.logJSON, "log-json", false, "write logs as JSON lines")
	fs.BoolVar(&f.watch, "watch", true, "watch the bundle folders and --config file: start, restart and stop bundles as they change (--watch=false to turn off)")
	fs.StringVar(&f.names, "names", front.NamesAuto, "tool names shown to clients: `MODE` canonical (seat.verb), underscore (seat_verb, ^[a-zA-Z0-9_-]{1,64}$, as Claude Desktop, Copilot, Windsurf and the model APIs require), or auto (underscore for every client but those known to take dots: Claude Code, toolnode's CLI and libraries; a client that does not name itself also gets every tool in one page)")
	fs.DurationVar(&f.pingEvery, "ping-every", 30*time.Second, "ping each bundle process every `DURATION`; one that does not answer within 10s (or the interval, if shorter) is restarted; 0 turns pings off")
	fs.BoolVar(&f.lazy, "lazy", false, "start every bundle on its first call, as \"start\": \"lazy\" in bundle.json does for one: until then it is listed from its cached surface")
	fs.Func("sandbox", "the sandbox of bundles whose bundle.json has no \"sandbox\": `PROFILE` off (none, the default) or standard (1 GiB of memory, 2 cores, 512 processes, 1024 open files, files confined to the bundle's folder and the system's read-only and a private temporary folder; docs/sandbox.md)", func(v string) error {
		p, err := sandbox.Profile(v)
		f.sandbox = p
		return err
	})
	fs.StringVar(&f.stateDir, "state-dir", defaultStateDir(), "`DIR` keeping the cached surfaces of lazy bundles")
	fs.IntVar(&f.pageSize, "page-size", 500, "tools per tools/list page (`N`); 0 lists all at once")
	fs.Usage = func() {
		fmt.Fprint(stderr, `Usage: toolnode serve [--bundles DIR]... [--config FILE] [--stdio] [--http ADDR] [flags]

Starts every bundle found, merges their tools and serves them as one MCP endpoint.
Logs go to stderr, never to stdout. Serving one stdio client and nothing else, the node
runs on one processor (its bundles and its client need the others) unless GOMAXPROCS
is set.

Flags:
`)
		fs.PrintDefaults()
	}
	return f, fs
}

// parseServe reads serve's arguments, and refuses flags that contradict each other or
// bounds that cannot hold, saying which.
func parseServe(args []string, stderr io.Writer) (*serveFlags, error) {
	f, fs := newServeFlags(stderr)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q (bundle folders go after --bundles)", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	if len(f.bundles) == 0 && f.config == "" && f.cluster.url == "" {
		return nil, errors.New("nothing to serve: give --bundles DIR, --config FILE or --cluster URL")
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
	for _, p := range f.proxies {
		prefix, err := httpfront.ParseTrustedProxy(p)
		if err != nil {
			return nil, fmt.Errorf("--trusted-proxy: %w", err)
		}
		f.trusted = append(f.trusted, prefix)
	}
	switch f.names {
	case front.NamesAuto, front.NamesCanonical, front.NamesStrict:
	default:
		return nil, fmt.Errorf("--names %q: use canonical, underscore or auto", f.names)
	}
	for name, v := range map[string]int{"--max-inflight": f.maxInflight, "--max-sessions": f.maxSessions, "--max-client-sessions": f.maxClientSessions,
		"--max-conns": f.maxConns, "--max-depth": f.maxDepth, "--audit-keep": f.auditKeep, "--max-client-tasks": f.maxClientTasks} {
		if v <= 0 {
			return nil, fmt.Errorf("%s %d: want a positive number", name, v)
		}
	}
	switch access.View(f.view) {
	case access.ViewFull, access.ViewSearch, access.ViewAuto:
	default:
		return nil, fmt.Errorf("--view %q: use auto, full or search", f.view)
	}
	if f.viewMaxTools < 1 || f.viewMaxTokens < 1 {
		return nil, fmt.Errorf("--view-max-tools %d, --view-max-tokens %d: want positive numbers", f.viewMaxTools, f.viewMaxTokens)
	}
	for _, p := range f.pins {
		if _, err := access.ParsePattern(p); err != nil {
			return nil, fmt.Errorf("--pin %q: %v", p, err)
		}
	}
	switch {
	case f.access != "" && f.tokenFile != "":
		return nil, errors.New("give --access or --token-file, not both: the access file holds the clients' tokens")
	case f.access != "" && f.stdio && f.client == "":
		return nil, errors.New("--access with the stdio front needs --client NAME: the access file's client that stdio serves")
	case f.client != "" && f.access == "":
		return nil, errors.New("--client names a client of the access file: give --access FILE too")
	case f.auditArgs && f.audit == "":
		return nil, errors.New("--audit-args goes with --audit FILE")
	case set["audit-max-size"] && f.audit == "", set["audit-keep"] && f.audit == "":
		return nil, errors.New("--audit-max-size and --audit-keep go with --audit FILE")
	case set["audit-args-max"] && !f.auditArgs:
		return nil, errors.New("--audit-args-max goes with --audit-args")
	case f.run.Steps == 0 || f.run.Time <= 0 || f.run.Calls < 1 || f.run.Parallel < 1 || f.runBytes < 1:
		return nil, errors.New("--run-max-steps, --run-max-time, --run-max-calls, --run-max-parallel and --run-max-bytes bound toolnode.run: each must be more than 0")
	case f.oauthIssuer != "" && f.http == "":
		return nil, errors.New("--oauth-issuer guards the HTTP front: give --http too")
	case f.oauthAudience != "" && f.oauthIssuer == "", f.oauthRequireATJWT && f.oauthIssuer == "", f.oauthClientID != "" && f.oauthIssuer == "":
		return nil, errors.New("--oauth-audience, --oauth-require-at-jwt and --oauth-client-id go with --oauth-issuer URL")
	case f.oauthSecretFile != "" && f.oauthClientID == "":
		return nil, errors.New("--oauth-client-secret-file goes with --oauth-client-id ID")
	}
	if f.oauthIssuer != "" && f.oauthAudience == "" {
		f.oauthAudience = "http://" + f.http + "/mcp"
	}
	if f.tokenFile != "" && f.http == "" {
		return nil, errors.New("--token-file guards the HTTP front: give --http too")
	}
	if err := f.results.check(); err != nil {
		return nil, err
	}
	if err := f.runWorker.check(); err != nil {
		return nil, err
	}
	if err := f.cluster.check(); err != nil {
		return nil, err
	}
	return f, nil
}

// secretFile reads the secret a flag names the file of, its surrounding space trimmed: ""
// when path is "", an error when the file cannot be read or holds nothing.
func secretFile(flag, path string) (string, error) {
	if path == "" {
		return "", nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("%s: %w", flag, err)
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "", fmt.Errorf("%s %s is empty", flag, path)
	}
	return s, nil
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
	token, err := secretFile("--token-file", f.tokenFile)
	if err != nil {
		fmt.Fprintf(stderr, "toolnode serve: %v\n", err)
		return ExitUsage
	}
	secret, err := secretFile("--oauth-client-secret-file", f.oauthSecretFile)
	if err != nil {
		fmt.Fprintf(stderr, "toolnode serve: %v\n", err)
		return ExitUsage
	}

	// For finding what a benchmark spends its time on (docs/PERFORMANCE.md): a profile that
	// cannot be written is said, and the node serves without it.
	if stopProfile, err := telemetry.StartCPUProfile(); err != nil {
		fmt.Fprintf(stderr, "toolnode serve: no CPU profile: %v\n", err)
	} else {
		defer stopProfile()
	}

	// A node relaying calls keeps a small live heap and makes garbage fast: a floor of
	// headroom spares most collections (docs/PERFORMANCE.md). GOGC, when set, stands.
	defer gcpace.Start(gcpace.DefaultFloor).Stop()

	// The first SIGINT or SIGTERM stops the node gracefully; a second hurries the bundles
	// to SIGKILL.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	hurry, hurryNow := context.WithCancel(context.Background())
	defer hurryNow()
	go func() {
		<-ctx.Done()
		stop()
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
		defer signal.Stop(sig)
		select {
		case <-sig:
			log.Warn("second signal: killing bundles now")
			hurryNow()
		case <-hurry.Done():
		}
	}()
	sup := node.Supervision{PingEvery: f.pingEvery, PingTimeout: min(10*time.Second, f.pingEvery)}
	if f.pingEvery <= 0 {
		sup.PingEvery = -1
	}
	limits := rpc.Limits{MaxDepth: f.maxDepth}
	cfg := serveapi.Config{
		Logger:  log,
		Version: Version,
		Source:  reload.Source{Dirs: f.bundles, Config: f.config},
		Watch:   f.watch,
		Node: node.Config{
			Supervision: sup,
			Limits: node.Limits{MaxLine: int(f.maxBundleMessage), MaxQueue: int(f.maxQueue), Message: limits,
				StderrLine: int(f.maxStderrLine)},
			OnStarting: startProgress(stderr),
			Lazy:       f.lazy,
			StateDir:   f.stateDir,
			Run:        codemode.Bounds{Steps: f.run.Steps, Time: f.run.Time, Calls: f.run.Calls, Parallel: f.run.Parallel, Bytes: int64(f.runBytes)},
			RunWorker:  f.runWorker.config(),
			Results:    f.results.bounds(),
			Sandbox:    f.sandbox,
		},
		Front: front.Options{PageSize: f.pageSize, Names: f.names, MaxMessage: int(f.maxBody),
			MaxQueue: int(f.maxQueue), MaxInflight: f.maxInflight, Limits: limits,
			View: access.View(f.view), Pins: pins(f.pins), Client: f.client,
			ViewMaxTools: f.viewMaxTools, ViewMaxTokens: f.viewMaxTokens,
			Tasks: front.TaskOptions{TTL: f.taskTTL, MaxPerClient: f.maxClientTasks, MaxBytes: int64(f.maxTaskBytes), MaxClientBytes: int64(f.maxClientBytes)}},
		Cluster:           f.cluster.cfg,
		AccessFile:        f.access,
		LockFile:          f.lock,
		AuditFile:         f.audit,
		AuditArgs:         f.auditArgs,
		AuditMaxValue:     int(f.auditArgsMax),
		AuditMaxSize:      int64(f.auditMaxSize),
		AuditKeep:         f.auditKeep,
		Metrics:           f.metrics,
		OAuthIssuer:       f.oauthIssuer,
		OAuthAudience:     f.oauthAudience,
		OAuthRequireATJWT: f.oauthRequireATJWT,
		OAuthClientID:     f.oauthClientID,
		OAuthClientSecret: secret,
		Stdio:             f.stdio,
		Stdin:             stdin,
		Stdout:            stdout,
		HTTP:              f.http,
		HTTPOptions: httpfront.Options{AllowOrigins: f.allowOrigin, Token: token, MaxBody: int64(f.maxBody),
			MaxSessions: f.maxSessions, MaxClientSessions: f.maxClientSessions, IdleTimeout: f.sessionIdle,
			TrustedProxies: f.trusted},
		MaxConns:    f.maxConns,
		ReadTimeout: f.readTimeout,
		ConnIdle:    f.connIdle,
		Hurry:       hurry,
	}
	if f.http == "" && f.cluster.cfg == nil {
		oneClientProcs()
	}
	if err := serveapi.Run(ctx, cfg); err != nil {
		log.Error("toolnode stopped", "error", err)
		return ExitError
	}
	return ExitOK
}

// defaultStateDir is toolnode's folder in the user's cache directory, or "" (surfaces
// kept in memory only) when there is none.
func defaultStateDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "toolnode")
}

// pins parses the --pin patterns, checked by parseServe.
func pins(patterns []string) []access.Pattern {
	out := make([]access.Pattern, 0, len(patterns))
	for _, p := range patterns {
		pat, _ := access.ParsePattern(p)
		out = append(out, pat)
	}
	return out
}

// startProgress shows how many bundles have started on a terminal, where starting many
// takes long enough to wonder; elsewhere (logs, pipes) the log lines say it.
func startProgress(w io.Writer) func(done, total int) {
	f, ok := w.(*os.File)
	if !ok {
		return nil
	}
	if fi, err := f.Stat(); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return nil
	}
	var mu sync.Mutex
	return func(done, total int) {
		if total < 2 {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(f, "\rstarting bundles: %d/%d", done, total)
		if done == total {
			fmt.Fprintln(f)
		}
	}
}
