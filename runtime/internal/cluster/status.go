package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/toolnode/toolnode/runtime/internal/node"
)

// Status: what toolnode.status and the node's report say of the cluster, its members and
// the time a ping to each takes.

// Status is the cluster as one node sees it, for toolnode.status.
type Status struct {
	Name string `json:"name"`
	URL  string `json:"url"`
	// Node is this node's id; Connection the state of its connection to NATS.
	Node       string `json:"node"`
	Connection string `json:"connection"`
	// Nodes are this node, then the others by id.
	Nodes []NodeStatus `json:"nodes"`
	// Warning says what fails in this cluster as it is set up (replicas without a
	// cluster key); "" when nothing does.
	Warning string `json:"warning,omitempty"`
}

// Status reports this node and each other node with what it serves and how long a round
// trip to it takes now.
func (c *Cluster) Status(ctx context.Context) Status {
	var self member
	c.mu.Lock()
	warning := c.unkeyed
	_ = json.Unmarshal(c.lastBeat, &self)
	out := []NodeStatus{{ID: c.id, Self: true, Bundles: self.Bundles}}
	for _, id := range sortedKeys(c.members) {
		m := c.members[id]
		out = append(out, NodeStatus{ID: id, Bundles: m.Bundles, SeenMsAgo: c.cfg.Clock.Now().Sub(m.seen).Milliseconds()})
	}
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for i := range out {
		if out[i].Self {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			if err := c.ping(ctx, out[i].ID); err != nil {
				out[i].Error = err.Error()
				return
			}
			out[i].LatencyMs = float64(time.Since(start).Microseconds()) / 1000
		}()
	}
	wg.Wait()
	return Status{Name: c.cfg.Name, URL: c.cfg.URL, Node: c.id, Connection: strings.ToLower(c.nc.Status().String()), Nodes: out, Warning: warning}
}

// NodeStatus is one node of the cluster.
type NodeStatus struct {
	ID      string         `json:"node"`
	Self    bool           `json:"self,omitempty"`
	Bundles []Announcement `json:"bundles"`
	// LatencyMs is the round trip of a ping to the node, made for this report; Error says
	// why there is none.
	LatencyMs float64 `json:"latency_ms,omitempty"`
	Error     string  `json:"error,omitempty"`
	// SeenMsAgo is how long ago its last heartbeat came.
	SeenMsAgo int64 `json:"seen_ms_ago,omitempty"`
}

// noteUnkeyed says plainly, in the log and in Status, what fails when this node, without a
// cluster key, serves bundles that the nodes replicas serve too: they are replicas, and
// without a key each checks only the requestStates it made itself. It logs once per
// change. The caller holds c.mu.
func (c *Cluster) noteUnkeyed(replicas, bundles []string) {
	warning := ""
	if len(replicas) > 0 {
		slices.Sort(bundles)
		warning = fmt.Sprintf("this node and node(s) %s serve the same bundles (%s) without a cluster key: behind a balancer, "+
			"every input_required retry (a 2026-07-28 call answered with a question, asked again with the answer) that reaches another replica fails, "+
			"for without a key each node trusts only the requestStates it made; give every replica the same --cluster-key (docs/cluster.md)",
			strings.Join(replicas, ", "), strings.Join(bundles, ", "))
	}
	if warning != "" && warning != c.unkeyed {
		c.log.Warn(warning)
	}
	c.unkeyed = warning
}

// appendNew appends s to list unless list holds it.
func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// ping asks node for an answer; with a cluster key, an answer it signed.
func (c *Cluster) ping(ctx context.Context, node string) error {
	inbox := c.nc.NewInbox()
	sub, err := c.nc.SubscribeSync(inbox)
	if err != nil {
		return fmt.Errorf("ping: %w", err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	msg := &nats.Msg{Subject: c.inboxSubject(node), Reply: inbox, Header: nats.Header{}}
	msg.Header.Set(hKind, "ping")
	if err := c.out.publish(msg); err != nil {
		return fmt.Errorf("ping: %w", err)
	}
	for {
		m, err := sub.NextMsgWithContext(ctx)
		if err != nil {
			return fmt.Errorf("ping: %w", err)
		}
		if m.Header.Get("Status") == "503" {
			return fmt.Errorf("ping: %w", nats.ErrNoResponders)
		}
		if signer, err := c.keys.check(m, nil); err == nil && (signer == "" || signer == node) {
			return nil
		}
	}
}

// Text writes the status for people, a line per node.
func (s Status) Text() string {
	var sb strings.Builder
	if s.Warning != "" {
		fmt.Fprintf(&sb, "WARNING: %s\n", s.Warning)
	}
	fmt.Fprintf(&sb, "cluster %s via %s (%s), %d nodes:\n", s.Name, s.URL, s.Connection, len(s.Nodes))
	for _, r := range s.Nodes {
		var names []string
		for _, b := range r.Bundles {
			names = append(names, fmt.Sprintf("%s (%d tools)", b.Name, b.Tools))
		}
		served := strings.Join(names, ", ")
		if served == "" {
			served = "no bundles"
		}
		switch {
		case r.Self:
			fmt.Fprintf(&sb, "  node %s (this node): %s\n", r.ID, served)
		case r.Error != "":
			fmt.Fprintf(&sb, "  node %s: %s; ping failed: %s\n", r.ID, served, r.Error)
		default:
			fmt.Fprintf(&sb, "  node %s: %s; round trip %.2f ms\n", r.ID, served, r.LatencyMs)
		}
	}
	return sb.String()
}

// Report is the cluster part of toolnode.status.
func (c *Cluster) Report(ctx context.Context) node.ClusterReport {
	st := c.Status(ctx)
	return node.ClusterReport{Text: st.Text(), Data: st}
}
