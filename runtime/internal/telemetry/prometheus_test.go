package telemetry_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/telemetry"
	"github.com/toolnode/toolnode/runtime/internal/testkit"
)

// startPrometheus runs the prometheus binary (Debian's package) with the configuration
// docs/service.md gives, scraping target every second, and returns the base URL of its API.
func startPrometheus(t *testing.T, target string) string {
	t.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Skip("no prometheus binary: install the Debian package prometheus (apt-get install prometheus)")
	}
	doc, err := os.ReadFile("testdata/prometheus.yml")
	if err != nil {
		t.Fatal(err)
	}
	cfg := string(doc)
	for old, repl := range map[string]string{"scrape_interval: 15s": "scrape_interval: 1s", "127.0.0.1:9464": target} {
		if !strings.Contains(cfg, old) {
			t.Fatalf("testdata/prometheus.yml has no %q to replace", old)
		}
		cfg = strings.ReplaceAll(cfg, old, repl)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+addr)
	var logs strings.Builder
	cmd.Stdout, cmd.Stderr = &logs, &logs
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start prometheus: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("prometheus output:\n%s", logs.String())
		}
	})
	return "http://" + addr
}

// query runs an instant PromQL query and returns its single value, or false when the
// result is empty or Prometheus is not ready to answer.
func query(t *testing.T, api, q string) (float64, bool) {
	t.Helper()
	resp, err := http.Get(api + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		return 0, false // not up yet
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusServiceUnavailable {
		return 0, false // listening, but its storage is still starting
	}
	var out struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.Status != "success" {
		t.Fatalf("query %s: %v %s", q, err, out.Error)
	}
	if len(out.Data.Result) == 0 {
		return 0, false
	}
	if len(out.Data.Result) > 1 {
		t.Fatalf("query %s: %d series, want 1", q, len(out.Data.Result))
	}
	var v float64
	if _, err := fmt.Sscan(out.Data.Result[0].Value[1].(string), &v); err != nil {
		t.Fatalf("query %s: value %v", q, out.Data.Result[0].Value)
	}
	return v, true
}

func TestPrometheusScrapesCalls(t *testing.T) {
	ctx := context.Background()
	tel, err := telemetry.New(ctx, telemetry.Config{Prometheus: true})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = tel.Shutdown(ctx) })
	mux := http.NewServeMux()
	mux.Handle("/metrics", tel.MetricsHandler())
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	rec := tel.Recorder()
	calls := []struct {
		method, target, errType string
		n                       int
	}{
		{"tools/call", "example.greet", "", 3},
		{"tools/call", "example.greet", telemetry.ToolError, 1},
		{"tools/call", "", telemetry.ErrorCode(-32602), 1}, // an unknown tool
		{"tools/list", "", "", 2},
	}
	for _, c := range calls {
		for range c.n {
			_, op := rec.StartRequest(ctx, telemetry.Request{Method: c.method, Target: c.target})
			op.End(c.errType)
		}
	}
	rec.BundleState("example", "starting")
	rec.BundleState("example", "ready")
	rec.BundleRestarted("example")
	rec.BundleRestarted("example")
	rec.QueueDepth("example", 4)
	for range 3 {
		rec.SessionOpened()
	}
	rec.SessionClosed("2025-11-25", 2*time.Second)
	_, done := rec.StartBundleCall(ctx, telemetry.BundleCall{Bundle: "example", Method: "tools/call"})
	_, _ = rec.StartBundleCall(ctx, telemetry.BundleCall{Bundle: "example", Method: "tools/call"})
	done.End("")

	api := startPrometheus(t, strings.TrimPrefix(srv.URL, "http://"))
	// Prometheus, a program of its own, tells nothing of its scrapes but its answers.
	testkit.Eventually(t, 60*time.Second, func() string {
		if v, ok := query(t, api, `up{job="toolnode"}`); !ok || v != 1 {
			return "prometheus did not scrape the node"
		}
		if _, ok := query(t, api, `toolnode_sessions`); !ok {
			return "prometheus scraped the node, but has no toolnode_sessions"
		}
		return ""
	})

	tests := []struct {
		query string
		want  float64
	}{
		{`sum(mcp_server_operation_duration_seconds_count{mcp_method_name="tools/call",gen_ai_tool_name="example.greet",error_type=""})`, 3},
		{`sum(mcp_server_operation_duration_seconds_count{mcp_method_name="tools/call",error_type="tool_error"})`, 1},
		{`sum(mcp_server_operation_duration_seconds_count{mcp_method_name="tools/call",error_type="-32602",gen_ai_tool_name=""})`, 1},
		{`sum(mcp_server_operation_duration_seconds_count{mcp_method_name="tools/list"})`, 2},
		{`sum(mcp_server_operation_duration_seconds_count)`, 7},
		{`toolnode_bundle_restarts_total{toolnode_bundle_name="example"}`, 2},
		{`toolnode_bundle_state{toolnode_bundle_name="example",toolnode_bundle_state="ready"}`, 1},
		{`toolnode_bundle_state{toolnode_bundle_name="example",toolnode_bundle_state="starting"}`, 0},
		{`toolnode_bundle_queue_depth{toolnode_bundle_name="example"}`, 4},
		{`toolnode_bundle_calls_in_flight{toolnode_bundle_name="example"}`, 1},
		{`toolnode_sessions`, 2},
		{`sum(mcp_server_session_duration_seconds_count{mcp_protocol_version="2025-11-25"})`, 1},
		{`sum(mcp_server_session_duration_seconds_sum)`, 2},
	}
	// The queries docs/service.md gives run as they are written; its alert on bundles not
	// ready finds none here, where the bundle is ready.
	queries := serviceDocQueries(t)
	if len(queries) < 4 {
		t.Errorf("docs/service.md's example queries: %q", queries)
	}
	for _, q := range queries {
		if why := queryError(t, api, q); why != "" {
			t.Errorf("docs/service.md's query %s: %s", q, why)
		}
	}
	if _, found := query(t, api, queries[len(queries)-1]); found {
		t.Errorf("docs/service.md's alert %s fires for a ready bundle", queries[len(queries)-1])
	}
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			got, ok := query(t, api, tc.query)
			if !ok || got != tc.want {
				t.Errorf("%s = %v (found %v), want %v", tc.query, got, ok, tc.want)
			}
		})
	}
}

// serviceDocQueries returns the PromQL queries of docs/service.md's examples (the indented
// block after "For example:"), a query's continuation lines joined to it.
func serviceDocQueries(t *testing.T) []string {
	t.Helper()
	doc, err := os.ReadFile("../../../docs/service.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "come too. For example:\n")
	if !ok {
		t.Fatal(`docs/service.md has no "come too. For example:" before its queries`)
	}
	var queries []string
	for _, line := range strings.Split(rest, "\n") {
		code, isCode := strings.CutPrefix(line, "    ")
		switch {
		case strings.HasPrefix(line, "<!--") || strings.TrimSpace(line) == "" && len(queries) == 0:
		case !isCode:
			return queries
		case strings.HasPrefix(strings.TrimSpace(code), "#"):
		case strings.HasPrefix(code, " ") && len(queries) > 0:
			queries[len(queries)-1] += " " + strings.TrimSpace(code)
		default:
			queries = append(queries, code)
		}
	}
	return queries
}

// queryError returns Prometheus's error for the query q, or "" when it ran.
func queryError(t *testing.T, api, q string) string {
	t.Helper()
	resp, err := http.Get(api + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	var out struct {
		Status string `json:"status"`
		Error  string `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return err.Error()
	}
	if out.Status != "success" {
		return out.Error
	}
	return ""
}

func TestServiceDocQuotesPrometheusConfig(t *testing.T) {
	cfg, err := os.ReadFile("testdata/prometheus.yml")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../../../docs/service.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), strings.TrimSpace(string(cfg))) {
		t.Error("docs/service.md does not quote runtime/telemetry/testdata/prometheus.yml word for word")
	}
}
