package bundle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// DefaultPageSize is the number of items in one */list answer when Options.PageSize is not
// set.
const DefaultPageSize = 100

// Options configures a Server. The zero value works: every field has a default.
type Options struct {
	// Name is serverInfo.name in the initialize answer.
	// Default: the base name of the executable.
	Name string

	// Title is serverInfo.title, a display name for people. Default: none.
	Title string

	// Version is serverInfo.version. Default: the main module's version from the build
	// information, which is "(devel)" for a local build.
	Version string

	// Instructions is the initialize answer's instructions: a hint for the model on how to
	// use the tools. Default: none.
	Instructions string

	// PageSize is the largest number of items one tools/list, prompts/list,
	// resources/list or resources/templates/list answer holds; longer lists are paginated
	// with an opaque cursor. Default: DefaultPageSize (100).
	PageSize int

	// Logger receives what the server cannot tell the client: unreadable input, handler
	// panics, invalid results, write failures. Default: a text logger on os.Stderr.
	Logger *slog.Logger

	// CacheTTL is, under 2026-07-28, how long a client may keep a list, a read or the
	// server/discover answer (ttlMs). Default: one minute; a negative value sends 0, which
	// makes clients fetch again every time.
	CacheTTL time.Duration

	// StateKey seals the requestState of input_required results (HMAC-SHA256). Default:
	// the value of the environment variable TOOLNODE_STATE_KEY, else a random key per
	// process (then a state is only accepted by the process that sealed it).
	StateKey []byte
}

// Handler runs one tools/call. The arguments in call have already been checked against the
// tool's input schema. A returned error becomes a tool error: a result with isError set
// and the error's message as text, unless it is a CallError, which answers with that
// JSON-RPC error. ctx is cancelled when the client cancels the call (its answer is then
// dropped) or when Serve stops.
type Handler func(ctx context.Context, call *Call) (*mcp.CallToolResult, error)

// Server is an MCP server offering tools, and optionally prompts, resources and
// completions. Its methods may be called concurrently, also while it serves.
type Server struct {
	opts     Options
	stateKey []byte

	mu         sync.RWMutex
	tools      map[string]*tool
	prompts    map[string]*prompt
	resources  map[string]ResourceHandler // by URI
	templates  []*template                // in the order added: the first that matches a URI serves it
	skills     []skill                    // in the order added
	completers int
	listed     [numLists][]json.RawMessage // definitions for the */list answers, in the order added
	sessions   map[*session]bool           // those serving now, for ResourceUpdated
}

// The lists a client can page through.
type listKind int

const (
	listTools listKind = iota
	listPrompts
	listResources
	listTemplates
	listSkills
	numLists
)

// listKey is the member of each list's answer that holds the items.
var listKey = [numLists]string{"tools", "prompts", "resources", "resourceTemplates", "skills"}

type tool struct {
	name    string
	input   *jsonschema.Schema
	output  *jsonschema.Schema // nil when the tool declares no output schema
	handler Handler
	logger  *slog.Logger
}

// NewServer returns a server without tools, with the defaults of Options filled in.
func NewServer(opts Options) *Server {
	if opts.Name == "" {
		opts.Name = filepath.Base(os.Args[0])
	}
	if opts.Version == "" {
		opts.Version = "(devel)"
		if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
			opts.Version = bi.Main.Version
		}
	}
	if opts.PageSize <= 0 {
		opts.PageSize = DefaultPageSize
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	switch {
	case opts.CacheTTL == 0:
		opts.CacheTTL = time.Minute
	case opts.CacheTTL < 0:
		opts.CacheTTL = 0
	}
	return &Server{
		opts:      opts,
		stateKey:  newStateKey(opts.StateKey, os.Getenv(StateKeyEnv)),
		tools:     map[string]*tool{},
		prompts:   map[string]*prompt{},
		resources: map[string]ResourceHandler{},
		sessions:  map[*session]bool{},
	}
}

// AddTool offers t, run by h. It fails when the name breaks SEP-986 (1 to 128 characters of
// A-Z a-z 0-9 _ - .), is already taken, or when a schema does not compile. An empty
// InputSchema stands for {"type":"object"}. Tools are listed in the order they are added.
func (s *Server) AddTool(t mcp.Tool, h Handler) error {
	if !mcp.ValidToolName(t.Name) {
		return fmt.Errorf("bundle: tool name %q breaks SEP-986: it must be 1 to %d characters from [A-Za-z0-9_.-]", t.Name, mcp.MaxToolNameLen)
	}
	if h == nil {
		return fmt.Errorf("bundle: tool %q has no handler", t.Name)
	}
	if len(t.InputSchema) == 0 {
		t.InputSchema = json.RawMessage(`{"type":"object"}`)
	}
	if t.Execution != nil && t.Execution.TaskSupport != "" && !mcp.ValidTaskSupport(t.Execution.TaskSupport) {
		return fmt.Errorf("bundle: tool %q: execution.taskSupport %q: use %q, %q or %q", t.Name, t.Execution.TaskSupport,
			mcp.TaskOptional, mcp.TaskRequired, mcp.TaskForbidden)
	}
	tl := &tool{name: t.Name, handler: h, logger: s.opts.Logger.With("tool", t.Name)}
	var err error
	if tl.input, err = compileSchema(t.InputSchema); err != nil {
		return fmt.Errorf("bundle: tool %q: input schema: %w", t.Name, err)
	}
	if len(t.OutputSchema) > 0 {
		if tl.output, err = compileSchema(t.OutputSchema); err != nil {
			return fmt.Errorf("bundle: tool %q: output schema: %w", t.Name, err)
		}
	}
	def, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("bundle: tool %q: %w", t.Name, err)
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.tools[t.Name]; dup {
		return fmt.Errorf("bundle: tool %q is already added", t.Name)
	}
	s.tools[t.Name] = tl
	s.listed[listTools] = append(s.listed[listTools], def)
	return nil
}

func (s *Server) tool(name string) *tool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.tools[name]
}

// page returns the definitions of a list from offset on, at most one page of them, and the
// offset of the next page (0 when this is the last).
func (s *Server) page(kind listKind, offset int) (defs []json.RawMessage, next int, ok bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	all := s.listed[kind]
	if offset < 0 || offset > len(all) {
		return nil, 0, false
	}
	end := min(offset+s.opts.PageSize, len(all))
	defs = append([]json.RawMessage{}, all[offset:end]...)
	if end < len(all) {
		next = end
	}
	return defs, next, true
}

// capabilities says what the server offers: tools and logging always, the rest once added.
func (s *Server) capabilities() any {
	type listChanged struct {
		ListChanged bool `json:"listChanged"`
	}
	type resources struct {
		Subscribe   bool `json:"subscribe"`
		ListChanged bool `json:"listChanged"`
	}
	caps := struct {
		Tools       listChanged         `json:"tools"`
		Logging     struct{}            `json:"logging"`
		Prompts     *listChanged        `json:"prompts,omitempty"`
		Resources   *resources          `json:"resources,omitempty"`
		Completions *struct{}           `json:"completions,omitempty"`
		Extensions  map[string]struct{} `json:"extensions,omitempty"`
	}{}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if len(s.prompts) > 0 {
		caps.Prompts = &listChanged{}
	}
	if len(s.resources) > 0 || len(s.templates) > 0 {
		caps.Resources = &resources{Subscribe: true}
	}
	if s.completers > 0 {
		caps.Completions = &struct{}{}
	}
	if len(s.skills) > 0 {
		caps.Extensions = map[string]struct{}{mcp.ExtensionSkills: {}}
	}
	return caps
}

// run checks the arguments, runs the handler and checks its result, turning every failure
// into a tool error but a CallError, which is returned as the call's JSON-RPC error.
func (t *tool) run(ctx context.Context, c *Call) (res *mcp.CallToolResult, rerr *RPCError) {
	if msg := checkArguments(t.input, c.Arguments); msg != "" {
		return mcp.ErrorResult(msg), nil
	}
	defer func() {
		if r := recover(); r != nil {
			t.logger.Error("tool handler panicked", "panic", r, "stack", string(debug.Stack()))
			res, rerr = mcp.ErrorResult(fmt.Sprintf("tool %q failed: %v", t.name, r)), nil
		}
	}()
	res, err := t.handler(ctx, c)
	if ce, ok := errors.AsType[*callError](err); ok {
		return nil, &ce.RPCError
	}
	if err != nil {
		return mcp.ErrorResult(err.Error()), nil
	}
	if res == nil {
		res = &mcp.CallToolResult{}
	}
	if res.Content == nil {
		// content is required on the wire even when empty.
		r := *res
		r.Content = []mcp.Content{}
		res = &r
	}
	if t.output != nil && !res.IsError {
		if err := checkStructured(t.output, res.StructuredContent); err != nil {
			t.logger.Error("tool result breaks its output schema", "err", err)
			return mcp.ErrorResult(fmt.Sprintf("tool %q returned an invalid result: %v", t.name, err)), nil
		}
	}
	return res, nil
}

// checkStructured reports how structured content fails the output schema, if it does.
func checkStructured(schema *jsonschema.Schema, sc json.RawMessage) error {
	if len(sc) == 0 {
		return errors.New("no structuredContent although the tool declares an output schema")
	}
	v, err := decodeInstance(sc)
	if err != nil {
		return fmt.Errorf("structuredContent: %w", err)
	}
	if err := schema.Validate(v); err != nil {
		return errors.New(describe(err, "structuredContent"))
	}
	return nil
}
