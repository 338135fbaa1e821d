package node

import (
	"runtime/metrics"

	"github.com/toolnode/toolnode/runtime/internal/proc"
	"github.com/toolnode/toolnode/runtime/internal/rpc"
)

// Limits bound what the node holds for each bundle process. Zero fields take the defaults.
type Limits struct {
	// MaxLine is the largest message a bundle may send. Default rpc.DefaultMaxLine.
	MaxLine int
	// MaxQueue is how many bytes may wait for a bundle that does not read its stdin; past
	// it, calls to the bundle fail at once. Default rpc.DefaultMaxQueue.
	MaxQueue int
	// Message are the checks every message of a bundle passes.
	Message rpc.Limits
	// StderrLine bounds a line a bundle writes on stderr; longer ones are cut. Default
	// proc.DefaultStderrLineMax.
	StderrLine int
}

func (l Limits) withDefaults() Limits {
	if l.MaxLine <= 0 {
		l.MaxLine = rpc.DefaultMaxLine
	}
	if l.MaxQueue <= 0 {
		l.MaxQueue = rpc.DefaultMaxQueue
	}
	if l.Message.MaxDepth <= 0 {
		l.Message.MaxDepth = rpc.DefaultMaxDepth
	}
	if l.StderrLine <= 0 {
		l.StderrLine = proc.DefaultStderrLineMax
	}
	return l
}

// Bound is one limit of the node and how close to it the node is now.
type Bound struct {
	// Name says what is bounded, e.g. "http.sessions".
	Name string `json:"name"`
	// Limit is the bound; Used how much of it is taken now (for a bound per session or
	// per bundle, by the one closest to it).
	Limit int64 `json:"limit"`
	Used  int64 `json:"used"`
}

// AddBounds registers a source of bounds for toolnode.status (a front's).
func (n *Node) AddBounds(f func() []Bound) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.boundSources = append(n.boundSources, f)
}

// Bounds reports every bound of the node: the bundles' and the fronts'.
func (n *Node) Bounds() []Bound {
	n.mu.Lock()
	var queued, waiting int64
	for _, b := range n.bundles {
		for _, s := range b.slots {
			if s != nil {
				queued = max(queued, int64(s.client.Queued()))
				waiting = max(waiting, int64(s.client.Waiting()))
			}
		}
	}
	sources := append([]func() []Bound(nil), n.boundSources...)
	n.mu.Unlock()
	out := []Bound{
		{Name: "bundle.queued_bytes", Limit: int64(n.limits.MaxQueue), Used: queued},
		{Name: "bundle.message_bytes", Limit: int64(n.limits.MaxLine)},
		{Name: "bundle.message_depth", Limit: int64(n.limits.Message.MaxDepth)},
		{Name: "bundle.stderr_line_bytes", Limit: int64(n.limits.StderrLine)},
		{Name: "bundle.calls_waiting", Limit: -1, Used: waiting},
	}
	for _, f := range sources {
		out = append(out, f()...)
	}
	return out
}

// heapLive is the heap the node holds after the last collection, in bytes.
func heapLive() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
