package front_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnode/toolnode/runtime/internal/serve"
	"github.com/toolnode/toolnode/runtime/internal/testkit"
	"github.com/toolnode/toolnode/runtime/internal/testkit/nodekit"
)

// The node's metrics of the requests its fronts serve, read where Prometheus reads them.

// metricsNode starts a node of the in-memory bundle m (of the initialize era), with its
// prompts and resources when surface is set, serving Prometheus metrics, with the config
// cfg; it returns the node and the URL of its /metrics, as its log gives it.
func metricsNode(t *testing.T, cfg serve.Config, surface bool) (*nodekit.Node, string) {
	t.Helper()
	cfg.Metrics = "127.0.0.1:0"
	n := nodekit.StartMemory(t, cfg, testkit.Memory{Name: "m", Surface: surface, Session: true})
	return n, n.MetricsURL(t)
}

// Names and methods a client makes up do not become metric labels: 2,200 junk requests
// leave the node's series few, and the calls of a real tool and a real prompt keep series
// of their own rather than falling into the SDK's overflow series.
func TestJunkRequestsMintNoSeries(t *testing.T) {
	h, metricsURL := metricsNode(t, serve.Config{HTTP: nodekit.Loopback}, true)
	c := nodekit.NewRawHTTP(t, h.URL)
	c.Initialize("2025-11-25", `{}`)
	send := func(id int, method, params string) {
		t.Helper()
		resp := c.Post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params), "application/json")
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	const junk = 1100
	for i := range junk {
		send(i, "prompts/get", fmt.Sprintf(`{"name":"junk-prompt-%d"}`, i))
		send(junk+i, fmt.Sprintf("junk/method-%d", i), `{}`)
	}
	for i := range 3 {
		if _, err := c.Call(3*junk+i, "m.echo", `{"text":"hi"}`); err != nil {
			t.Fatal(err)
		}
	}
	send(4*junk, "prompts/get", `{"name":"m.greet","arguments":{"who":"you"}}`)

	page, series := nodekit.Operations(t, metricsURL)
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
		if got := series.Count(tt.labels...); got != tt.want {
			t.Errorf("series with %v count %d, want %d:\n%s", tt.labels, got, tt.want, grepLines(page, "operation_duration_seconds_count"))
		}
	}
}

// A request the node answered is not counted as cancelled, over stdio in both eras (a
// 2026-07-28 request begins in the stdio session too), and one the client cancelled is.
func TestMetricsTellAnsweredFromCancelled(t *testing.T) {
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			n, metricsURL := metricsNode(t, serve.Config{Stdio: true}, false)
			s := n.Client(t, version, nil)
			for range 2 {
				nodekit.CallText(t, s, "m.echo", map[string]any{"text": "hi"})
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
				if _, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "m.sleep", Arguments: map[string]any{"ms": 10000}}); err == nil {
					t.Fatal("a call cancelled after 300 ms of 10 s answered")
				}
				want[1].want = 1
			}
			var page string
			var got nodekit.Series
			testkit.Eventually(t, 10*time.Second, func() string {
				if page, got = nodekit.Operations(t, metricsURL); got.Count(`mcp_method_name="tools/call"`) < 2+want[1].want {
					return "the calls are not all counted yet"
				}
				return ""
			})
			for _, tt := range want {
				if n := got.Count(tt.labels...); n != tt.want {
					t.Errorf("series with %v count %d, want %d:\n%s", tt.labels, n, tt.want, grepLines(page, "operation_duration_seconds_count"))
				}
			}
		})
	}
}

// After calls, the node's /metrics holds the MCP operation duration of each tool called,
// counted, with tool errors told apart.
func TestMetricsCountTheCalls(t *testing.T) {
	h, metricsURL := metricsNode(t, serve.Config{HTTP: nodekit.Loopback}, false)
	s := nodekit.Connect(t, h.URL, "", nil)
	for i := range 5 {
		nodekit.CallText(t, s, "m.echo", map[string]any{"text": fmt.Sprint(i)})
	}
	s.CallTool(context.Background(), &mcp.CallToolParams{Name: "m.nope"}) // unknown: no series of its own
	resp, err := http.Get(metricsURL)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	count := func(labels ...string) int {
		for _, line := range strings.Split(string(b), "\n") {
			if !strings.HasPrefix(line, "mcp_server_operation_duration_seconds_count{") {
				continue
			}
			ok := true
			for _, l := range labels {
				ok = ok && strings.Contains(line, l)
			}
			if ok {
				n, _ := strconv.Atoi(line[strings.LastIndexByte(line, ' ')+1:])
				return n
			}
		}
		return 0
	}
	if n := count(`mcp_method_name="tools/call"`, `gen_ai_tool_name="m.echo"`); n != 5 {
		t.Errorf("m.echo counted %d times, want 5:\n%s", n, grepLines(string(b), "mcp_server_operation"))
	}
	if strings.Contains(string(b), "m.nope") {
		t.Error("a name no bundle serves became a label")
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
