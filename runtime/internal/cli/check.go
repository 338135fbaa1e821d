package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/toolnode/toolnode/runtime/internal/catalog"
	"github.com/toolnode/toolnode/runtime/internal/manifest"
	"github.com/toolnode/toolnode/runtime/internal/sandbox"
	"github.com/toolnode/toolnode/runtime/internal/upstream"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// checker runs the steps of `toolnode check` and prints each with its outcome and time.
type checker struct {
	out    io.Writer
	failed []string
	// tail returns the bundle's last stderr lines, once its process has started.
	tail func() []string
}

func (c *checker) step(name string, start time.Time, err error, detail string) bool {
	took := time.Since(start)
	verdict := "ok"
	if err != nil {
		verdict, detail = "FAIL", err.Error()
		c.failed = append(c.failed, name)
	}
	fmt.Fprintf(c.out, "  %-10s %-4s %-60s %8s\n", name, verdict, detail, took.Round(10*time.Microsecond))
	return err == nil
}

func checkCommand(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	verbose := fs.Bool("v", false, "show the bundle's stderr and the node's log")
	fs.Usage = func() {
		fmt.Fprint(stderr, `Usage: toolnode check [-v] DIR

Checks a bundle without serving it: its manifest, that it starts, the MCP handshake, its
tools' names and schemas, that it writes nothing but MCP to stdout, and that it stops when
asked; with how long each step took and a verdict. Exits 1 when a step fails.

Flags:
`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return ExitOK
		}
		return ExitUsage
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return ExitUsage
	}
	level := hclog.Off
	if *verbose {
		level = hclog.Debug
	}
	log := hclog.New(&hclog.LoggerOptions{Name: "check", Level: level, Output: stderr})
	c := &checker{out: stdout}
	fmt.Fprintf(stdout, "checking %s\n", fs.Arg(0))
	c.run(fs.Arg(0), log)
	if len(c.failed) > 0 {
		if c.tail != nil && !*verbose {
			if tail := c.tail(); len(tail) > 0 {
				fmt.Fprintln(stdout, "the bundle's last lines on stderr:")
				for _, line := range tail {
					fmt.Fprintf(stdout, "    %s\n", line)
				}
			}
		}
		fmt.Fprintf(stdout, "verdict: FAIL (%s)\n", strings.Join(c.failed, ", "))
		if !*verbose {
			fmt.Fprintf(stdout, "toolnode check -v %s shows all of the bundle's stderr and the node's log\n", fs.Arg(0))
		}
		return ExitError
	}
	fmt.Fprintln(stdout, "verdict: PASS")
	return ExitOK
}

// sandbox reports the bundle's sandbox and which of its settings this machine enforces,
// by which mechanism; it fails where the sandbox requires one this machine lacks. The
// start that follows runs under it.
func (c *checker) sandbox(m *manifest.Manifest) bool {
	if m.Sandbox == nil || m.Remote() {
		return true
	}
	t := time.Now()
	e := sandbox.Probe()
	if !c.step("sandbox", t, e.RequireError(*m.Sandbox), e.Describe(*m.Sandbox)) {
		return false
	}
	if missing := e.Unenforced(*m.Sandbox); len(missing) > 0 {
		fmt.Fprintf(c.out, "  %-10s      not enforced on this machine: %s (docs/sandbox.md says what each needs)\n", "", strings.Join(missing, ", "))
	}
	return true
}

func (c *checker) run(dir string, log hclog.Logger) {
	t := time.Now()
	m, err := manifest.Load(filepath.Join(dir, manifest.FileName))
	if !c.step("manifest", t, err, func() string {
		if m == nil {
			return ""
		}
		if m.Remote() {
			return fmt.Sprintf("name %q, url %s", m.Name, m.URL)
		}
		return fmt.Sprintf("name %q, command %s", m.Name, strings.Join(m.Command, " "))
	}()) {
		return
	}
	if !c.sandbox(m) {
		return
	}
	t = time.Now()
	cfg, err := upstream.ConfigFor(m, nil, log.Named(m.Name))
	var junkMu sync.Mutex
	var junk [][]byte
	var client *upstream.Client
	if err == nil {
		cfg.Logger, cfg.Handler = log, nullHandler{}
		cfg.OnJunk = func(line []byte, _ error) {
			junkMu.Lock()
			junk = append(junk, bytes.Clone(line))
			junkMu.Unlock()
		}
		client, err = upstream.Start(cfg)
	}
	if !c.step("start", t, err, startDetail(client)) {
		return
	}
	c.tail = client.StderrTail
	defer func() {
		t := time.Now()
		err := client.Close(context.Background())
		c.step("stop", t, err, client.ExitStatus()+" after stdin closed")
	}()

	timeout := m.Timeouts.Start
	ctx, cancel := context.WithTimeoutCause(context.Background(), timeout, fmt.Errorf("no answer within the start timeout of %s", timeout))
	defer cancel()
	t = time.Now()
	err = client.Initialize(ctx)
	if !c.step("handshake", t, err, fmt.Sprintf("protocol %s (%s), server %s %s", client.Init.ProtocolVersion, client.Era(),
		client.Init.ServerInfo.Name, client.Init.ServerInfo.Version)) {
		return
	}
	t = time.Now()
	tools, err := client.ListTools(ctx)
	if !c.step("tools", t, err, fmt.Sprintf("%d tools", len(tools))) {
		return
	}
	t = time.Now()
	exposed, err := checkNames(m, tools)
	c.step("names", t, err, exposed)
	t = time.Now()
	detail, err := checkSchemas(tools)
	c.step("schemas", t, err, detail)
	t = time.Now()
	err = client.Ping(ctx)
	c.step("ping", t, err, "answered")
	t = time.Now()
	junkMu.Lock()
	err = nil
	if len(junk) > 0 {
		err = fmt.Errorf("%d stray stdout line(s), first: %.60q (log to stderr instead)", len(junk), junk[0])
	}
	junkMu.Unlock()
	c.step("stdout", t, err, "nothing but MCP")
}

// startDetail says what was started: a process, or the session with a remote bundle.
func startDetail(c *upstream.Client) string {
	switch {
	case c == nil:
		return ""
	case c.URL() != "":
		return "url " + c.URL()
	}
	return fmt.Sprintf("pid %d", c.Pid())
}

// checkNames merges the tools as the node would and reports how they are exposed.
func checkNames(m *manifest.Manifest, tools []json.RawMessage) (string, error) {
	cat, notices := catalog.Build([]catalog.Source{{Bundle: m.Name, Seats: m.Seats, NoPrefix: !m.Prefixed(), Tools: tools}})
	var names []string
	for _, e := range cat.Entries() {
		names = append(names, e.Name)
	}
	if len(notices) > 0 {
		var msgs []string
		for _, n := range notices {
			msgs = append(msgs, n.String())
		}
		return "", fmt.Errorf("%s", strings.Join(msgs, "; "))
	}
	return "exposed as " + clipList(names, 4), nil
}

// checkSchemas compiles every input and output schema as JSON Schema (2020-12 unless the
// schema says otherwise).
func checkSchemas(tools []json.RawMessage) (string, error) {
	var problems []string
	count := 0
	for _, raw := range tools {
		var tl mcp.Tool
		if err := json.Unmarshal(raw, &tl); err != nil {
			problems = append(problems, fmt.Sprintf("a tool is not an object: %v", err))
			continue
		}
		for kind, schema := range map[string]json.RawMessage{"inputSchema": tl.InputSchema, "outputSchema": tl.OutputSchema} {
			if len(schema) == 0 {
				if kind == "inputSchema" {
					problems = append(problems, fmt.Sprintf("%s has no inputSchema", tl.Name))
				}
				continue
			}
			count++
			if err := compileSchema(schema); err != nil {
				problems = append(problems, fmt.Sprintf("%s %s: %v", tl.Name, kind, err))
			}
		}
	}
	if len(problems) > 0 {
		return "", fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return fmt.Sprintf("%d schemas compile", count), nil
}

func compileSchema(schema json.RawMessage) error {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return err
	}
	if obj, ok := doc.(map[string]any); !ok || obj["type"] != "object" {
		return fmt.Errorf(`must be an object schema ("type": "object")`)
	}
	comp := jsonschema.NewCompiler()
	comp.DefaultDraft(jsonschema.Draft2020)
	if err := comp.AddResource("tool.json", doc); err != nil {
		return err
	}
	_, err = comp.Compile("tool.json")
	return err
}

func clipList(s []string, n int) string {
	if len(s) <= n {
		return strings.Join(s, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(s[:n], ", "), len(s)-n)
}

// nullHandler is the check's stand-in for clients: it forwards nothing and answers no
// request of the bundle.
type nullHandler struct{}

func (nullHandler) Notify(*upstream.Client, string, json.RawMessage) {}

func (nullHandler) Request(context.Context, *upstream.Client, string, json.RawMessage) (json.RawMessage, error) {
	return nil, fmt.Errorf("toolnode check answers no requests")
}
