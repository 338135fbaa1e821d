package bundle_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/toolnode/toolnode/sdk-go/bundle"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

func TestMain(m *testing.M) {
	if os.Getenv(stdioChildEnv) != "" {
		os.Exit(runStdioChild())
	}
	goleak.VerifyTestMain(m)
}

// client talks to a Server running Serve over in-memory pipes.
type client struct {
	t    *testing.T
	in   *io.PipeWriter
	msgs chan map[string]any
	done chan error
}

const timeout = 10 * time.Second

// serve runs s.Serve(ctx) on pipes until the test ends.
func serve(t *testing.T, ctx context.Context, s *bundle.Server) *client {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &client{t: t, in: inW, msgs: make(chan map[string]any, 1024), done: make(chan error, 1)}
	go func() {
		err := s.Serve(ctx, inR, outW)
		outW.Close()
		c.done <- err
	}()
	go func() {
		defer close(c.msgs)
		r := bufio.NewReader(outR)
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				return
			}
			var m map[string]any
			if err := json.Unmarshal(line, &m); err != nil {
				m = map[string]any{"unreadable": string(line)}
			}
			c.msgs <- m
		}
	}()
	t.Cleanup(func() {
		inR.Close()
		inW.Close()
		select {
		case <-c.done:
		case <-time.After(timeout):
			t.Error("Serve did not return after its input was closed")
		}
		for range c.msgs {
		}
	})
	return c
}

func (c *client) send(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		c.t.Fatalf("send: %v", err)
	}
}

func (c *client) sendJSON(v any) {
	c.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		c.t.Fatal(err)
	}
	c.send(string(b))
}

func (c *client) recv() map[string]any {
	c.t.Helper()
	select {
	case m, ok := <-c.msgs:
		if !ok {
			c.t.Fatal("server closed its output")
		}
		return m
	case <-time.After(timeout):
		c.t.Fatal("no message from the server")
	}
	return nil
}

// quiet fails the test if the server writes anything within d.
func (c *client) quiet(d time.Duration) {
	c.t.Helper()
	select {
	case m, ok := <-c.msgs:
		if ok {
			c.t.Errorf("unexpected message: %v", m)
		}
	case <-time.After(d):
	}
}

// closeInput ends the input and returns what Serve returned.
func (c *client) closeInput() error {
	c.t.Helper()
	c.in.Close()
	select {
	case err := <-c.done:
		c.done <- err // for the cleanup
		return err
	case <-time.After(timeout):
		c.t.Fatal("Serve did not return at the end of its input")
	}
	return nil
}

func call(id any, tool string, args any) map[string]any {
	p := map[string]any{"name": tool}
	if args != nil {
		p["arguments"] = args
	}
	return map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": p}
}

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("bad JSON in test: %v: %s", err, s)
	}
	return m
}

func diff(t *testing.T, want, got any) {
	t.Helper()
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
}

// discard keeps the expected warnings of the tests (bad lines, panics) out of the output.
func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// testServer offers the tools the tests call.
func testServer(t testing.TB, opts bundle.Options) *bundle.Server {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = discard()
	}
	s := bundle.NewServer(opts)
	add := func(tool mcp.Tool, h bundle.Handler) {
		t.Helper()
		if err := s.AddTool(tool, h); err != nil {
			t.Fatal(err)
		}
	}
	onOff := json.RawMessage(`{"type":"object","properties":{"on":{"type":"boolean"}},"required":["on"]}`)

	add(mcp.Tool{
		Name:        "greet",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
	}, func(_ context.Context, c *bundle.Call) (*mcp.CallToolResult, error) {
		var args struct{ Name string }
		if err := c.Bind(&args); err != nil {
			return nil, err
		}
		return mcp.TextResult("Hello, " + args.Name + "!"), nil
	})
	add(mcp.Tool{
		Name:        "sleep",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"ms":{"type":"integer","minimum":0,"maximum":60000}},"required":["ms"]}`),
	}, func(ctx context.Context, c *bundle.Call) (*mcp.CallToolResult, error) {
		var args struct{ MS int }
		if err := c.Bind(&args); err != nil {
			return nil, err
		}
		if err := c.Progress(0, float64(args.MS), "starting"); err != nil {
			return nil, err
		}
		select {
		case <-time.After(time.Duration(args.MS) * time.Millisecond):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return mcp.TextResult(fmt.Sprintf("slept %d ms", args.MS)), nil
	})
	add(mcp.Tool{
		Name:        "point",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"p":{"type":"object","properties":{"x":{"type":"number"}},"required":["x"]}},"required":["p"]}`),
	}, func(context.Context, *bundle.Call) (*mcp.CallToolResult, error) { return mcp.TextResult("ok"), nil })
	add(mcp.Tool{Name: "fail"}, func(context.Context, *bundle.Call) (*mcp.CallToolResult, error) {
		return nil, errors.New("boom")
	})
	add(mcp.Tool{Name: "panic"}, func(context.Context, *bundle.Call) (*mcp.CallToolResult, error) {
		panic("oops")
	})
	add(mcp.Tool{Name: "nil"}, func(context.Context, *bundle.Call) (*mcp.CallToolResult, error) {
		return nil, nil
	})
	add(mcp.Tool{Name: "lamp", OutputSchema: onOff}, func(context.Context, *bundle.Call) (*mcp.CallToolResult, error) {
		return bundle.StructuredResult(struct {
			On bool `json:"on"`
		}{true})
	})
	add(mcp.Tool{Name: "badout", OutputSchema: onOff}, func(context.Context, *bundle.Call) (*mcp.CallToolResult, error) {
		return bundle.StructuredResult(map[string]string{"on": "yes"})
	})
	add(mcp.Tool{Name: "noout", OutputSchema: onOff}, func(context.Context, *bundle.Call) (*mcp.CallToolResult, error) {
		return mcp.TextResult("forgot"), nil
	})
	add(mcp.Tool{Name: "log"}, func(_ context.Context, c *bundle.Call) (*mcp.CallToolResult, error) {
		for _, level := range []string{"debug", "info", "error"} {
			if err := c.Log(level, map[string]string{"said": level}); err != nil {
				return nil, err
			}
		}
		return mcp.TextResult("logged"), nil
	})
	add(mcp.Tool{Name: "size"}, func(_ context.Context, c *bundle.Call) (*mcp.CallToolResult, error) {
		return mcp.TextResult(fmt.Sprint(len(c.Arguments))), nil
	})
	add(mcp.Tool{
		Name:        "big",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`),
	}, func(_ context.Context, c *bundle.Call) (*mcp.CallToolResult, error) {
		var args struct{ N int }
		if err := c.Bind(&args); err != nil {
			return nil, err
		}
		b := make([]byte, args.N)
		for i := range b {
			b[i] = 'a' + byte(i%26)
		}
		return mcp.TextResult(string(b)), nil
	})
	return s
}
