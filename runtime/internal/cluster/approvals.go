package cluster

import (
	"encoding/json"
	"fmt"

	"github.com/nats-io/nats.go"

	"github.com/toolnode/toolnode/runtime/internal/node"
)

// Approvals across the cluster (node's approvals_share.go says what is shared and why):
// every node publishes each change of its requests for approval on
// toolnode.<name>.approvals.<node>, signed with the cluster key, and keeps what the others
// publish. A node that joins is sent, by every node that hears its first heartbeat, the
// requests that node holds.

// joinApprovals shares the node's requests for approval with the cluster's other nodes.
func (c *Cluster) joinApprovals() error {
	if !c.cfg.Approvals {
		return nil
	}
	c.n.ShareApprovals(func(sa node.SharedApproval) {
		body, err := json.Marshal(sa)
		if err != nil {
			return
		}
		if err := c.out.publish(&nats.Msg{Subject: c.subject("approvals." + c.id), Data: body}); err != nil {
			c.log.Warn("a request for approval was not shared with the cluster", "approval", sa.ID, "error", err)
		}
	})
	sub, err := c.nc.Subscribe(c.subject("approvals.*"), c.approval)
	if err != nil {
		return fmt.Errorf("cluster: subscribe to %s: %w", c.subject("approvals.*"), err)
	}
	_ = sub.SetPendingLimits(1<<16, c.b.Message+8<<20)
	return nil
}

// shareAll sends the node's requests for approval to the cluster, for a node that joined.
func (c *Cluster) shareAll() {
	if c.cfg.Approvals {
		c.n.ShareAll()
	}
}

// approval takes what another node tells of a request for approval. Its size and
// signature are checked before it is decoded.
func (c *Cluster) approval(msg *nats.Msg) {
	id := c.from(msg, c.b.Message, &c.approvalGuard, "approval")
	if id == "" {
		return
	}
	var sa node.SharedApproval
	if err := json.Unmarshal(msg.Data, &sa); err != nil {
		c.refusals.add("approval", id, err)
		return
	}
	c.n.ApplyApproval(sa)
}
