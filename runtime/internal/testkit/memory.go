package testkit

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/manifest"
	"github.com/toolnode/toolnode/sdk-go/bundle"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// Memory describes an in-memory bundle: a bundle built with the Go SDK (sdk-go's bundle
// package) that the node runs in its own process, on a pair of in-process pipes in place
// of a process's stdin and stdout (manifest.Manifest.InMemory), once per instance and
// again at each restart. Tests of the node's logic (routing, names, views, access, audit,
// results, tasks, approvals) use it instead of the fake bundle's process, which costs a
// process start and its teardown; a test whose point is the process (its start, crash,
// restart, environment, stderr, sandbox, signals) keeps the fake bundle (Fake).
//
// Its tools answer as the fake bundle's of the same name do, with the bundle's name:
//
//	echo {text}          "<name>:<text>"
//	mirror {region, text} echo's, its region an Mcp-Param header (x-mcp-header)
//	talk {text}          logs text (info), reports progress 1, answers "<name>:<text>"
//	sleep {ms}           reports progress 1 of 2, waits ms (or its cancellation), answers
//	                     "slept in <instance>"
//	big {bytes}          that many "x"
//	node-lamp.on         "lamp on by <name>"
//	instance             "<instance>": which of the bundle's runs serves it, "<name>#1"
//	                     for the first, counting restarts and pool instances
//	ticker {ms, every}   reports progress every "every" ms for ms, answers "<instance>"
//	late {ms, bytes}     waits ms (or its cancellation), answers that many "x"
//	elicit {question, ms} asks the client (elicitation/create), waits ms, answers
//	                     "<action>: <answer>"
//	sample {prompt}      asks the client's model (sampling/createMessage), answers
//	                     "model said: <text>"
//
// With Surface it also offers what the fake bundle's FAKE_SURFACE does: the prompt greet
// ("prompt greet of <name>"), the resource fake://<name>/readme and the template
// fake://<name>/items/{id} (each read "read by <name>"), and completion of both
// ("completed by <name>").
//
// Like every sdk-go bundle, it speaks 2026-07-28 to the node (it answers server/discover)
// unless Session is set.
type Memory struct {
	// Name names the bundle.
	Name string
	// Manifest holds more keys of its bundle.json, e.g. `"instances":2,"prefix":false`.
	Manifest string
	// Session makes it a bundle of the initialize era: server/discover is refused, so the
	// node opens a session with initialize, and the bundle asks its client by request.
	Session bool
	// Surface adds a prompt, a resource, a resource template and their completion.
	Surface bool
	// Received, when set, gets everything the bundle reads, as FAKE_RECORD's file does.
	Received *SyncBuffer
	// Delay is how long each run waits before it serves: a bundle slow to start.
	Delay time.Duration
	// Add, when set, adds the test's own tools, prompts or resources to the server.
	Add func(s *bundle.Server) error
	// Bare leaves out the tools above: the bundle offers what Add adds.
	Bare bool
}

// InMemory returns the manifests of the in-memory bundles ms, in their order; the test
// fails at once if one cannot be built.
func InMemory(t testing.TB, ms ...Memory) []*manifest.Manifest {
	t.Helper()
	out := make([]*manifest.Manifest, 0, len(ms))
	for _, m := range ms {
		out = append(out, m.Bundle(t))
	}
	return out
}

// Bundle returns the manifest of the in-memory bundle m; the test fails at once if it
// cannot be built.
func (m Memory) Bundle(t testing.TB) *manifest.Manifest {
	t.Helper()
	s := bundle.NewServer(bundle.Options{Name: "memory-" + m.Name, Version: "1",
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if !m.Bare {
		if err := m.addTools(s); err != nil {
			t.Fatalf("in-memory bundle %s: %v", m.Name, err)
		}
	}
	if m.Surface {
		if err := m.addSurface(s); err != nil {
			t.Fatalf("in-memory bundle %s: %v", m.Name, err)
		}
	}
	if m.Add != nil {
		if err := m.Add(s); err != nil {
			t.Fatalf("in-memory bundle %s: %v", m.Name, err)
		}
	}
	var runs atomic.Int64
	serve := func(ctx context.Context, stdin io.Reader, stdout io.Writer) error {
		ctx = context.WithValue(ctx, instanceKey{}, fmt.Sprintf("%s#%d", m.Name, runs.Add(1)))
		select {
		case <-time.After(m.Delay):
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		if m.Received != nil {
			stdin = io.TeeReader(stdin, m.Received)
		}
		// Like the fake bundle's process, it quits at the end of its input, its calls in
		// flight cancelled, rather than finish them first as an sdk-go bundle does.
		ctx, quit := context.WithCancelCause(ctx)
		defer quit(nil)
		stdin = quitAtEnd{stdin, quit}
		if !m.Session {
			return s.Serve(ctx, stdin, stdout)
		}
		in, out := refuseDiscover(stdin, stdout)
		defer in.Close() // unblocks the lines still being passed on
		return s.Serve(ctx, in, out)
	}
	keys := fmt.Sprintf(`{"name":%q`, m.Name)
	if m.Manifest != "" {
		keys += "," + m.Manifest
	}
	man, err := manifest.ParseInMemory([]byte(keys+"}"), serve)
	if err != nil {
		t.Fatalf("in-memory bundle %s: %v", m.Name, err)
	}
	return man
}

// instanceKey holds, in the context of an in-memory bundle's run, which run it is.
type instanceKey struct{}

// memoryTool is one of an in-memory bundle's tools: its input properties (JSON text
// without braces) and what a call does with its arguments.
type memoryTool struct {
	name, props string
	run         func(ctx context.Context, name string, c *bundle.Call, args memoryArgs) (string, error)
}

// memoryArgs are the arguments its tools read.
type memoryArgs struct {
	Text     string `json:"text"`
	Bytes    int    `json:"bytes"`
	MS       int    `json:"ms"`
	Prompt   string `json:"prompt"`
	Question string `json:"question"`
	Every    int    `json:"every"`
}

// wait waits ms, or until ctx is done.
func wait(ctx context.Context, ms int) error {
	select {
	case <-time.After(time.Duration(ms) * time.Millisecond):
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

var memoryTools = []memoryTool{
	{"echo", `"text":{"type":"string"}`, func(_ context.Context, name string, _ *bundle.Call, a memoryArgs) (string, error) {
		return name + ":" + a.Text, nil
	}},
	{"mirror", `"region":{"type":"string","x-mcp-header":"Region"},"text":{"type":"string"}`, func(_ context.Context, name string, _ *bundle.Call, a memoryArgs) (string, error) {
		return name + ":" + a.Text, nil
	}},
	{"talk", `"text":{"type":"string"}`, func(_ context.Context, name string, c *bundle.Call, a memoryArgs) (string, error) {
		if err := c.Log("info", a.Text); err != nil {
			return "", err
		}
		return name + ":" + a.Text, c.Progress(1, 0, "")
	}},
	{"sleep", `"ms":{"type":"integer"}`, func(ctx context.Context, _ string, c *bundle.Call, a memoryArgs) (string, error) {
		if err := c.Progress(1, 2, ""); err != nil {
			return "", err
		}
		if err := wait(ctx, a.MS); err != nil {
			return "", err
		}
		return "slept in " + instanceOf(ctx), nil
	}},
	{"big", `"bytes":{"type":"integer"}`, func(_ context.Context, _ string, _ *bundle.Call, a memoryArgs) (string, error) {
		return strings.Repeat("x", a.Bytes), nil
	}},
	{"node-lamp.on", ``, func(_ context.Context, name string, _ *bundle.Call, _ memoryArgs) (string, error) {
		return "lamp on by " + name, nil
	}},
	{"instance", ``, func(ctx context.Context, _ string, _ *bundle.Call, _ memoryArgs) (string, error) {
		return instanceOf(ctx), nil
	}},
	{"ticker", `"ms":{"type":"integer"},"every":{"type":"integer"}`, func(ctx context.Context, _ string, c *bundle.Call, a memoryArgs) (string, error) {
		for at := 0; at < a.MS; at += max(a.Every, 1) {
			if err := c.Progress(float64(at), 0, ""); err != nil {
				return "", err
			}
			if err := wait(ctx, a.Every); err != nil {
				return "", err
			}
		}
		return instanceOf(ctx), nil
	}},
	{"late", `"ms":{"type":"integer"},"bytes":{"type":"integer"}`, func(ctx context.Context, _ string, _ *bundle.Call, a memoryArgs) (string, error) {
		if err := wait(ctx, a.MS); err != nil {
			return "", err
		}
		return strings.Repeat("x", a.Bytes), nil
	}},
	{"elicit", `"question":{"type":"string"},"ms":{"type":"integer"}`, func(ctx context.Context, _ string, c *bundle.Call, a memoryArgs) (string, error) {
		res, err := c.Elicit(ctx, mcp.ElicitParams{Message: a.Question,
			RequestedSchema: json.RawMessage(`{"type":"object","properties":{"answer":{"type":"string"}}}`)})
		if err != nil {
			return "", err
		}
		var content struct{ Answer string }
		_ = json.Unmarshal(res.Content, &content)
		if err := wait(ctx, a.MS); err != nil { // work done with the answer
			return "", err
		}
		return res.Action + ": " + content.Answer, nil
	}},
	{"sample", `"prompt":{"type":"string"}`, func(ctx context.Context, _ string, c *bundle.Call, a memoryArgs) (string, error) {
		res, err := c.CreateMessage(ctx, mcp.CreateMessageParams{MaxTokens: 10,
			Messages: []mcp.SamplingMessage{{Role: "user", Content: json.RawMessage(`{"type":"text","text":` + quote(a.Prompt) + `}`)}}})
		if err != nil {
			return "", err
		}
		return "model said: " + res.Text(), nil
	}},
}

// addTools adds memoryTools to s.
func (m Memory) addTools(s *bundle.Server) error {
	for _, mt := range memoryTools {
		schema := json.RawMessage(`{"type":"object","properties":{` + mt.props + `}}`)
		err := s.AddTool(mcp.Tool{Name: mt.name, Description: "test tool", InputSchema: schema},
			func(ctx context.Context, c *bundle.Call) (*mcp.CallToolResult, error) {
				var args memoryArgs
				if err := c.Bind(&args); err != nil {
					return nil, err
				}
				text, err := mt.run(ctx, m.Name, c, args)
				if err != nil {
					return nil, err
				}
				return mcp.TextResult(text), nil
			})
		if err != nil {
			return fmt.Errorf("tool %s: %w", mt.name, err)
		}
	}
	return nil
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// addSurface adds the prompt, resource, template and completions of Surface to s.
func (m Memory) addSurface(s *bundle.Server) error {
	read := func(_ context.Context, r *bundle.ResourceRequest) ([]mcp.ResourceContents, error) {
		return []mcp.ResourceContents{mcp.TextContents(r.URI, "text/plain", "read by "+m.Name)}, nil
	}
	complete := func(context.Context, string, map[string]string) ([]string, error) {
		return []string{"completed by " + m.Name}, nil
	}
	items := "fake://" + m.Name + "/items/{id}"
	return errors.Join(
		s.AddPrompt(mcp.Prompt{Name: "greet", Description: "Greets <someone> & all", Arguments: []mcp.PromptArgument{{Name: "who", Required: true}}},
			func(_ context.Context, r *bundle.PromptRequest) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: "user", Content: mcp.TextContent("prompt greet of " + m.Name)}}}, nil
			}),
		s.AddResource(mcp.Resource{URI: "fake://" + m.Name + "/readme", Name: "readme", MimeType: "text/plain"}, read),
		s.AddResourceTemplate(mcp.ResourceTemplate{URITemplate: items, Name: "item"}, read),
		s.CompletePromptArgument("greet", "who", complete),
		s.CompleteTemplateVariable(items, "id", complete),
	)
}

// instanceOf is the run of an in-memory bundle ctx belongs to.
func instanceOf(ctx context.Context) string {
	s, _ := ctx.Value(instanceKey{}).(string)
	return s
}

// refuseDiscover puts itself between an in-memory bundle and the node: it answers
// server/discover with "method not found" itself, as a server of the initialize era does,
// and passes every other line on. The node asks server/discover first and waits for its
// answer, so nothing else is written meanwhile; out is still shared under a lock.
func refuseDiscover(in io.Reader, out io.Writer) (*io.PipeReader, io.Writer) {
	w := &lockedWriter{w: out}
	r, pw := io.Pipe()
	go func() {
		br := bufio.NewReaderSize(in, 64<<10)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				var m struct {
					ID     json.RawMessage `json:"id"`
					Method string          `json:"method"`
				}
				if json.Unmarshal(line, &m) == nil && m.Method == mcp.MethodDiscover && m.ID != nil {
					_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(bytes.TrimSpace(m.ID)) +
						`,"error":{"code":-32601,"message":"method not found"}}` + "\n"))
				} else if _, werr := pw.Write(line); werr != nil {
					return
				}
			}
			if err != nil {
				pw.CloseWithError(err)
				return
			}
		}
	}()
	return r, w
}

// quitAtEnd reads r and calls quit once r ends.
type quitAtEnd struct {
	r    io.Reader
	quit context.CancelCauseFunc
}

func (q quitAtEnd) Read(p []byte) (int, error) {
	n, err := q.r.Read(p)
	if err != nil {
		q.quit(fmt.Errorf("the end of its input: %w", err))
	}
	return n, err
}

// lockedWriter serializes the writes to w.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
