package cli_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnode/toolnode/runtime/internal/testkit"
)

// series are the counts of mcp.server.operation.duration's series, by their labels.
type series map[string]int

// operations scrapes the node's /metrics: the page, and the operation duration's series.
func operations(t *testing.T, metricsURL string) (string, series) {
	t.Helper()
	resp, err := http.Get(metricsURL)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	out := series{}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "mcp_server_operation_duration_seconds_count{"); ok {
			labels, count, _ := strings.Cut(rest, "} ")
			out[labels], _ = strconv.Atoi(count)
		}
	}
	return string(b), out
}

// count sums the series that have every label given, and none given as !label.
func (s series) count(labels ...string) int {
	n := 0
	for set, c := range s {
		match := true
		for _, l := range labels {
			if absent, ok := strings.CutPrefix(l, "!"); ok {
				match = match && !strings.Contains(set, absent)
				continue
			}
			match = match && strings.Contains(set, l)
		}
		if match {
			n += c
		}
	}
	return n
}

// metricsAddress is the URL of the node's /metrics, as its log gives it.
func metricsAddress(t *testing.T, logs *testkit.SyncBuffer) string {
	t.Helper()
	var u string
	eventually(t, 10*time.Second, func() string {
		if m := regexp.MustCompile(`metrics listening: url=(\S+)`).FindStringSubmatch(logs.String()); m != nil {
			u = m[1]
			return ""
		}
		return "no metrics address in the log"
	})
	return u
}

// Names and methods a client makes up do not become metric labels: 2,200 junk requests
// leave the node's series few, and the calls of a real tool and a real prompt keep series
// of their own rather than falling into the SDK's overflow series.
func TestJunkRequestsMintNoSeries(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "m", Surface: true})
	h := startHTTPNodeRun(t, "--bundles", dir, "--metrics", "127.0.0.1:0")
	metricsURL := metricsAddress(t, h.logs)
	c := &rawHTTP{t: t, url: h.url}
	c.initialize("2025-11-25", `{}`)
	send := func(id int, method, params string) {
		t.Helper()
		resp := c.post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params), "application/json")
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	const junk = 1100
	for i := range junk {
		send(i, "prompts/get", fmt.Sprintf(`{"name":"junk-prompt-%d"}`, i))
		send(junk+i, fmt.Sprintf("junk/method-%d", i), `{}`)
	}
	for i := range 3 {
		if _, err := c.call(3*junk+i, "m.echo", `{"text":"hi"}`); err != nil {
			t.Fatal(err)
		}
	}
	send(4*junk, "prompts/get", `{"name":"m.greet","arguments":{"who":"you"}}`)

	page, series := operations(t, metricsURL)
	if len(series) == 0 || len(series) > 20 {
		t.Fatalf("%d series of the operation duration after %d junk requests, want a few:\n%s", len(series), 2*junk, grepLines(page, "operation_duration_seconds_count"))
	}
	if strings.Contains(page, "junk") || strings.Contains(page, "overflow") {
		t.Errorf("junk names became labels or overflowed:\n%s", grepLines(page, "operation_duration_seconds_count"))
	}
	for _, tt := range []struct {
		labels []string
		want   int
	}{
		{[]string{`gen_ai_tool_name="m.echo"`, "!error_type"}, 3},
		{[]string{`gen_ai_prompt_name="m.greet"`, "!error_type"}, 1},
		{[]string{`mcp_method_name="_OTHER"`}, junk},
		{[]string{`mcp_method_name="prompts/get"`, `error_type=`}, junk},
	} {
		if got := series.count(tt.labels...); got != tt.want {
			t.Errorf("series with %v count %d, want %d:\n%s", tt.labels, got, tt.want, grepLines(page, "operation_duration_seconds_count"))
		}
	}
}

// The metrics listener refuses a Host that is not its own, as a DNS rebinding page sends.
func TestMetricsRefuseOtherHosts(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "m"})
	h := startHTTPNodeRun(t, "--bundles", dir, "--metrics", "127.0.0.1:0")
	metricsURL := metricsAddress(t, h.logs)
	for host, want := range map[string]int{"": http.StatusOK, "localhost": http.StatusOK, "rebind.example": http.StatusForbidden} {
		req, _ := http.NewRequest(http.MethodGet, metricsURL, nil)
		if host != "" {
			req.Host = host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Host %q: %s, want %d", host, resp.Status, want)
		}
	}
}

// A request the node answered is not counted as cancelled, over stdio in both eras (a
// 2026-07-28 request begins in the stdio session too), and one the client cancelled is.
func TestMetricsTellAnsweredFromCancelled(t *testing.T) {
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			dir := t.TempDir()
			testkit.Write(t, dir, testkit.Fake{Name: "m"})
			run := startNodeAt(t, version, nil, nil, "--bundles", dir, "--metrics", "127.0.0.1:0")
			metricsURL := metricsAddress(t, run.logs)
			for range 2 {
				callText(t, run.session, "m.echo", map[string]any{"text": "hi"})
			}
			want := []struct {
				labels []string
				want   int
			}{
				{[]string{`gen_ai_tool_name="m.echo"`, "!error_type"}, 2},
				{[]string{`error_type="cancelled"`}, 0},
			}
			if version == "2025-11-25" {
				// A 2026-07-28 call that may ask the client waits without its request:
				// cancelled, it ends without an answer, which is what ends its measure.
				ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
				defer cancel()
				if _, err := run.session.CallTool(ctx, &mcp.CallToolParams{Name: "m.sleep", Arguments: map[string]any{"ms": 10000}}); err == nil {
					t.Fatal("a call cancelled after 300 ms of 10 s answered")
				}
				want[1].want = 1
			}
			var page string
			var got series
			eventually(t, 10*time.Second, func() string {
				if page, got = operations(t, metricsURL); got.count(`mcp_method_name="tools/call"`) < 2+want[1].want {
					return "the calls are not all counted yet"
				}
				return ""
			})
			for _, tt := range want {
				if n := got.count(tt.labels...); n != tt.want {
					t.Errorf("series with %v count %d, want %d:\n%s", tt.labels, n, tt.want, grepLines(page, "operation_duration_seconds_count"))
				}
			}
		})
	}
}
