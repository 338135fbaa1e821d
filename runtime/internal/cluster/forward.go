package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nuid"
)

// Replicas: nodes started with the same bundles on one cluster serve as one endpoint
// behind a balancer that sends each request wherever it likes. What some requests need
// lives on one node: a 2025-11-25 session, and a call waiting for its client's input. A
// replica that gets a request for another node's session or waiting call carries the
// request to that node over NATS (Forward), where it is served as if its client had sent it
// there (ServeFront), and streams that node's answer back to its client as it comes.
//
// On the wire, the forwarding node sends the request to toolnode.<name>.front.<node> with a
// reply subject of its own; the serving node answers there with a head (status and
// headers), the body in order (each with its sequence number), and an end; or, for an
// answer written at once (most are), all three in one message. The forwarding node tells
// the serving node's inbox when its client leaves.

// Kinds of the messages of a forwarded request (header hKind).
const (
	kindForward = "forward"
	kindHead    = "head"
	kindData    = "data"
	kindEnd     = "end"
	kindWhole   = "whole"        // head, body and end in one: an answer written at once
	kindGone    = "forward-gone" // the forwarding node's client left
)

// Headers of a forwarded request's messages besides those of calls.
const (
	// hSeq numbers the body's messages, so that a lost one ends the answer.
	hSeq = "Tn-Seq"
	// hError is the end of an answer that failed, saying why.
	hError = "Tn-Error"
	// hHead is the head of a whole answer (kindWhole), whose body is the message's.
	hHead = "Tn-Head"
)

// ErrUnknownNode is returned by Forward for a node that is not a live member of the
// cluster: what it held (sessions, waiting calls) is gone with it.
var ErrUnknownNode = errors.New("no such node in the cluster")

// Forwarded is a client's HTTP request as a replica carries it to the node that serves it,
// with the client as the replica authenticated it.
type Forwarded struct {
	Method string      `json:"method"`
	Header http.Header `json:"header"`
	Body   []byte      `json:"body,omitempty"`
	// Client, Subject and Source are the client's identity: its access-file client, its
	// OAuth subject, and where it connected from.
	Client  string `json:"client,omitempty"`
	Subject string `json:"subject,omitempty"`
	Source  string `json:"source,omitempty"`
	// Groups are the groups of the client's OAuth token, which may name approvers.
	Groups []string `json:"groups,omitempty"`
}

// FrontHandler serves a request forwarded to this node as if its client had sent it here.
type FrontHandler func(w http.ResponseWriter, r *http.Request, f *Forwarded)

// frontSubject is where the requests forwarded to node go.
func (c *Cluster) frontSubject(node string) string { return c.subject("front." + node) }

// forwards are the requests this node serves for other replicas, and those it forwarded.
type forwards struct {
	mu      sync.Mutex
	serving map[string]*servedForward // by key, for the forwarding node's cancellation
	waiting map[string]*forwarding    // by key: their answers, and the serving node's withdrawal
	asm     *assembler                // requests that come in parts
	guard   guard
	// replies is the subject prefix of the answers to this node's forwards, <prefix>.<key>,
	// all taken by one subscription: none is made and unmade per request.
	replies     string
	repliesOnce sync.Once
	repliesErr  error
}

type servedForward struct {
	from   string
	cancel context.CancelCauseFunc
}

// ServeFront takes the requests other replicas forward to this node, serving each with h.
func (c *Cluster) ServeFront(h FrontHandler) error {
	c.fwd.mu.Lock()
	c.fwd.asm = &assembler{max: c.b.Message, open: c.b.Parts, gap: c.b.PartGap}
	c.fwd.mu.Unlock()
	sub, err := c.nc.Subscribe(c.frontSubject(c.id), func(msg *nats.Msg) { c.takeForward(h, msg) })
	if err != nil {
		return fmt.Errorf("cluster: subscribe to %s: %w", c.frontSubject(c.id), err)
	}
	_ = sub.SetPendingLimits(1<<14, c.b.Message+8<<20)
	return nil
}

// takeForward serves one forwarded request, checked first like every message of a peer.
func (c *Cluster) takeForward(h FrontHandler, msg *nats.Msg) {
	from, key := msg.Header.Get(hFrom), msg.Header.Get(hKey)
	if _, err := c.keys.check(msg, &c.fwd.guard); err != nil || from == "" || key == "" || msg.Reply == "" {
		if err == nil {
			err = errors.New("it names no node, key or reply subject")
		}
		c.refusals.add("forwarded request", from, err)
		return
	}
	data, whole, err := c.fwd.asm.add(msg)
	if err != nil {
		c.refusals.add("forwarded request", from, err)
		return
	}
	if !whole {
		return
	}
	var f Forwarded
	if err := json.Unmarshal(data, &f); err != nil || f.Method == "" {
		c.refusals.add("forwarded request", from, fmt.Errorf("not a request: %v", err))
		return
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	c.fwd.mu.Lock()
	select {
	case <-c.stop: // leaving: Leave has ended those served, and waits for them
		c.fwd.mu.Unlock()
		cancel(nil)
		return
	default:
	}
	if c.fwd.serving == nil {
		c.fwd.serving = map[string]*servedForward{}
	}
	c.fwd.serving[key] = &servedForward{from: from, cancel: cancel}
	c.fwd.mu.Unlock()
	r, err := http.NewRequestWithContext(ctx, f.Method, "/mcp", bytes.NewReader(f.Body))
	if err != nil {
		cancel(err)
		return
	}
	r.Header = f.Header
	r.ContentLength = int64(len(f.Body))
	r.RemoteAddr = f.Source
	w := &frontWriter{c: c, to: msg.Reply, key: key, header: http.Header{}}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer func() {
			c.fwd.mu.Lock()
			delete(c.fwd.serving, key)
			c.fwd.mu.Unlock()
			cancel(nil)
		}()
		h(w, r, &f)
		why := "" // an answer cut short by the node's leaving ends saying so
		if err := context.Cause(ctx); err != nil {
			why = err.Error()
		}
		w.end(why)
	}()
}

// endForwards ends the requests this node serves for other replicas, saying why.
func (c *Cluster) endForwards(why error) {
	c.fwd.mu.Lock()
	defer c.fwd.mu.Unlock()
	for _, s := range c.fwd.serving {
		s.cancel(why)
	}
}

// forwardGone ends a request this node serves for another replica whose client left.
func (c *Cluster) forwardGone(from, key string) {
	c.fwd.mu.Lock()
	s := c.fwd.serving[key]
	c.fwd.mu.Unlock()
	if s != nil && s.from == from {
		s.cancel(fmt.Errorf("the client left node %q, which forwarded its request", from))
	}
}

// frontWriter is the answer of a forwarded request, sent back to the forwarding node as it
// is written: its head with the first write, its body at each flush.
type frontWriter struct {
	c      *Cluster
	to     string
	key    string
	header http.Header

	mu     sync.Mutex
	status int
	sent   bool // the head is out
	buf    []byte
	seq    int
	failed error
}

func (w *frontWriter) Header() http.Header { return w.header }

func (w *frontWriter) WriteHeader(status int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.status == 0 {
		w.status = status
	}
}

func (w *frontWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if w.failed != nil {
		return 0, w.failed
	}
	w.buf = append(w.buf, p...)
	return len(p), nil
}

// Flush sends what was written so far.
func (w *frontWriter) Flush() { _ = w.FlushError() }

// FlushError sends what was written so far, and says when it could not.
func (w *frontWriter) FlushError() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.flushLocked()
}

// answerHead is the status and headers of an answer.
type answerHead struct {
	Status int         `json:"status"`
	Header http.Header `json:"header"`
}

func (w *frontWriter) head() []byte {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	head, _ := json.Marshal(answerHead{w.status, w.header})
	return head
}

func (w *frontWriter) flushLocked() error {
	if w.failed != nil {
		return w.failed
	}
	if !w.sent {
		w.sent = true
		if err := w.send(kindHead, w.head(), nil); err != nil {
			return err
		}
	}
	if len(w.buf) == 0 {
		return nil
	}
	w.seq++
	hdr := nats.Header{}
	hdr.Set(hSeq, strconv.Itoa(w.seq))
	err := w.send(kindData, w.buf, hdr)
	w.buf = w.buf[:0]
	return err
}

// end sends the rest of the answer and its end; why, unless "", says it failed.
func (w *frontWriter) end(why string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	defer func() { w.failed = errors.New("the answer has ended") }()
	if !w.sent && why == "" && w.failed == nil {
		// Most answers are written whole, never flushed: one message carries them.
		w.sent = true
		hdr := nats.Header{}
		hdr.Set(hHead, string(w.head()))
		_ = w.send(kindWhole, w.buf, hdr)
		return
	}
	_ = w.flushLocked()
	hdr := nats.Header{}
	if why != "" {
		hdr.Set(hError, why)
	}
	_ = w.send(kindEnd, nil, hdr)
}

func (w *frontWriter) send(kind string, body []byte, hdr nats.Header) error {
	if hdr == nil {
		hdr = nats.Header{}
	}
	hdr.Set(hKind, kind)
	hdr.Set(hKey, w.key)
	hdr.Set(hNode, w.c.id)
	if err := publish(w.c.out, w.to, "", hdr, body); err != nil {
		w.failed = fmt.Errorf("send the answer to the forwarding node: %w", err)
		return w.failed
	}
	return nil
}

// forwarding is a request this node forwarded, waiting for its answer.
type forwarding struct {
	owner string
	msgs  chan *nats.Msg // its answer's messages
	gone  chan string    // the serving node left the cluster, or the answer outran its client: why
}

// forwardReplies subscribes once to the answers of this node's forwards.
func (c *Cluster) forwardReplies() (string, error) {
	c.fwd.repliesOnce.Do(func() {
		prefix := c.nc.NewInbox()
		sub, err := c.nc.Subscribe(prefix+".*", c.forwardReply)
		if err != nil {
			c.fwd.repliesErr = fmt.Errorf("cluster: subscribe to the answers of forwarded requests: %w", err)
			return
		}
		_ = sub.SetPendingLimits(1<<16, c.b.Message+8<<20)
		c.fwd.replies = prefix
	})
	return c.fwd.replies, c.fwd.repliesErr
}

// forwardReply hands a message of an answer to the forward waiting for it. One that comes
// faster than its client takes the answer ends that forward rather than pile up.
func (c *Cluster) forwardReply(msg *nats.Msg) {
	key := tail(msg.Subject)
	c.fwd.mu.Lock()
	fw := c.fwd.waiting[key]
	c.fwd.mu.Unlock()
	if fw == nil {
		return // its client has left
	}
	select {
	case fw.msgs <- msg:
	default:
		select {
		case fw.gone <- "its answer came faster than its client read it":
		default:
		}
	}
}

// Forward carries f to node owner and writes its answer to w as it comes, until the
// answer ends, ctx ends (the client left: owner is told), or owner leaves the cluster.
// ErrUnknownNode when owner is not a live member. Once the answer has begun, a failure
// ends it where it is.
func (c *Cluster) Forward(ctx context.Context, owner string, f *Forwarded, w http.ResponseWriter) error {
	if owner == c.id || !c.Member(owner) {
		return fmt.Errorf("node %q: %w", owner, ErrUnknownNode)
	}
	body, err := json.Marshal(f)
	if err != nil {
		return err
	}
	replies, err := c.forwardReplies()
	if err != nil {
		return err
	}
	key := nuid.Next()
	inbox := replies + "." + key
	fw := &forwarding{owner: owner, msgs: make(chan *nats.Msg, 256), gone: make(chan string, 1)}
	c.fwd.mu.Lock()
	if c.fwd.waiting == nil {
		c.fwd.waiting = map[string]*forwarding{}
	}
	c.fwd.waiting[key] = fw
	c.fwd.mu.Unlock()
	defer func() {
		c.fwd.mu.Lock()
		delete(c.fwd.waiting, key)
		c.fwd.mu.Unlock()
	}()
	hdr := nats.Header{}
	hdr.Set(hKind, kindForward)
	hdr.Set(hKey, key)
	hdr.Set(hFrom, c.id)
	if err := publish(c.out, c.frontSubject(owner), inbox, hdr, body); err != nil {
		return fmt.Errorf("forward to node %q: %w", owner, err)
	}
	asm := &assembler{max: c.b.Message, open: 1, gap: c.b.PartGap}
	var g guard
	accept := time.NewTimer(c.cfg.AcceptTimeout)
	defer accept.Stop()
	started, seq := false, 0
	rc := http.NewResponseController(w)
	for {
		select {
		case <-ctx.Done():
			c.tellGone(owner, key)
			return context.Cause(ctx)
		case why := <-fw.gone:
			c.tellGone(owner, key)
			return fmt.Errorf("node %q, which served the request: %s", owner, why)
		case <-accept.C:
			if !started {
				return fmt.Errorf("node %q did not take the request within %s", owner, c.cfg.AcceptTimeout)
			}
		case msg := <-fw.msgs:
			if _, err := c.keys.check(msg, &g); err != nil || msg.Header.Get(hNode) != owner || msg.Header.Get(hKey) != key {
				if err == nil {
					err = errors.New("it is not about this request")
				}
				c.refusals.add("answer to a forwarded request", msg.Header.Get(hNode), err)
				continue
			}
			data, whole, err := asm.add(msg)
			if err != nil {
				return fmt.Errorf("the answer of node %q: %w", owner, err)
			}
			if !whole {
				continue
			}
			switch msg.Header.Get(hKind) {
			case kindHead, kindWhole:
				head := []byte(msg.Header.Get(hHead))
				if msg.Header.Get(hKind) == kindHead {
					head = data
				}
				var h answerHead
				if started || json.Unmarshal(head, &h) != nil || h.Status < 100 || h.Status > 999 {
					return fmt.Errorf("the answer of node %q has no head, or two", owner)
				}
				for k, v := range h.Header {
					w.Header()[k] = v
				}
				w.WriteHeader(h.Status)
				started = true
				if msg.Header.Get(hKind) == kindWhole {
					_, err := w.Write(data)
					return err
				}
				_ = rc.Flush() // an event stream's client waits for its head
			case kindData:
				if n, _ := strconv.Atoi(msg.Header.Get(hSeq)); !started || n != seq+1 {
					return fmt.Errorf("the answer of node %q lost a part (%d after %d)", owner, n, seq)
				}
				seq++
				if _, err := w.Write(data); err != nil {
					c.tellGone(owner, key)
					return err
				}
				_ = rc.Flush()
			case kindEnd:
				if why := msg.Header.Get(hError); why != "" {
					return fmt.Errorf("node %q: %s", owner, why)
				}
				return nil
			}
		}
	}
}

// tellGone tells node owner that the client of the request key it serves left.
func (c *Cluster) tellGone(owner, key string) { c.tell(owner, key, kindGone, nil) }

// forwardsLost ends the requests forwarded to node id, which left the cluster, and those
// this node serves for it, whose answers have nowhere to go now.
func (c *Cluster) forwardsLost(id, why string) {
	c.fwd.mu.Lock()
	defer c.fwd.mu.Unlock()
	for _, s := range c.fwd.serving {
		if s.from == id {
			s.cancel(fmt.Errorf("node %q, which forwarded the request, left the cluster: %s", id, why))
		}
	}
	for _, fw := range c.fwd.waiting {
		if fw.owner == id {
			select {
			case fw.gone <- "it left the cluster: " + why:
			default:
			}
		}
	}
}

// Member reports whether node is a live member of the cluster (this node included).
func (c *Cluster) Member(node string) bool {
	if node == c.id {
		return true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.members[node]
	return ok
}
