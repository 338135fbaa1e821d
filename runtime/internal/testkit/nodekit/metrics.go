package nodekit

import (
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// metricsListening is how the node logs the URL of its /metrics.
var metricsListening = regexp.MustCompile(`metrics listening: url=(\S+)`)

// MetricsURL waits until the node, started with serve.Config.Metrics set, says where its
// /metrics listens, and returns that URL.
func (n *Node) MetricsURL(t testing.TB) string {
	t.Helper()
	n.Logs.WaitFor(t, 10*time.Second, "metrics listening: url=")
	return metricsListening.FindStringSubmatch(n.Logs.String())[1]
}

// Series are the counts of mcp.server.operation.duration's series, by their labels.
type Series map[string]int

// Operations scrapes the /metrics at metricsURL: the page, and the operation duration's
// series.
func Operations(t testing.TB, metricsURL string) (string, Series) {
	t.Helper()
	resp, err := http.Get(metricsURL)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	out := Series{}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "mcp_server_operation_duration_seconds_count{"); ok {
			labels, count, _ := strings.Cut(rest, "} ")
			out[labels], _ = strconv.Atoi(count)
		}
	}
	return string(b), out
}

// Count sums the series that have every label given, and none given as !label.
func (s Series) Count(labels ...string) int {
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
