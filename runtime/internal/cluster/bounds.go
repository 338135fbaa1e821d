package cluster

import (
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/toolnode/toolnode/runtime/internal/node"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// refusalEvery is how often refused messages are logged at most: a flood of them must not
// become a flood of log lines.
const refusalEvery = 10 * time.Second

// refusals logs the messages of the cluster that were refused, for each kind of message
// one line at most every refusalEvery, saying how many went unlogged since.
type refusals struct {
	log hclog.Logger

	mu    sync.Mutex
	kinds map[string]*refused // by kind: a few fixed strings
}

type refused struct {
	last     time.Time
	unlogged int
}

// add logs (or counts) that a message of kind what from who was refused for err.
func (r *refusals) add(what, who string, err error) {
	r.mu.Lock()
	if r.kinds == nil {
		r.kinds = map[string]*refused{}
	}
	k := r.kinds[what]
	if k == nil {
		k = &refused{}
		r.kinds[what] = k
	}
	now := time.Now()
	if now.Sub(k.last) < refusalEvery {
		k.unlogged++
		r.mu.Unlock()
		return
	}
	more := k.unlogged
	k.last, k.unlogged = now, 0
	r.mu.Unlock()
	r.log.Warn("message from the cluster refused", "kind", what, "from", who, "why", err.Error(), "refused_unlogged_since_last", more)
}

// listSize is what the lists of bundles of other nodes hold: bytes and entries.
type listSize struct{ bytes, items int }

// listMembers names the array in the answer to each list method.
var listMembers = map[string]string{
	mcp.MethodToolsList:         "tools",
	mcp.MethodPromptsList:       "prompts",
	mcp.MethodResourcesList:     "resources",
	mcp.MethodResourceTemplates: "resourceTemplates",
}

// holdList checks a list that a bundle of another node answered on l against
// Bounds.Tools and Bounds.Lists, with what the other lists hold, and keeps its size when
// it fits. Lists come whole: the node serving the bundle answers from what it holds.
func (c *Cluster) holdList(l *link, method string, result json.RawMessage) error {
	var page map[string]json.RawMessage
	if err := json.Unmarshal(result, &page); err != nil {
		return fmt.Errorf("%s: bad answer: %w", method, err)
	}
	if _, paged := page["nextCursor"]; paged {
		return fmt.Errorf("%s: the answer has a nextCursor; nodes answer lists whole", method)
	}
	var items []json.RawMessage
	if err := json.Unmarshal(page[listMembers[method]], &items); err != nil && page[listMembers[method]] != nil {
		return fmt.Errorf("%s: bad %q: %w", method, listMembers[method], err)
	}
	size := listSize{bytes: len(result), items: len(items)}
	c.mu.Lock()
	defer c.mu.Unlock()
	held := c.lists[l]
	total := listSize{bytes: c.listed.bytes - held[method].bytes + size.bytes, items: c.listed.items - held[method].items + size.items}
	switch {
	case total.items > c.b.Tools:
		return fmt.Errorf("%s: %d entries would take the lists of other nodes' bundles to %d, over this node's bound of %d", method, size.items, total.items, c.b.Tools)
	case total.bytes > c.b.Lists:
		return fmt.Errorf("%s: %d bytes would take the lists of other nodes' bundles to %d, over this node's bound of %d", method, size.bytes, total.bytes, c.b.Lists)
	}
	if held == nil {
		held = map[string]listSize{}
		c.lists[l] = held
	}
	held[method] = size
	c.listed = total
	return nil
}

// dropLists forgets the lists of a link that ended; the caller holds c.mu.
func (c *Cluster) dropLists(l *link) {
	for _, size := range c.lists[l] {
		c.listed.bytes -= size.bytes
		c.listed.items -= size.items
	}
	delete(c.lists, l)
}

// bounds reports the cluster's bounds for toolnode.status.
func (c *Cluster) bounds() []node.Bound {
	held := c.sweep()
	c.mu.Lock()
	defer c.mu.Unlock()
	return []node.Bound{
		{Name: "cluster.nodes", Limit: int64(c.b.Nodes), Used: int64(len(c.members))},
		{Name: "cluster.heartbeat_bytes", Limit: int64(c.b.Announce)},
		{Name: "cluster.bundles_per_node", Limit: int64(c.b.Bundles)},
		{Name: "cluster.remote_bundles", Limit: int64(c.b.RemoteBundles), Used: int64(len(c.remote))},
		{Name: "cluster.list_entries", Limit: int64(c.b.Tools), Used: int64(c.listed.items)},
		{Name: "cluster.list_bytes", Limit: int64(c.b.Lists), Used: int64(c.listed.bytes)},
		{Name: "cluster.message_bytes", Limit: int64(c.b.Message)},
		{Name: "cluster.parts_held_bytes", Limit: -1, Used: int64(held)},
	}
}

// Bounds limit what the other nodes of a cluster can make this node hold. Zero fields take
// the defaults.
type Bounds struct {
	// Nodes is the most other nodes listed at once; the heartbeats of more are ignored.
	// Default 128.
	Nodes int
	// Announce is the largest heartbeat taken, in bytes. Default 256 KiB.
	Announce int
	// Bundles is the most bundles one heartbeat may announce; one with more is ignored.
	// Default 256.
	Bundles int
	// RemoteBundles is the most bundles of other nodes listed at once; past it, bundles of
	// the nodes whose ids sort last are left out. Default 512.
	RemoteBundles int
	// Tools is the most tools, prompts, resources and templates the bundles of other nodes
	// may list together (and one bundle may announce). Default 50,000.
	Tools int
	// Lists is the most bytes the lists of the bundles of other nodes may take together.
	// Default 64 MiB.
	Lists int
	// Message is the largest message about one call, once put together from its parts,
	// and the most bytes of parts held for one call. Default the node's bound on a bundle's
	// message (node.Limits.MaxLine).
	Message int
	// Parts is the most messages about one call put together from parts at once. Default 4.
	Parts int
	// PartGap is how long a message in parts may wait for its next part before it is
	// dropped. Default 30 s.
	PartGap time.Duration
}

func (b Bounds) withDefaults(message int) Bounds {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&b.Nodes, 128)
	def(&b.Announce, 256<<10)
	def(&b.Bundles, 256)
	def(&b.RemoteBundles, 512)
	def(&b.Tools, 50000)
	def(&b.Lists, 64<<20)
	def(&b.Message, message)
	def(&b.Parts, 4)
	if b.PartGap <= 0 {
		b.PartGap = 30 * time.Second
	}
	return b
}
