// Command example-go is the example bundle written with the Go SDK: it keeps the contract
// of examples/README.md, which the vectors under testdata/vectors check.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/toolnode/toolnode/sdk-go/bundle"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "example-go:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	s := bundle.NewServer(bundle.Options{Name: "toolnode-example-go", Version: "0.1.0"})
	var lamp atomic.Bool
	lampSchema := json.RawMessage(`{"type":"object","properties":{"on":{"type":"boolean"}},"required":["on"]}`)
	lampState := func() (*mcp.CallToolResult, error) {
		return bundle.StructuredResult(struct {
			On bool `json:"on"`
		}{lamp.Load()})
	}

	tools := []struct {
		tool    mcp.Tool
		handler bundle.Handler
	}{
		{mcp.Tool{
			Name:        "greet",
			Description: "Greet someone by name.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","description":"Who to greet"}},"required":["name"]}`),
		}, greet},
		{mcp.Tool{
			Name:         "node-lamp.on",
			Description:  "Turn the lamp on.",
			InputSchema:  json.RawMessage(`{"type":"object","properties":{}}`),
			OutputSchema: lampSchema,
		}, func(context.Context, *bundle.Call) (*mcp.CallToolResult, error) {
			lamp.Store(true)
			return lampState()
		}},
		{mcp.Tool{
			Name:         "node-lamp.status",
			Description:  "Tell whether the lamp is on.",
			InputSchema:  json.RawMessage(`{"type":"object","properties":{}}`),
			OutputSchema: lampSchema,
		}, func(context.Context, *bundle.Call) (*mcp.CallToolResult, error) {
			return lampState()
		}},
		{mcp.Tool{
			Name:        "sleep",
			Description: "Sleep for ms milliseconds, reporting progress every 100 ms.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"ms":{"type":"integer","minimum":0,"maximum":60000}},"required":["ms"]}`),
		}, sleep},
		{mcp.Tool{
			Name:        "ask-name",
			Description: "Ask the user for their name and greet them.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{}}`),
		}, askName},
		{mcp.Tool{
			Name:         "trace",
			Description:  "Tell the W3C trace context the call carried in _meta.",
			InputSchema:  json.RawMessage(`{"type":"object","properties":{}}`),
			OutputSchema: json.RawMessage(traceSchema),
		}, func(_ context.Context, call *bundle.Call) (*mcp.CallToolResult, error) {
			return bundle.StructuredResult(call.TraceContext())
		}},
	}
	for _, t := range tools {
		if err := s.AddTool(t.tool, t.handler); err != nil {
			return err
		}
	}
	return s.ServeStdio(ctx)
}

// traceSchema is the output of the trace tool: the _meta members it saw.
const traceSchema = `{"type":"object","properties":{"traceparent":{"type":"string"},"tracestate":{"type":"string"}}}`

func greet(_ context.Context, call *bundle.Call) (*mcp.CallToolResult, error) {
	var args struct {
		Name string `json:"name"`
	}
	if err := call.Bind(&args); err != nil {
		return nil, err
	}
	return mcp.TextResult("Hello, " + args.Name + "!"), nil
}

func sleep(ctx context.Context, call *bundle.Call) (*mcp.CallToolResult, error) {
	var args struct {
		MS int `json:"ms"`
	}
	if err := call.Bind(&args); err != nil {
		return nil, err
	}
	if err := call.Log("info", fmt.Sprintf("sleeping %d ms", args.MS)); err != nil {
		return nil, err
	}
	total := time.Duration(args.MS) * time.Millisecond
	deadline := time.NewTimer(total)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	start := time.Now()
	for {
		select {
		case <-deadline.C:
			return mcp.TextResult(fmt.Sprintf("slept %d ms", args.MS)), nil
		case <-tick.C:
			elapsed := time.Since(start).Milliseconds()
			if err := call.Progress(float64(elapsed), float64(args.MS), ""); err != nil {
				return nil, err
			}
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// askName asks in a way that works in both eras: a request to the client under 2025-11-25,
// an input_required round under 2026-07-28.
func askName(ctx context.Context, call *bundle.Call) (*mcp.CallToolResult, error) {
	answers, err := call.Ask(ctx, mcp.InputRequests{"name": {
		Method: mcp.MethodElicitation,
		Params: json.RawMessage(`{"message":"What is your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}`),
	}})
	if err != nil {
		return nil, err
	}
	var answer struct {
		Action  string `json:"action"`
		Content struct {
			Name string `json:"name"`
		} `json:"content"`
	}
	if err := json.Unmarshal(answers["name"], &answer); err != nil || answer.Action != mcp.ElicitAccept {
		return mcp.ErrorResult("no name given"), nil
	}
	return mcp.TextResult("Hello, " + answer.Content.Name + "!"), nil
}
