package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"

	"github.com/toolnode/toolnode/runtime/internal/telemetry/otlptest"
)

// benchTraceparent is the client's span every measured call names in its _meta, with
// telemetry on and off alike, so that only the node's configuration differs.
const benchTraceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"

const traceMeta = `,"_meta":{"traceparent":"` + benchTraceparent + `"}`

// telemetrySection measures the echo call through the node with tracing and metrics on
// (spans exported by OTLP/HTTP to a receiver in this process, Prometheus on --metrics)
// against the same node with both off, over each front, the configurations taking turns.
func telemetrySection(cfg config, w *strings.Builder) error {
	fmt.Fprintf(w, "## Tracing and metrics on against off (`echo-go`)\n\n")
	fmt.Fprintf(w, "On: `OTEL_EXPORTER_OTLP_ENDPOINT` names an OTLP/HTTP receiver in the benchmark's process (it decodes\n"+
		"and counts what it gets) and `--metrics` serves Prometheus; off: `OTEL_SDK_DISABLED=true` and no `--metrics`.\n"+
		"Every call carries the same `traceparent` in `_meta` either way; with tracing on the node makes a span for\n"+
		"the request and one for the call to the bundle, and passes the latter's context on.\n\n")
	fmt.Fprintf(w, "| front | telemetry | in flight | calls/s | vs off | p50 | p99 |\n|---|---|---|---|---|---|---|\n")
	dir, _, err := benchFolder(cfg, "echo-go")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	rcv := otlptest.NewCounting()
	defer rcv.Close()
	const tool = "echo-go.echo"
	on := []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + rcv.URL}
	off := []string{"OTEL_SDK_DISABLED=true"}

	httpOff, _, stopOff, err := startNodeEnv(cfg, dir, tool, off)
	if err != nil {
		return err
	}
	defer stopOff()
	defer httpOff.close()
	metricsHTTP, err := freeAddr()
	if err != nil {
		return err
	}
	httpOn, _, stopOn, err := startNodeEnv(cfg, dir, tool, on, "--metrics", metricsHTTP)
	if err != nil {
		return err
	}
	defer stopOn()
	defer httpOn.close()

	// The stdio node gets its environment from env(1), this process's being shared.
	stdioOff, err := startStdio(tool, "env", append(off, cfg.node, "serve", "--bundles", dir, "--log-level", "warn")...)
	if err != nil {
		return err
	}
	defer stdioOff.close()
	metricsStdio, err := freeAddr()
	if err != nil {
		return err
	}
	stdioOn, err := startStdio(tool, "env", append(on, cfg.node, "serve", "--bundles", dir, "--log-level", "warn", "--metrics", metricsStdio)...)
	if err != nil {
		return err
	}
	defer stdioOn.close()
	httpOff.meta, httpOn.meta, stdioOff.meta, stdioOn.meta = traceMeta, traceMeta, traceMeta, traceMeta

	const args = `{"text":"bench"}`
	var calls float64 // made with telemetry on, about
	for _, front := range []struct {
		name    string
		off, on caller
	}{
		{"HTTP", httpOff, httpOn},
		{"stdio", stdioOff, stdioOn},
	} {
		res, err := compareRoutes(cfg, w, front.name, args, []int{1, 8},
			[]route{{name: "off", c: front.off}, {name: "on", c: front.on}}, -1)
		if err != nil {
			return err
		}
		for _, r := range res {
			calls += r[1].perSec * cfg.duration.Seconds() * float64(cfg.rounds)
		}
	}
	var scraped []string
	for _, addr := range []string{metricsHTTP, metricsStdio} {
		n, err := scrapedCalls(addr)
		if err != nil {
			return err
		}
		scraped = append(scraped, strconv.Itoa(n))
	}
	fmt.Fprintf(w, "\nWith telemetry on, the receiver got %d spans for about %.0f measured calls (plus %d warm-up calls a front);\n"+
		"Prometheus counted %s calls on the HTTP and the stdio node.\n\n", rcv.SpanCount(), calls, warmCalls, strings.Join(scraped, " and "))
	return nil
}

// scrapedCalls reads the node's /metrics at addr and returns how many tools/call it has
// counted in mcp_server_operation_duration_seconds.
func scrapedCalls(addr string) (int, error) {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return 0, fmt.Errorf("scrape %s: %w", addr, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, fmt.Errorf("scrape %s: %w", addr, err)
	}
	total := 0
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "mcp_server_operation_duration_seconds_count{") && strings.Contains(line, `mcp_method_name="tools/call"`) {
			n, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
			if err != nil {
				return 0, fmt.Errorf("scrape %s: %q: %w", addr, line, err)
			}
			total += int(n)
		}
	}
	if total == 0 {
		return 0, fmt.Errorf("scrape %s: no tools/call counted", addr)
	}
	return total, nil
}
