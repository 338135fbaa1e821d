package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// resultsCut measures what cutting a long result costs (--max-result-bytes): the echo
// bundle answers 5 MB of text lines through the node's HTTP front, once with results whole
// (--max-result-bytes 0) and once cut to the default 100 KiB, the whole kept for the caller.
// The two nodes take turns, one round each.
func resultsCut(cfg config, w *strings.Builder) error {
	fmt.Fprintf(w, "## A long result, whole and cut (`--max-result-bytes`)\n\n")
	fmt.Fprintf(w, "The Go echo bundle answers 5 MB of text (lines of 50 bytes) through the node's HTTP front, one call\n"+
		"in flight: whole (`--max-result-bytes 0`), and cut to the default 100 KiB at a line, the whole kept\n"+
		"for the caller (readable by `resources/read` and `toolnode.read_result`). The client reads and\n"+
		"decodes each answer.\n\n")
	fmt.Fprintf(w, "| results | calls/s | p50 | p99 | bytes to the client |\n|---|---|---|---|---|\n")
	dir, _, err := benchFolder(cfg, "echo-go")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	line := strings.Repeat("x", 49) + `\n`
	args := `{"text":"` + strings.Repeat(line, 5_000_000/50) + `"}`
	type node struct {
		name string
		c    *httpClient
		stop func()
	}
	var nodes []node
	defer func() {
		for _, n := range nodes {
			n.stop()
			n.c.close()
		}
	}()
	for _, n := range []struct {
		name string
		args []string
	}{{"whole", []string{"--max-result-bytes", "0"}}, {"cut to 100 KiB", nil}} {
		c, _, stop, err := startNodeEnv(cfg, dir, "echo-go.echo", nil, n.args...)
		if err != nil {
			return fmt.Errorf("%s: %w", n.name, err)
		}
		if n.args == nil {
			c.check = cutEcho
		}
		nodes = append(nodes, node{n.name, c, stop})
		for range 3 { // warm
			if err := c.call(args); err != nil {
				return fmt.Errorf("%s: %w", n.name, err)
			}
		}
	}
	rounds := make([][]round, len(nodes))
	for range cfg.rounds {
		for i, n := range nodes {
			r, err := measureRound(n.c, args, 1, cfg.duration)
			if err != nil {
				return fmt.Errorf("%s: %w", n.name, err)
			}
			rounds[i] = append(rounds[i], r)
		}
	}
	for i, n := range nodes {
		res := summarize(rounds[i])
		size := "about 5 MB"
		if i == 1 {
			size = "at most 100 KiB of text and a note"
		}
		fmt.Fprintf(w, "| %s | %.1f | %.1f ms | %.1f ms | %s |\n", n.name, res.perSec,
			float64(res.p50.Microseconds())/1000, float64(res.p99.Microseconds())/1000, size)
	}
	fmt.Fprintf(os.Stderr, "bench: results done\n")
	w.WriteString("\n")
	return nil
}

// cutEcho checks that an echo's answer was cut: its text a part of the argument, then a note
// naming where the whole is kept.
func cutEcho(msg []byte, args string) error {
	var out struct {
		Result *struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal(msg, &out); err != nil || out.Result == nil || len(out.Result.Content) != 2 ||
		len(out.Result.Content[0].Text) > 100<<10 || !strings.Contains(out.Result.Content[1].Text, "toolnode://result/") {
		return fmt.Errorf("not a cut result: %.300s", msg)
	}
	return nil
}
