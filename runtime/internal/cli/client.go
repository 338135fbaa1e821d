package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/toolnode/toolnode/runtime/internal/access"
	"github.com/toolnode/toolnode/runtime/internal/rpc"

	"github.com/toolnode/toolnode/runtime/internal/node"
	"github.com/toolnode/toolnode/runtime/internal/reload"
	"github.com/toolnode/toolnode/runtime/internal/remote"
	"github.com/toolnode/toolnode/sdk-go/app/provider"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// target is where the quick-check commands find tools: bundle folders run in-process, or
// a running node reached over HTTP.
type target interface {
	listTools(ctx context.Context) ([]json.RawMessage, error)
	// servedBy returns what names the bundle serving a tool, for the tools command.
	servedBy(ctx context.Context) (func(tool string) string, error)
	callTool(ctx context.Context, params json.RawMessage) (json.RawMessage, error)
	close()
}

type targetFlags struct {
	bundles   listFlag
	config    string
	url       string
	tokenFile string
	logLevel  string
}

func (t *targetFlags) register(fs *flag.FlagSet) {
	t.registerLocal(fs)
	fs.StringVar(&t.url, "url", "", "use the running node at `URL`, e.g. http://127.0.0.1:7777/mcp")
	fs.StringVar(&t.tokenFile, "token-file", "", "bearer token for --url, read from `FILE`")
}

// registerLocal registers the flags of a target run in-process only (no --url), for the
// commands that need the bundles themselves.
func (t *targetFlags) registerLocal(fs *flag.FlagSet) {
	fs.Var(&t.bundles, "bundles", "run the bundles found in `DIR` (may be repeated)")
	fs.StringVar(&t.config, "config", "", "run the servers of an mcpServers `FILE`")
	fs.StringVar(&t.logLevel, "log-level", "warn", "log `LEVEL` of the bundles run in-process")
}

// with opens the target for the command cmd, within limit, runs fn on it and closes it;
// a target that cannot be opened is cmd's error.
func (t *targetFlags) with(cmd string, limit time.Duration, stderr io.Writer, fn func(ctx context.Context, tgt target) int) int {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	tgt, err := t.open(ctx, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "toolnode %s: %v\n", cmd, err)
		return ExitError
	}
	defer tgt.close()
	return fn(ctx, tgt)
}

func (t *targetFlags) open(ctx context.Context, stderr io.Writer) (target, error) {
	switch {
	case t.url != "" && (len(t.bundles) > 0 || t.config != ""):
		return nil, errors.New("give either --url or --bundles/--config, not both")
	case t.url != "":
		token := ""
		if t.tokenFile != "" {
			b, err := os.ReadFile(t.tokenFile)
			if err != nil {
				return nil, fmt.Errorf("--token-file: %w", err)
			}
			token = strings.TrimSpace(string(b))
		}
		c, err := remote.Dial(ctx, t.url, token)
		if err != nil {
			return nil, err
		}
		return remoteTarget{c}, nil
	case len(t.bundles) > 0 || t.config != "":
		log := hclog.New(&hclog.LoggerOptions{Name: "toolnode", Level: hclog.LevelFromString(t.logLevel), Output: stderr})
		ms := reload.NewLoader(reload.Source{Dirs: t.bundles, Config: t.config}, log).Load()
		n := node.New(node.Config{Logger: log, Manifests: ms, Version: Version, OnStarting: startProgress(stderr)})
		n.Start()
		select {
		case <-n.Ready():
		case <-ctx.Done():
			n.Close(context.Background())
			return nil, ctx.Err()
		}
		for _, b := range n.Status() {
			if b.LastError != "" && b.State != node.StateReady {
				fmt.Fprintf(stderr, "toolnode: bundle %q is not running, so its tools are missing: %s\n", b.Name, b.LastError)
			}
		}
		return localTarget{n}, nil
	}
	return nil, errors.New("say where the tools are: --bundles DIR, --config FILE or --url URL")
}

type remoteTarget struct{ c *remote.Client }

func (r remoteTarget) listTools(ctx context.Context) ([]json.RawMessage, error) {
	var all []json.RawMessage
	cursor := ""
	for {
		var params any = struct{}{}
		if cursor != "" {
			params = mcp.PaginatedParams{Cursor: cursor}
		}
		raw, err := r.c.Call(ctx, mcp.MethodToolsList, params)
		if err != nil {
			return nil, err
		}
		var page mcp.ListToolsResult
		if err := json.Unmarshal(raw, &page); err != nil {
			return nil, fmt.Errorf("tools/list: %w", err)
		}
		all = append(all, page.Tools...)
		if cursor = page.NextCursor; cursor == "" {
			return all, nil
		}
	}
}

// servedBy asks the node for its bundles: a name beginning "<bundle>." belongs to that
// bundle (no other may take it), and "toolnode." to the node. Over HTTP the node does not
// say which bundle serves a seat verb or an unprefixed tool; those show "-". A client the
// node does not let call toolnode.status (an access file may not) is shown "-" for every
// tool but the node's own: the list is what it asked for, the column a courtesy.
func (r remoteTarget) servedBy(ctx context.Context) (func(string) string, error) {
	raw, err := r.c.Call(ctx, mcp.MethodToolsCall, map[string]any{"name": node.StatusToolName})
	var rpcErr *rpc.Error
	if errors.As(err, &rpcErr) {
		raw, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	var res struct {
		StructuredContent struct {
			Bundles []node.BundleStatus `json:"bundles"`
		} `json:"structuredContent"`
	}
	if raw != nil {
		if err := json.Unmarshal(raw, &res); err != nil {
			return nil, fmt.Errorf("%s: %w", node.StatusToolName, err)
		}
	}
	bundles := map[string]bool{}
	for _, b := range res.StructuredContent.Bundles {
		bundles[b.Name] = true
	}
	self, _, _ := strings.Cut(node.StatusToolName, ".")
	return func(tool string) string {
		prefix, _, ok := strings.Cut(tool, ".")
		switch {
		case ok && bundles[prefix]:
			return prefix
		case ok && prefix == self:
			return "(" + self + ")"
		}
		return "-"
	}, nil
}

func (r remoteTarget) callTool(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
	return r.c.Call(ctx, mcp.MethodToolsCall, params)
}

func (r remoteTarget) close() { r.c.Close() }

type localTarget struct{ n *node.Node }

func (l localTarget) listTools(context.Context) ([]json.RawMessage, error) {
	tools, _, err := l.n.Catalog().Page("", 0)
	return tools, err
}

func (l localTarget) servedBy(context.Context) (func(string) string, error) {
	by := map[string]string{}
	for _, e := range l.n.Catalog().Entries() {
		by[e.Name] = e.Bundle
	}
	return func(tool string) string { return by[tool] }, nil
}

func (l localTarget) callTool(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
	return l.n.Call(ctx, shellSession{}, params)
}

func (l localTarget) close() { l.n.Close(context.Background()) }

// shellSession is the command line as a client: progress and log messages go to stderr; it
// cannot answer sampling or elicitation.
type shellSession struct{}

func (shellSession) Notify(_ context.Context, method string, params any) error {
	b, _ := json.Marshal(params)
	fmt.Fprintf(os.Stderr, "%s %s\n", method, b)
	return nil
}

func (shellSession) Request(_ context.Context, method string, _ json.RawMessage) (json.RawMessage, error) {
	return nil, rpc.Errorf(mcp.CodeMethodNotFound, "the command line cannot answer %s", method)
}

func toolsCommand(args []string, stdout, stderr io.Writer) int {
	var t targetFlags
	fs := flag.NewFlagSet("tools", flag.ContinueOnError)
	fs.SetOutput(stderr)
	t.register(fs)
	asJSON := fs.Bool("json", false, "print the tools as JSON, as tools/list gives them")
	format := fs.String("format", "", "print the tools as the `API`'s request takes them: "+strings.Join(provider.Formats, ", "))
	strict := fs.Bool("strict", false, "with --format openai or openai-responses: strict mode wherever a schema allows it")
	var allow, deny listFlag
	fs.Var(&allow, "allow", "with --format: only tools matching `PATTERN` (* any run, ? one character; may be repeated)")
	fs.Var(&deny, "deny", "with --format: leave out tools matching `PATTERN` (may be repeated)")
	fs.Usage = func() {
		fmt.Fprint(stderr, "Usage: toolnode tools (--bundles DIR... | --config FILE | --url URL) [--json | --format API [--allow PATTERN]...]\n\n"+
			"Lists the merged tools: name, the bundle that serves it, and the first line of the description.\n"+
			"Over --url a seat verb or an unprefixed tool shows the bundle -: the node does not say which serves it.\n"+
			"--format prints the tools of a model API request, names and schemas made to its rules, as the\n"+
			"application libraries make them (docs/applications.md).\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if code, done := parse(fs, args, stderr); done {
		return code
	}
	if *format != "" {
		if err := provider.CheckFormat(*format); err != nil {
			fmt.Fprintf(stderr, "toolnode tools: --format: %v\n", err)
			return ExitUsage
		}
	}
	keep, err := toolFilter(allow, deny)
	if err != nil {
		fmt.Fprintf(stderr, "toolnode tools: %v\n", err)
		return ExitUsage
	}
	return t.with("tools", 2*time.Minute, stderr, func(ctx context.Context, tgt target) int {
		tools, err := tgt.listTools(ctx)
		if err != nil {
			fmt.Fprintf(stderr, "toolnode tools: %v\n", err)
			return ExitError
		}
		if *format != "" {
			return printFormat(stdout, stderr, tools, *format, *strict, keep)
		}
		if *asJSON {
			b, _ := json.MarshalIndent(tools, "", "  ")
			fmt.Fprintln(stdout, string(b))
			return ExitOK
		}
		servedBy, err := tgt.servedBy(ctx)
		if err != nil {
			fmt.Fprintf(stderr, "toolnode tools: %v\n", err)
			return ExitError
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "TOOL\tBUNDLE\tDESCRIPTION")
		var rows []string
		for _, raw := range tools {
			var tl mcp.Tool
			if json.Unmarshal(raw, &tl) != nil {
				continue
			}
			desc, _, _ := strings.Cut(strings.TrimSpace(tl.Description), "\n")
			rows = append(rows, fmt.Sprintf("%s\t%s\t%s", tl.Name, servedBy(tl.Name), desc))
		}
		sort.Strings(rows)
		for _, r := range rows {
			fmt.Fprintln(tw, r)
		}
		tw.Flush()
		return ExitOK
	})
}

// toolFilter checks --allow and --deny patterns as the access file's, and returns what they
// let through: every tool when no --allow is given.
func toolFilter(allow, deny []string) (func(string) bool, error) {
	if len(allow) == 0 {
		allow = []string{"*"}
	}
	parse := func(flag string, list []string) ([]access.Pattern, error) {
		var out []access.Pattern
		for _, s := range list {
			p, err := access.ParsePattern(s)
			if err != nil {
				return nil, fmt.Errorf("--%s: %w", flag, err)
			}
			out = append(out, p)
		}
		return out, nil
	}
	allowed, err := parse("allow", allow)
	if err != nil {
		return nil, err
	}
	denied, err := parse("deny", deny)
	if err != nil {
		return nil, err
	}
	matches := func(ps []access.Pattern, name string) bool {
		for _, p := range ps {
			if p.Match(name) {
				return true
			}
		}
		return false
	}
	return func(name string) bool { return matches(allowed, name) && !matches(denied, name) }, nil
}

// printFormat prints the tools kept by keep as the format's request takes them.
func printFormat(stdout, stderr io.Writer, raw []json.RawMessage, format string, strict bool, keep func(string) bool) int {
	var tools []provider.Tool
	for _, r := range raw {
		tl, err := provider.DecodeTool(r)
		if err != nil {
			fmt.Fprintf(stderr, "toolnode tools: %v\n", err)
			return ExitError
		}
		if keep(tl.Name) {
			tools = append(tools, tl)
		}
	}
	tools, problems := provider.Usable(tools)
	for _, p := range problems {
		fmt.Fprintf(stderr, "toolnode tools: %v\n", p)
	}
	d, err := provider.Make(tools, format, strict)
	if err != nil {
		fmt.Fprintf(stderr, "toolnode tools: %v\n", err)
		return ExitError
	}
	b, err := json.MarshalIndent(d.Tools, "", "  ")
	if err != nil {
		fmt.Fprintf(stderr, "toolnode tools: %v\n", err)
		return ExitError
	}
	fmt.Fprintln(stdout, string(b))
	return ExitOK
}

func callCommand(args []string, stdout, stderr io.Writer) int {
	var t targetFlags
	fs := flag.NewFlagSet("call", flag.ContinueOnError)
	fs.SetOutput(stderr)
	t.register(fs)
	rawArgs := fs.String("json", "", "the arguments as one JSON `OBJECT` instead of key=value pairs")
	raw := fs.Bool("raw", false, "print the whole result as JSON")
	fs.Usage = func() {
		fmt.Fprint(stderr, `Usage: toolnode call TOOL [key=value]... (--bundles DIR... | --config FILE | --url URL)

Calls one tool and prints its result. A value that is valid JSON (42, true, [1,2], {"a":1},
"quoted") is taken as JSON, anything else as a string. Exits 1 when the tool reports an error.

Flags:
`)
		fs.PrintDefaults()
	}
	positional, code, done := parseInterspersed(fs, args)
	if done {
		return code
	}
	if len(positional) == 0 {
		fmt.Fprintln(stderr, "toolnode call: name the tool to call")
		return ExitUsage
	}
	arguments, err := callArguments(positional[1:], *rawArgs)
	if err != nil {
		fmt.Fprintf(stderr, "toolnode call: %v\n", err)
		return ExitUsage
	}
	params, _ := json.Marshal(map[string]any{"name": positional[0], "arguments": arguments})
	return t.with("call", 10*time.Minute, stderr, func(ctx context.Context, tgt target) int {
		res, err := tgt.callTool(ctx, params)
		if err != nil {
			fmt.Fprintf(stderr, "toolnode call: %v\n", err)
			return ExitError
		}
		var result mcp.CallToolResult
		if err := json.Unmarshal(res, &result); err != nil {
			fmt.Fprintf(stderr, "toolnode call: bad result: %v\n", err)
			return ExitError
		}
		if *raw {
			fmt.Fprintln(stdout, string(res))
		} else {
			printResult(stdout, &result)
		}
		if result.IsError {
			return ExitError
		}
		return ExitOK
	})
}

// callArguments builds the arguments object from key=value pairs or a JSON object.
func callArguments(pairs []string, rawJSON string) (json.RawMessage, error) {
	if rawJSON != "" {
		if len(pairs) > 0 {
			return nil, errors.New("give the arguments either as --json or as key=value pairs")
		}
		var obj map[string]any
		if err := json.Unmarshal([]byte(rawJSON), &obj); err != nil {
			return nil, fmt.Errorf("--json must be a JSON object: %w", err)
		}
		return json.RawMessage(rawJSON), nil
	}
	obj := map[string]json.RawMessage{}
	for _, p := range pairs {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("argument %q: write key=value", p)
		}
		if json.Valid([]byte(v)) {
			obj[k] = json.RawMessage(v)
		} else {
			obj[k], _ = json.Marshal(v)
		}
	}
	return json.Marshal(obj)
}

func printResult(w io.Writer, r *mcp.CallToolResult) {
	for _, c := range r.Content {
		switch c.Type {
		case "text":
			fmt.Fprintln(w, c.Text)
		case "image", "audio":
			fmt.Fprintf(w, "[%s %s, %d base64 characters]\n", c.Type, c.MimeType, len(c.Data))
		default:
			b, _ := json.Marshal(c)
			fmt.Fprintln(w, string(b))
		}
	}
	if len(r.Content) == 0 && len(r.StructuredContent) > 0 {
		fmt.Fprintln(w, string(r.StructuredContent))
	}
}

func statusCommand(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := fs.String("url", "http://127.0.0.1:7777/mcp", "the running node's HTTP front, `URL`")
	tokenFile := fs.String("token-file", "", "bearer token, read from `FILE`")
	fs.Usage = func() {
		fmt.Fprint(stderr, "Usage: toolnode status [--url URL] [--token-file FILE]\n\nShows each bundle of a running node: state, pids (or URL), restarts, last error, tools, calls and latency; and for a node in a cluster, each node with its bundles and the round trip to it.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if code, done := parse(fs, args, stderr); done {
		return code
	}
	t := targetFlags{url: *url, tokenFile: *tokenFile}
	return t.with("status", 30*time.Second, stderr, func(ctx context.Context, tgt target) int {
		res, err := tgt.callTool(ctx, json.RawMessage(`{"name":"`+node.StatusToolName+`","arguments":{}}`))
		if err != nil {
			fmt.Fprintf(stderr, "toolnode status: %v\n", err)
			return ExitError
		}
		var st struct {
			StructuredContent struct{ Bundles []node.BundleStatus }
		}
		if err := json.Unmarshal(res, &st); err != nil {
			fmt.Fprintf(stderr, "toolnode status: bad answer: %v\n", err)
			return ExitError
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "BUNDLE\tSTATE\tPIDS OR URL\tRESTARTS\tTOOLS\tCALLS\tFAILED\tP50\tP99\tLAST ERROR")
		for _, b := range st.StructuredContent.Bundles {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%.2fms\t%.2fms\t%s\n",
				b.Name, b.State, b.Where(), b.Restarts, b.Tools, b.Calls, b.Failed, b.P50ms, b.P99ms, b.LastError)
		}
		tw.Flush()
		printCluster(stdout, res)
		return ExitOK
	})
}

// parseInterspersed parses flags that may come before, between or after the positional
// arguments, which it returns; done is true when the command should exit with code.
func parseInterspersed(fs *flag.FlagSet, args []string) (positional []string, code int, done bool) {
	for len(args) > 0 {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, ExitOK, true
			}
			return nil, ExitUsage, true
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
	return positional, 0, false
}

// parse parses flags and reports whether the command is done (help, or a usage error).
func parse(fs *flag.FlagSet, args []string, stderr io.Writer) (int, bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK, true
		}
		return ExitUsage, true
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "toolnode %s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
		return ExitUsage, true
	}
	return 0, false
}
