package main

import (
	"fmt"
	"os"
	"strings"
	"time"
)

// runWorkerSection measures what running a program in a worker process costs: a
// toolnode.run of 20 inner echo calls through a node whose programs run in workers
// (--run-worker=on, the default) against one whose programs run in the node
// (--run-worker=off), the two taking turns. A caller's worker is kept between its runs, so
// the runs after the first find it started; the first run of each node is shown apart.
func runWorkerSection(cfg config, w *strings.Builder) error {
	dir, _, err := benchFolder(cfg, "echo-go")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	const calls = 20
	program := fmt.Sprintf(`[echo_go.echo(text=str(i)) for i in range(%d)]`, calls)
	request := `"tools/call","params":{"name":"toolnode.run","arguments":{"code":` + quote(program) + `}}`
	modes := []string{"on", "off"}
	clients := make([]*stdioClient, len(modes))
	first := make([]time.Duration, len(modes))
	for i, mode := range modes {
		c, err := startStdio("toolnode.run", cfg.node, "serve", "--bundles", dir, "--log-level", "warn", "--run-worker="+mode)
		if err != nil {
			return err
		}
		defer c.close()
		clients[i] = c
		start := time.Now()
		res, err := c.roundTrip(request)
		if err != nil {
			return fmt.Errorf("--run-worker=%s: %w", mode, err)
		}
		if !strings.Contains(string(res), `"calls":20`) || strings.Contains(string(res), `"isError":true`) {
			return fmt.Errorf("--run-worker=%s: the run answered %s", mode, res)
		}
		first[i] = time.Since(start)
	}
	runs := make([][]time.Duration, len(modes))
	for round := 0; round < cfg.rounds*10; round++ {
		for i, c := range clients {
			start := time.Now()
			if _, err := c.roundTrip(request); err != nil {
				return fmt.Errorf("--run-worker=%s: %w", modes[i], err)
			}
			runs[i] = append(runs[i], time.Since(start))
		}
	}
	on, off := median(runs[0]), median(runs[1])
	fmt.Fprintf(w, "## A program in a worker process (`runworker`)\n\n")
	fmt.Fprintf(w, "One `toolnode.run` of %d inner calls of the echo bundle (echo-go), through the stdio front, median of %d\n"+
		"runs taking turns: its program run in a worker process (`--run-worker=on`, the default: a process of its own under\n"+
		"`--run-max-memory`, with no network and no files, each inner call a request back to the node) against run in the\n"+
		"node's own process (`--run-worker=off`). The first run of each starts the caller's worker (on) or nothing (off).\n\n",
		calls, len(runs[0]))
	fmt.Fprintf(w, "| where the program runs | run, median | per inner call | first run |\n|---|---|---|---|\n")
	fmt.Fprintf(w, "| worker process | %s | %s | %s |\n", us(on), us(on/calls), us(first[0]))
	fmt.Fprintf(w, "| the node | %s | %s | %s |\n\n", us(off), us(off/calls), us(first[1]))
	fmt.Fprintf(w, "In a worker: %.2f× the run in the node, %+.0f µs a run.\n\n", float64(on)/float64(off), float64(on-off)/float64(time.Microsecond))
	return nil
}
