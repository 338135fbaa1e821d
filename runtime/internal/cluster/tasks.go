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
// front made it, and its id begins with that node's task tag. Every node serves the
// tasks/* of its own tasks on a subject named by its tag; a node given an id of another
// tag carries the request there, with who sends it, and the answer back. The node that
// holds the task checks that the caller owns it and applies the caller's access client.
// With a cluster key, both ways are signed, as every message of the cluster is.

// Headers of a tasks/* request carried to the node holding the task.
const (
	// hOwner is the caller's key for the ownership of tasks (node.TaskCaller.Owner).
	hOwner = "Tn-Owner"
	// hClient is the caller's access client (node.TaskCaller.Client).
	hClient = "Tn-Client"
)

// clusterTasks is what the cluster keeps for the tasks/* other nodes carry here.
type clusterTasks struct {
	guard guard      // their senders' sequence numbers, against replays
	parts *assembler // those in parts
}

func (c *Cluster) taskSubject(tag string) string { return c.subject("task." + tag) }

// joinTasks serves this node's tasks to the cluster and routes the others'.
func (c *Cluster) joinTasks() error {
	c.tasks.parts = &assembler{max: c.b.Message, open: c.b.Parts, gap: c.b.PartGap}
	sub, err := c.nc.Subscribe(c.taskSubject(c.n.TaskTag()), c.serveTask)
	if err != nil {
		return fmt.Errorf("cluster: subscribe to %s: %w", c.taskSubject(c.n.TaskTag()), err)
	}
	_ = sub.SetPendingLimits(1024, c.b.Message+8<<20)
	c.n.SetTaskRoute(c.routeTask)
	return nil
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
	if !validTag(tag) {
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
	if err := publish(c.out, c.taskSubject(tag), inbox, hdr, rpc.Request(rpc.Int(1), method, params).Encode()); err != nil {
		return nil, fmt.Errorf("cluster: %s: %w", method, err)
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.AcceptTimeout)
	defer cancel()
	parts := &assembler{max: c.b.Message, open: 1, gap: c.b.PartGap}
	for {
		m, err := sub.NextMsgWithContext(ctx)
		switch {
		case errors.Is(err, nats.ErrNoResponders) || err == nil && m.Header.Get("Status") == "503": // no node has the tag
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

// serveTask serves a tasks/* request another node carried here.
func (c *Cluster) serveTask(msg *nats.Msg) {
	from := msg.Header.Get(hFrom)
	if _, err := c.keys.check(msg, &c.tasks.guard); err != nil || from == "" || msg.Reply == "" {
		if err == nil {
			err = fmt.Errorf("it names no node, or no reply subject")
		}
		c.refusals.add("request about a task", from, err)
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
