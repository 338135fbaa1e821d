package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnode/toolnode/sdk-go/app"
	"github.com/toolnode/toolnode/sdk-go/app/provider"
)

// sdkCaller calls go.greet on a node with the official MCP Go SDK, as an application
// without the library would.
type sdkCaller struct{ s *mcp.ClientSession }

func (c sdkCaller) call(string) error {
	res, err := c.s.CallTool(context.Background(), &mcp.CallToolParams{Name: "go.greet", Arguments: map[string]any{"name": "bench"}})
	if err == nil && res.IsError {
		err = fmt.Errorf("go.greet failed")
	}
	return err
}

func (c sdkCaller) close() { c.s.Close() }

// appCaller makes the same call as a model's tool call through sdk-go/app: the name mapped
// back, the call run, the result turned into a Chat Completions tool message.
type appCaller struct {
	n    *app.Node
	name string
}

func (c appCaller) call(string) error {
	call := provider.Call{ID: "call_1", Name: c.name, Arguments: map[string]any{"name": "bench"}}
	out, err := c.n.Run(context.Background(), provider.OpenAI, []provider.Call{call}, false)
	if err != nil {
		return err
	}
	if out[0].Error != nil {
		return fmt.Errorf("%s", out[0].Error.Message)
	}
	_, err = provider.ResultMessages(provider.OpenAI, out)
	return err
}

func (c appCaller) close() { c.n.Close() }

// appOverhead measures what the application libraries add to a tool call: one call of
// go.greet at a time through a node's HTTP front, made with the official MCP SDK directly
// and through the library (Go in this process, Python in build/app-venv), taking turns.
func appOverhead(cfg config, w *strings.Builder) error {
	dir, err := bundleDir(cfg, "go")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	hc, stop, err := startNodeHTTP(cfg, dir, "go.greet")
	if err != nil {
		return fmt.Errorf("app bench (run make first): %w", err)
	}
	defer stop()
	url := hc.url
	hc.close()

	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	s, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		return err
	}
	direct := sdkCaller{s}
	defer direct.close()
	// As an application hands the model its tools: list them first, as the library does.
	for _, err := range s.Tools(context.Background(), nil) {
		if err != nil {
			return err
		}
	}
	n, err := app.New(app.Config{URL: url})
	if err != nil {
		return err
	}
	d, err := n.Definitions(context.Background(), provider.OpenAI, false)
	if err != nil {
		return err
	}
	lib := appCaller{n, d.Names.Render("go.greet")}
	defer lib.close()
	for _, c := range []caller{direct, lib} {
		if err := warm(c, ""); err != nil {
			return err
		}
	}
	var directRounds, libRounds []round
	for range cfg.rounds {
		r, err := measureRound(direct, "", 1, cfg.duration)
		if err != nil {
			return err
		}
		directRounds = append(directRounds, r)
		if r, err = measureRound(lib, "", 1, cfg.duration); err != nil {
			return err
		}
		libRounds = append(libRounds, r)
	}
	dr, lr := summarize(directRounds), summarize(libRounds)

	fmt.Fprintf(w, "## The application libraries\n\n")
	fmt.Fprintf(w, "What `sdk-go/app` and `toolnode_sdk.app` add to a tool call: `go.greet` through a node's HTTP front (2026-07-28,\n"+
		"as each SDK negotiates), one call at a time, made with the official MCP SDK directly and as a model's tool call\n"+
		"through the library (name mapped back, call run, result made a Chat Completions tool message), taking turns.\n\n")
	fmt.Fprintf(w, "| client | calls/s | p50 | p99 | added per call (p50) |\n|---|---|---|---|---|\n")
	fmt.Fprintf(w, "| Go: go-sdk `CallTool` | %.0f | %s | %s | |\n", dr.perSec, us(dr.p50), us(dr.p99))
	fmt.Fprintf(w, "| Go: `app.Node.Run` + `provider.ResultMessages` | %.0f | %s | %s | %s (%.2fx) |\n", lr.perSec, us(lr.p50), us(lr.p99),
		us(lr.p50-dr.p50), float64(lr.p50)/float64(dr.p50))
	if rows, err := pythonOverhead(cfg, url); err != nil {
		fmt.Fprintf(w, "\nPython: not measured (%v).\n", err)
	} else {
		w.WriteString(rows)
	}
	w.WriteString("\n")
	return nil
}

// pythonOverhead runs sdk-python/bench_app.py in build/app-venv against url and returns its rows.
func pythonOverhead(cfg config, url string) (string, error) {
	py := filepath.Join(cfg.root, "build", "app-venv", "bin", "python")
	if _, err := os.Stat(py); err != nil {
		return "", fmt.Errorf("%s is missing: make build/app-venv/.ok", py)
	}
	cmd := exec.Command(py, filepath.Join(cfg.root, "sdk-python", "bench_app.py"), url, fmt.Sprint(cfg.duration.Seconds()), fmt.Sprint(cfg.rounds))
	cmd.Env = append(os.Environ(), "PYTHONPATH="+filepath.Join(cfg.root, "sdk-python", "src"))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("bench_app.py: %w", err)
	}
	var r struct {
		Direct, Library struct{ PerSec, P50, P99 float64 }
	}
	if err := json.Unmarshal(out, &r); err != nil {
		return "", fmt.Errorf("bench_app.py: %w: %s", err, out)
	}
	return fmt.Sprintf("| Python: `mcp` `Client.call_tool` | %.0f | %.0f µs | %.0f µs | |\n", r.Direct.PerSec, r.Direct.P50, r.Direct.P99) +
		fmt.Sprintf("| Python: `Toolnode.run` + `result_messages` | %.0f | %.0f µs | %.0f µs | %.0f µs (%.2fx) |\n", r.Library.PerSec, r.Library.P50,
			r.Library.P99, r.Library.P50-r.Direct.P50, r.Library.P50/r.Direct.P50), nil
}
