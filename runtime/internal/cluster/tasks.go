package cluster

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"

	"github.com/toolnode/toolnode/runtime/internal/node"
	"github.com/toolnode/toolnode/runtime/internal/rpc"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// Tasks across the cluster (MCP's tasks extension): a task is held by the node whose
// front made it, and its id begins with that node's task tag, which the node announces in
// its heartbeats. A node given an id of another node's tag carries the tasks/* request to
// that node's own subject (as cancellations and pings go), with who sends it, and the
// answer back. The node that holds the task checks that the caller owns it and applies the
// caller's access client. With a cluster key, both ways are signed, as every message of
// the cluster is.

// Headers of a tasks/* request carried to the node holding the task.
const (
	// hOwner is the caller's key for the ownership of tasks (node.TaskCaller.Owner).
	hOwner = "Tn-Owner"
	// hClient is the caller's access client (node.TaskCaller.Client).
	hClient = "Tn-Client"
	// kindTask is the Tn-Kind of a tasks/* request.
	kindTask = "task"
)

// clusterTasks is what the cluster keeps for the tasks/* other nodes carry here.
type clusterTasks struct {
	parts *assembler // those in parts
}

// joinTasks routes the tasks/* of other nodes' tasks to them; this node's come to its
// inbox (see inbox).
func (c *Cluster) joinTasks() {
	c.tasks.parts = &assembler{max: c.b.Message, open: c.b.Parts, gap: c.b.PartGap}
	c.n.SetTaskRoute(c.routeTask)
}

// taskNode is the node that announced the task tag tag; "" for none.
func (c *Cluster) taskNode(tag string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, m := range c.members {
		if m.Tasks == tag {
			return id
		}
	}
	return ""
}

// validTag reports whether tag can be a node's task tag (see node.TaskTag): a client
// chooses the ids it sends, and a tag goes into a subject.
func validTag(tag string) bool {
	b, err := hex.DecodeString(tag)
	return err == nil && len(b) == 6
}

// routeTask carries a tasks/* request to the node whose task tag is tag.
func (c *Cluster) routeTask(ctx context.Context, tag string, caller node.TaskCaller, method string, params json.RawMessage) (json.RawMessage, error) {
	unknown := rpc.Errorf(mcp.CodeInvalidParams, "invalid params: unknown task: no node of the cluster holds it (it was never made, or its node has left)")
	to := ""
	if validTag(tag) {
		to = c.taskNode(tag)
	}
	if to == "" {
		return nil, unknown
	}
	inbox := c.nc.NewInbox()
	sub, err := c.nc.SubscribeSync(inbox)
	if err != nil {
		return nil, fmt.Errorf("cluster: %s: %w", method, err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	hdr := nats.Header{}
	hdr.Set(hFrom, c.id)
	hdr.Set(hOwner, caller.Owner)
	hdr.Set(hClient, caller.Client)
	hdr.Set(hKind, kindTask)
	if err := publish(c.out, c.inboxSubject(to), inbox, hdr, rpc.Request(rpc.Int(1), method, params).Encode()); err != nil {
		return nil, fmt.Errorf("cluster: %s: %w", method, err)
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.AcceptTimeout)
	defer cancel()
	parts := &assembler{max: c.b.Message, open: 1, gap: c.b.PartGap}
	for {
		m, err := sub.NextMsgWithContext(ctx)
		switch {
		case errors.Is(err, nats.ErrNoResponders) || err == nil && m.Header.Get("Status") == "503": // the node has gone
			return nil, unknown
		case err != nil && errors.Is(err, context.DeadlineExceeded):
			return nil, fmt.Errorf("cluster: %s: the node holding the task did not answer within %s", method, c.cfg.AcceptTimeout)
		case err != nil:
			return nil, fmt.Errorf("cluster: %s: %w", method, err)
		}
		if _, err := c.keys.check(m, nil); err != nil {
			c.refusals.add("answer about a task", m.Header.Get(hNode), err)
			continue
		}
		data, whole, err := parts.add(m)
		if err != nil {
			return nil, fmt.Errorf("cluster: %s: the answer: %w", method, err)
		}
		if !whole {
			continue
		}
		answer, perr := rpc.Parse(data, rpc.Limits{})
		switch {
		case perr != nil:
			return nil, fmt.Errorf("cluster: %s: the answer: %s", method, perr.Message)
		case answer.Error != nil:
			return nil, answer.Error
		}
		return answer.Result, nil
	}
}

// serveTask serves a tasks/* request another node carried here, which inbox has checked.
func (c *Cluster) serveTask(msg *nats.Msg) {
	from := msg.Header.Get(hFrom)
	if from == "" || msg.Reply == "" {
		c.refusals.add("request about a task", from, fmt.Errorf("it names no node, or no reply subject"))
		return
	}
	data, whole, err := c.tasks.parts.add(msg)
	if err != nil {
		c.refusals.add("request about a task", from, err)
		return
	}
	if !whole {
		return
	}
	m, perr := rpc.Parse(data, rpc.Limits{})
	if perr != nil || !m.IsRequest() {
		return
	}
	caller := node.TaskCaller{Owner: msg.Header.Get(hOwner), Client: msg.Header.Get(hClient)}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), c.cfg.AcceptTimeout)
		defer cancel()
		res, err := c.n.ServeTask(ctx, caller, m.Method, m.Params)
		c.reply(msg.Reply, "", m.ID, res, err)
	}()
}
