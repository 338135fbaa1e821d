package node

import (
	"fmt"
	"sort"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/sandbox"
)

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
	// Sandbox says what bounds the bundle's processes and by which mechanism ("memory 512
	// MiB (cgroup v1), network none (NOT ENFORCED on this machine)"); "" for none.
	Sandbox string `json:"sandbox,omitempty"`
	// SandboxNotEnforced names the settings of its sandbox this machine does not enforce.
	SandboxNotEnforced []string `json:"sandbox_not_enforced,omitempty"`

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
		if p := n.sandboxOf(b.m); p != nil && !p.Zero() {
			st.Sandbox = sandbox.Probe().Describe(*p)
			st.SandboxNotEnforced = sandbox.Probe().Unenforced(*p)
		}
		if !b.retryAt.IsZero() && live(b) == 0 {
			st.RetryAt = b.retryAt.UTC().Format(time.RFC3339Nano)
		}
		for _, s := range b.slots {
			if s != nil {
				st.Era = s.client.Era().String()
				if u := s.client.URL(); u != "" {
					st.URL = u
				} else if pid := s.client.Pid(); pid > 0 { // none for an in-memory bundle
					st.PIDs = append(st.PIDs, pid)
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
