package node

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/catalog"
	"github.com/toolnode/toolnode/runtime/internal/search"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// StatusTool is the node's own tool that reports the state of every bundle.
const StatusTool = "toolnode.status"

// builtinBundle names the node itself in the catalog. It cannot be a bundle's name, so a
// bundle called "toolnode" cannot take over the node's tools: its "status" would lose the
// name toolnode.status to the node's, which claims it. The names toolnode.* belong to the
// node and to such a bundle alone.
const builtinBundle = "(toolnode)"

// BundleStatus is what toolnode.status says of one bundle.
type BundleStatus struct {
	Name      string  `json:"name"`
	State     State   `json:"state"`
	PIDs      []int   `json:"pids"`
	URL       string  `json:"url,omitempty"`
	Era       string  `json:"era,omitempty"`
	Instances int     `json:"instances"`
	Restarts  int     `json:"restarts"`
	LastError string  `json:"last_error,omitempty"`
	Tools     int     `json:"tools"`
	Calls     uint64  `json:"calls"`
	Failed    uint64  `json:"failed"`
	P50ms     float64 `json:"p50_ms"`
	P99ms     float64 `json:"p99_ms"`
	Manifest  string  `json:"manifest"`

	// FailuresInARow counts the failures since a process of the bundle last ran for
	// Supervision.Stable; from Supervision.CrashLoop of them the state is crash-loop.
	FailuresInARow int `json:"failures_in_a_row"`
	// RetryAt is when the next try is due (RFC 3339), while no process of the bundle runs.
	RetryAt string `json:"retry_at,omitempty"`
}

// Where says where the bundle runs: the URL of a remote bundle, else its process ids.
func (s BundleStatus) Where() string {
	if s.URL != "" {
		return "url " + s.URL
	}
	return fmt.Sprintf("pids %v", s.PIDs)
}

// Status reports every bundle, sorted by name.
func (n *Node) Status() []BundleStatus {
	n.mu.Lock()
	var out []BundleStatus
	for _, b := range n.bundles {
		st := BundleStatus{Name: b.name, State: b.state, Instances: len(b.slots), Restarts: b.restarts,
			Tools: len(b.lists.tools), Manifest: b.m.Path, PIDs: []int{}, URL: b.m.URL}
		if b.err != nil {
			st.LastError = b.err.Error()
		}
		st.FailuresInARow = b.failures
		if !b.retryAt.IsZero() && live(b) == 0 {
			st.RetryAt = b.retryAt.UTC().Format(time.RFC3339Nano)
		}
		for _, s := range b.slots {
			if s != nil {
				st.Era = s.client.Era().String()
				if u := s.client.URL(); u != "" {
					st.URL = u
				} else {
					st.PIDs = append(st.PIDs, s.client.Pid())
				}
			}
		}
		out = append(out, st)
	}
	n.mu.Unlock()
	for i := range out {
		n.mu.Lock()
		b := n.bundles[out[i].Name]
		n.mu.Unlock()
		if b == nil {
			continue
		}
		calls, failed, p50, p99 := b.stats.snapshot()
		out[i].Calls, out[i].Failed = calls, failed
		out[i].P50ms, out[i].P99ms = p50.Seconds()*1000, p99.Seconds()*1000
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// builtinTools is the node's own tool list; the caller holds n.mu.
func (n *Node) builtinTools() catalog.Source {
	tool := json.RawMessage(`{"name":"` + StatusTool + `","title":"toolnode status",` +
		`"description":"Reports every bundle of this toolnode (state, process ids, restarts, last error, tool count, calls served and failed, p50/p99 call latency) and every bound of the node with how close to it the node is.",` +
		`"inputSchema":{"type":"object","properties":{}},` +
		`"outputSchema":{"type":"object","properties":{"bundles":{"type":"array","items":{"type":"object"}},"node":{"type":"object"}},"required":["bundles"]},` +
		`"annotations":{"readOnlyHint":true,"openWorldHint":false}}`)
	return catalog.Source{Bundle: builtinBundle, Namespace: "toolnode", NoPrefix: true, Tools: []json.RawMessage{tool, search.SearchTool(), search.ExecuteTool()}}
}

// callBuiltin serves the node's own tools.
func (n *Node) callBuiltin(ctx context.Context, tool string) (json.RawMessage, error) {
	if tool != StatusTool {
		return nil, invalidParams(fmt.Sprintf("unknown tool %q", tool))
	}
	st := n.Status()
	bounds := n.Bounds()
	report := map[string]any{"bundles": st,
		"node": map[string]any{"heap_live_bytes": heapLive(), "procs": runtime.GOMAXPROCS(0), "bounds": bounds}}
	cluster := n.reportCluster(ctx)
	if cluster != nil {
		report["cluster"] = cluster.Data
	}
	structured, err := json.Marshal(report)
	if err != nil {
		return nil, fmt.Errorf("encode status: %w", err)
	}
	var sb strings.Builder
	for _, b := range st {
		fmt.Fprintf(&sb, "%s: %s, %s, %d restarts, %d tools, %d calls (%d failed), p50 %.2f ms, p99 %.2f ms",
			b.Name, b.State, b.Where(), b.Restarts, b.Tools, b.Calls, b.Failed, b.P50ms, b.P99ms)
		if b.State == StateCrashLoop {
			fmt.Fprintf(&sb, ", crash loop: %d failures in a row, next try at %s", b.FailuresInARow, b.RetryAt)
		}
		if b.LastError != "" {
			fmt.Fprintf(&sb, ", last error: %s", b.LastError)
		}
		sb.WriteString("\n")
	}
	for _, b := range bounds {
		if b.Limit >= 0 {
			fmt.Fprintf(&sb, "bound %s: %d of %d\n", b.Name, b.Used, b.Limit)
		} else {
			fmt.Fprintf(&sb, "bound %s: %d\n", b.Name, b.Used)
		}
	}
	if cluster != nil {
		sb.WriteString(cluster.Text)
	}
	res := mcp.TextResult(sb.String())
	res.StructuredContent = structured
	return json.Marshal(res)
}
