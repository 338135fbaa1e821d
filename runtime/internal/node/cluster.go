package node

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sort"

	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// SharedBundle is what a bundle of this node offers to the other nodes of a cluster: enough
// for them to list it under the names it has here, and to serve its lists.
type SharedBundle struct {
	Name   string
	Seats  []string
	Prefix bool
	// Capabilities are the bundle's, or for a bundle asleep what it offered when it ran.
	Capabilities mcp.ServerCapabilities
	ServerInfo   mcp.Implementation
	Instructions string
	// Era is the era its processes speak ("" while none runs).
	Era                                  string
	Tools, Prompts, Resources, Templates []json.RawMessage
	// Digest sums up the lists and capabilities: it changes when they do.
	Digest string
}

// SharedBundles reports this node's own listed bundles (not those other nodes serve), by
// name.
func (n *Node) SharedBundles() []SharedBundle {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]SharedBundle, 0, len(n.bundles))
	for _, b := range n.bundles {
		if b.m.Link != nil || !listed(b) {
			continue
		}
		s := SharedBundle{Name: b.name, Seats: b.m.Seats, Prefix: b.m.Prefixed(),
			Tools: taskTools(b.m, b.lists.tools), Prompts: b.lists.prompts, Resources: b.lists.resources, Templates: b.lists.templates}
		if inst := firstLive(b); inst != nil {
			s.Capabilities, s.ServerInfo, s.Instructions = inst.client.Init.Capabilities, inst.client.Init.ServerInfo, inst.client.Init.Instructions
			s.Era = inst.client.Era().String()
		} else {
			s.Capabilities = capabilitiesOf(b.sleep.offers)
		}
		s.Capabilities.Tools = &mcp.ListChangedCapability{}
		sum := sha256.New()
		enc := json.NewEncoder(sum)
		_ = enc.Encode(s.Capabilities)
		_ = enc.Encode(s.Seats)
		_ = enc.Encode(s.Prefix)
		for _, l := range [][]json.RawMessage{s.Tools, s.Prompts, s.Resources, s.Templates} {
			_ = enc.Encode(l)
		}
		s.Digest = hex.EncodeToString(sum.Sum(nil)[:12])
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// capabilitiesOf is the inverse of offersOf, for a bundle known only by its offers.
func capabilitiesOf(o Offers) mcp.ServerCapabilities {
	var c mcp.ServerCapabilities
	if o.Prompts {
		c.Prompts = &mcp.ListChangedCapability{}
	}
	if o.Resources {
		c.Resources = &mcp.ResourcesCapability{Subscribe: o.Subscribe}
	}
	if o.Completions {
		c.Completions = &struct{}{}
	}
	return c
}

// ServeBundle sends a request of x straight to this node's bundle of that name, as a
// call routed there would go (progress, cancellation, timeouts, the bundle's own requests
// to x), bypassing the merged catalog: params name things as the bundle does. It serves
// the calls other nodes of a cluster route here, whose own fronts applied their callers'
// filters.
func (n *Node) ServeBundle(ctx context.Context, x Exchange, bundle, method string, params json.RawMessage) {
	req, err := ReadRequest(method, params)
	if err != nil {
		x.CallDone(Answer(method, nil, err))
		return
	}
	n.forwardAsync(newCall(ctx, x, req, settleAsIs, x), bundle, "")
}

// MaxBundleMessage is the largest message the node takes from a bundle (Limits.MaxLine):
// the bound on a message from another node of a cluster too.
func (n *Node) MaxBundleMessage() int { return n.limits.MaxLine }

// ClusterReport is what toolnode.status says of the cluster a node belongs to.
type ClusterReport struct {
	// Text is the report for people, one line per node.
	Text string
	// Data is the report in structured form, under "cluster".
	Data any
}

// SetClusterReport registers the source of the cluster part of toolnode.status.
func (n *Node) SetClusterReport(f func(ctx context.Context) ClusterReport) {
	n.clusterReport.Store(&f)
}

// reportCluster reports the cluster, or nil outside one.
func (n *Node) reportCluster(ctx context.Context) *ClusterReport {
	f := n.clusterReport.Load()
	if f == nil {
		return nil
	}
	r := (*f)(ctx)
	return &r
}
