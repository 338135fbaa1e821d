package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnode/toolnode/sdk-go/app/provider"
)

// toProvider turns a tool of the SDK into the part the formats are made of, its schema
// decoded with numbers as written.
func toProvider(t *mcp.Tool) (provider.Tool, error) {
	raw, err := json.Marshal(t)
	if err != nil {
		return provider.Tool{}, fmt.Errorf("tool %s: %w", t.Name, err)
	}
	return provider.DecodeTool(raw)
}

// Tools returns the tools this Node may use, as the node lists them.
func (n *Node) Tools(ctx context.Context) ([]provider.Tool, error) {
	list, err := n.list(ctx)
	if err != nil {
		return nil, err
	}
	var out []provider.Tool
	for _, t := range list.tools {
		if n.allow(t.Name) {
			out = append(out, t)
		}
	}
	return out, nil
}

// Definitions returns the tools in the format f (provider.Formats), with the names they
// were given; strict asks OpenAI's strict mode wherever a schema allows it. A tool whose
// schema cannot be given is left out, named in the result's LeftOut, and logged.
func (n *Node) Definitions(ctx context.Context, f string, strict bool) (*provider.Definitions, error) {
	if err := provider.CheckFormat(f); err != nil {
		return nil, err
	}
	list, err := n.list(ctx)
	if err != nil {
		return nil, err
	}
	key := defsKey{f, strict, list.version}
	n.mu.Lock()
	d := n.defs[key]
	n.mu.Unlock()
	if d != nil {
		return d, nil
	}
	var allowed []provider.Tool
	for _, t := range list.tools {
		if n.allow(t.Name) {
			allowed = append(allowed, t)
		}
	}
	if d, err = provider.Make(allowed, f, strict); err != nil {
		return nil, err
	}
	for _, p := range d.LeftOut {
		slog.Warn("toolnode app", "error", p)
	}
	n.mu.Lock()
	for k := range n.defs {
		if k.version != list.version {
			delete(n.defs, k)
		}
	}
	n.defs[key] = d
	n.mu.Unlock()
	return d, nil
}

// ToolsFor returns the tools of a request to the API f.
func (n *Node) ToolsFor(ctx context.Context, f string, strict bool) ([]any, error) {
	d, err := n.Definitions(ctx, f, strict)
	if err != nil {
		return nil, err
	}
	return d.Tools, nil
}

// ErrForbidden is wrapped by the error of a call of a tool the patterns leave out.
var ErrForbidden = errors.New("tool not allowed")

// Call calls a tool by its toolnode name. Errors wrap ErrForbidden (a tool the patterns
// leave out), ErrUnreachable (the node cannot be reached, or the session was lost during
// the call: the next call opens it again) or context.DeadlineExceeded past Config.Timeout.
func (n *Node) Call(ctx context.Context, name string, arguments map[string]any) (*mcp.CallToolResult, error) {
	if !n.allow(name) {
		return nil, fmt.Errorf("%w: %s (allow %v, deny %v)", ErrForbidden, name, n.cfg.Allow, n.cfg.Deny)
	}
	s, err := n.client(ctx)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, n.cfg.Timeout)
	defer cancel()
	if arguments == nil {
		arguments = map[string]any{}
	}
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: arguments})
	if err != nil {
		if broken(ctx, err) {
			n.lost(s)
			return nil, fmt.Errorf("%w: lost the node at %s during the call of %s: %w; the next call opens the session again",
				ErrUnreachable, n.describe(), name, err)
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return res, nil
}

func (n *Node) run(ctx context.Context, call provider.Call, d *provider.Definitions) provider.Outcome {
	name, ok := d.Names.Tool(call.Name)
	if !ok {
		if _, known := d.Schemas[call.Name]; known { // the toolnode name itself: accepted too
			name, ok = call.Name, true
		}
	}
	if !ok {
		return n.notGiven(ctx, call)
	}
	if call.BadArguments != "" {
		return provider.ErrorOutcome(call, "invalid_arguments", false, name+": "+call.BadArguments)
	}
	args := call.Arguments
	if d.Strict[name] {
		args = provider.DropStrictNulls(args, d.Schemas[name])
	}
	s, err := n.client(ctx)
	if err != nil {
		return provider.ErrorOutcome(call, "failed", false, err.Error())
	}
	cctx, cancel := context.WithTimeout(ctx, n.cfg.Timeout)
	defer cancel()
	res, err := s.CallTool(cctx, &mcp.CallToolParams{Name: name, Arguments: args})
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return provider.ErrorOutcome(call, "failed", true, name+" was cancelled with the run; it may have acted: check before calling it again")
	case cctx.Err() != nil:
		return provider.ErrorOutcome(call, "timeout", true, fmt.Sprintf(
			"%s gave no answer within %s and was cancelled; it may have acted: check before calling it again", name, n.cfg.Timeout))
	case broken(cctx, err):
		n.lost(s)
		return provider.ErrorOutcome(call, "failed", true, fmt.Sprintf(
			"the session to the node was lost during the call of %s (%v); it may have acted: check before calling it again", name, err))
	default:
		kind := "invalid_arguments"
		if strings.Contains(strings.ToLower(err.Error()), "unknown tool") {
			kind = "unknown_tool"
		}
		return provider.ErrorOutcome(call, kind, false, fmt.Sprintf("%s: %v", name, err))
	}
	raw, err := json.Marshal(res)
	if err != nil {
		return provider.ErrorOutcome(call, "failed", true, fmt.Sprintf("%s: the result cannot be read: %v", name, err))
	}
	return provider.OutcomeOf(call, raw)
}

// notGiven is the outcome of a call of a tool the model was not given: a tool of the node
// the patterns leave out, or none at all.
func (n *Node) notGiven(ctx context.Context, call provider.Call) provider.Outcome {
	if list, err := n.list(ctx); err == nil {
		names := make([]string, len(list.tools))
		for i, t := range list.tools {
			names[i] = t.Name
		}
		name, ok := provider.MapNames(names).Tool(call.Name)
		if !ok {
			for _, t := range names {
				if t == call.Name {
					name, ok = t, true
				}
			}
		}
		if ok {
			return provider.ErrorOutcome(call, "forbidden", false, fmt.Sprintf("tool %q is not allowed here", name))
		}
	}
	return provider.ErrorOutcome(call, "unknown_tool", false, fmt.Sprintf("no tool is named %q; call one of the tools given", call.Name))
}

// Run runs calls (named as the model named them) in parallel, one Outcome each, in order.
// Cancelling ctx cancels every call still in flight.
func (n *Node) Run(ctx context.Context, f string, calls []provider.Call, strict bool) ([]provider.Outcome, error) {
	d, err := n.Definitions(ctx, f, strict)
	if err != nil {
		return nil, err
	}
	out := make([]provider.Outcome, len(calls))
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = n.run(ctx, c, d)
		}()
	}
	wg.Wait()
	return out, nil
}

// Refusal is the answer to tool calls past a conversation's turn limit.
const Refusal = "Tool call refused: this conversation has used its %d tool-calling turns. " +
	"Give your final answer without calling tools."

// Conversation is one conversation's tools and tool turns: each response with tool calls is
// a turn, and past MaxTurns the calls are answered with a refusal the model can read
// instead of being run. Not for concurrent use.
type Conversation struct {
	Node     *Node
	Format   string
	Strict   bool
	MaxTurns int
	Turns    int
}

// Conversation starts a conversation with the API f.
func (n *Node) Conversation(f string, strict bool, maxTurns int) (*Conversation, error) {
	if err := provider.CheckFormat(f); err != nil {
		return nil, err
	}
	return &Conversation{Node: n, Format: f, Strict: strict, MaxTurns: maxTurns}, nil
}

// Tools returns the tools of a request.
func (c *Conversation) Tools(ctx context.Context) ([]any, error) {
	return c.Node.ToolsFor(ctx, c.Format, c.Strict)
}

// Results runs the tool calls of a response (its JSON, e.g. the SDK response's RawJSON())
// in parallel and returns the messages (input items, for Responses) that carry their
// results back; nil when it has none.
func (c *Conversation) Results(ctx context.Context, response []byte) ([]any, error) {
	calls, err := provider.CallsOf(c.Format, response)
	if err != nil || len(calls) == 0 {
		return nil, err
	}
	c.Turns++
	var outcomes []provider.Outcome
	if c.Turns > c.MaxTurns {
		text := fmt.Sprintf(Refusal, c.MaxTurns)
		for _, call := range calls {
			outcomes = append(outcomes, provider.Outcome{Call: call, Texts: []string{text}})
		}
	} else if outcomes, err = c.Node.Run(ctx, c.Format, calls, c.Strict); err != nil {
		return nil, err
	}
	return provider.ResultMessages(c.Format, outcomes)
}

// Exhausted reports whether the next response's tool calls would be refused.
func (c *Conversation) Exhausted() bool { return c.Turns >= c.MaxTurns }

// Pool hands out one Node per endpoint, for a process whose parts each name the endpoint
// they use: they share one session. Safe for concurrent use.
type Pool struct {
	mu    sync.Mutex
	nodes map[string]*Node
}

// Get returns the pool's Node of cfg's endpoint (URL and token, or command), making it on
// first use with cfg's other settings.
func (p *Pool) Get(cfg Config) (*Node, error) {
	key := fmt.Sprintf("%q %q %q %q", cfg.URL, cfg.Token, cfg.Command, cfg.ProtocolVersion)
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := p.nodes[key]; n != nil {
		return n, nil
	}
	n, err := New(cfg)
	if err != nil {
		return nil, err
	}
	if p.nodes == nil {
		p.nodes = map[string]*Node{}
	}
	p.nodes[key] = n
	return n, nil
}

// Close closes every Node of the pool.
func (p *Pool) Close() error {
	p.mu.Lock()
	nodes := p.nodes
	p.nodes = nil
	p.mu.Unlock()
	var errs []error
	for _, n := range nodes {
		errs = append(errs, n.Close())
	}
	return errors.Join(errs...)
}
