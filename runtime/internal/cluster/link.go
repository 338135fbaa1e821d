package cluster

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/toolnode/toolnode/runtime/internal/rpc"
	"github.com/toolnode/toolnode/sdk-go/mcp"
	"github.com/toolnode/toolnode/sdk-go/rawjson"
)

// link is this node's side of a bundle other nodes serve: an upstream.Link whose messages go
// over NATS. Each request goes to the bundle's subject, where the nodes serving the bundle
// share calls in a queue group, with a reply subject of its own; the node that takes it
// answers there, and sends there what the bundle says during the call, each message naming
// the node (a call that takes a while is accepted at once, naming it). What the session
// writes about a call afterwards (its cancellation, the answers to the bundle's requests)
// goes to that node.
type link struct {
	c      *Cluster
	bundle string
	prefix string // reply subjects are prefix.<token>
	sub    *nats.Subscription
	guard  guard

	rmu    sync.Mutex
	rcond  *sync.Cond
	rq     [][]byte // lines for the session to read
	cur    []byte
	closed bool
	why    string // why the bundle left the cluster, once it has

	wbuf []byte // a line partly written; the session's outbox writes from one goroutine

	mu       sync.Mutex
	next     uint64
	calls    map[string]*call // by token
	byID     map[string]*call // by the session's request id
	incoming map[string]*asked
}

// call is a request of the session to the bundle.
type call struct {
	token     string
	id        json.RawMessage
	method    string
	node      string // the node that took it, once it said so
	key       string // its name on that node
	cancelled []byte // the session's cancellation, sent once the node is known
	asked     map[string]string
	timer     *time.Timer
	sent      time.Time
	asm       *assembler // its messages in parts, once one comes
}

// asked is a request of the bundle, during a call, that the session answers.
type asked struct {
	call     *call
	remoteID json.RawMessage
	replyTo  string
}

func (c *Cluster) openLink(bundle string) (*link, error) {
	l := &link{c: c, bundle: bundle, prefix: c.nc.NewInbox(), calls: map[string]*call{}, byID: map[string]*call{}, incoming: map[string]*asked{}}
	l.rcond = sync.NewCond(&l.rmu)
	sub, err := c.nc.Subscribe(l.prefix+".*", l.receive)
	if err != nil {
		return nil, fmt.Errorf("bundle %q: subscribe to its answers: %w", bundle, err)
	}
	// A large result arrives in many parts at once: room for one whole, and then some.
	_ = sub.SetPendingLimits(1<<16, c.b.Message+8<<20)
	l.sub = sub
	c.mu.Lock()
	c.links[l] = struct{}{}
	c.mu.Unlock()
	return l, nil
}

// Where names the bundle's subject.
func (l *link) Where() string { return "nats:" + l.c.bundleSubject(l.bundle) }

// Read gives the session the bundle's messages, one line each.
func (l *link) Read(p []byte) (int, error) {
	l.rmu.Lock()
	defer l.rmu.Unlock()
	for len(l.cur) == 0 {
		if len(l.rq) > 0 {
			l.cur, l.rq = l.rq[0], l.rq[1:]
			break
		}
		if l.closed {
			return 0, io.EOF
		}
		l.rcond.Wait()
	}
	n := copy(p, l.cur)
	l.cur = l.cur[n:]
	return n, nil
}

func (l *link) deliver(line []byte) {
	line = append(bytes.TrimRight(line, "\n"), '\n')
	l.rmu.Lock()
	if !l.closed {
		l.rq = append(l.rq, line)
		l.rcond.Signal()
	}
	l.rmu.Unlock()
}

// Write takes the session's messages, whole lines at a time.
func (l *link) Write(p []byte) (int, error) {
	l.wbuf = append(l.wbuf, p...)
	for {
		i := bytes.IndexByte(l.wbuf, '\n')
		if i < 0 {
			break
		}
		line := l.wbuf[:i]
		l.send(line)
		l.wbuf = l.wbuf[i+1:]
	}
	if len(l.wbuf) == 0 {
		l.wbuf = nil
	}
	return len(p), nil
}

// leave ends every call waiting with why: the bundle has left the cluster. Calls made
// until the node stops the link end with it too (see Why).
func (l *link) leave(why string) {
	l.rmu.Lock()
	l.why = why
	l.rmu.Unlock()
	l.failWhere("", func(*call) string { return why })
}

// Why says why the bundle left the cluster, "" while it has not.
func (l *link) Why() string {
	l.rmu.Lock()
	defer l.rmu.Unlock()
	return l.why
}

// Close ends the link: reading ends, and calls still waiting end with it.
func (l *link) Close() error {
	l.rmu.Lock()
	already := l.closed
	l.closed = true
	l.rcond.Broadcast()
	l.rmu.Unlock()
	if already {
		return nil
	}
	_ = l.sub.Unsubscribe()
	l.c.mu.Lock()
	delete(l.c.links, l)
	l.c.dropLists(l)
	l.c.mu.Unlock()
	l.mu.Lock()
	for _, c := range l.calls {
		if c.timer != nil {
			c.timer.Stop()
		}
	}
	l.mu.Unlock()
	return nil
}

// send passes on one message of the session.
func (l *link) send(line []byte) {
	m, perr := rpc.Parse(line, rpc.Limits{})
	if perr != nil {
		l.c.log.Warn("a message to a bundle of the cluster is not JSON-RPC; dropped", "bundle", l.bundle, "error", perr)
		return
	}
	switch {
	case m.IsRequest():
		l.request(&m, line)
	case m.IsResponse():
		l.answer(&m, line)
	case m.Method == mcp.NotifyCancelled:
		l.cancel(&m, line)
	default:
		l.c.log.Debug("notification to a bundle of the cluster not sent on", "bundle", l.bundle, "method", m.Method)
	}
}

func (l *link) request(m *rpc.Message, line []byte) {
	id := json.RawMessage(m.ID.String())
	l.mu.Lock()
	l.next++
	c := &call{token: strconv.FormatUint(l.next, 36), id: id, method: m.Method, sent: l.c.cfg.Clock.Now()}
	l.calls[c.token] = c
	l.byID[string(id)] = c
	// A node that takes the call soon says so, or answers: silence means none did (a node
	// that died with it is found sooner, when it is withdrawn).
	c.timer = time.AfterFunc(l.c.cfg.AcceptTimeout, func() {
		l.mu.Lock()
		taken := c.node != ""
		l.mu.Unlock()
		if !taken {
			l.fail(c, fmt.Sprintf("no node of cluster %q took the call to bundle %q within %s", l.c.cfg.Name, l.bundle, l.c.cfg.AcceptTimeout))
		}
	})
	l.mu.Unlock()
	if why := l.Why(); why != "" {
		l.fail(c, why)
		return
	}
	if max := l.c.nc.MaxPayload(); max > 0 && int64(len(line)) > max-headroom {
		l.fail(c, fmt.Sprintf("the request to bundle %q is %d bytes, more than the cluster's max payload of %d", l.bundle, len(line), max-headroom))
		return
	}
	hdr := nats.Header{}
	hdr.Set(hFrom, l.c.id)
	err := l.c.out.publish(&nats.Msg{Subject: l.c.bundleSubject(l.bundle), Reply: l.prefix + "." + c.token, Header: hdr, Data: line})
	if err != nil {
		l.fail(c, fmt.Sprintf("send the call to bundle %q to cluster %q: %v", l.bundle, l.c.cfg.Name, err))
	}
}

// answer sends the session's answer to a request of the bundle back to the node that sent
// it.
func (l *link) answer(m *rpc.Message, line []byte) {
	l.mu.Lock()
	a := l.incoming[m.ID.String()]
	delete(l.incoming, m.ID.String())
	if a != nil {
		delete(a.call.asked, string(a.remoteID))
	}
	l.mu.Unlock()
	if a == nil {
		return
	}
	out, _ := rawjson.SetMember(line, "id", a.remoteID)
	hdr := nats.Header{}
	hdr.Set(hKey, a.call.key)
	hdr.Set(hFrom, l.c.id)
	if err := publish(l.c.out, a.replyTo, "", hdr, out); err != nil {
		l.c.log.Warn("answer to a bundle of the cluster not sent", "bundle", l.bundle, "node", a.call.node, "error", err)
	}
}

// cancel tells the node serving a call that the session gave up on it. The call is
// forgotten: a cancelled request gets no answer.
func (l *link) cancel(m *rpc.Message, line []byte) {
	var p mcp.CancelledParams
	if json.Unmarshal(m.Params, &p) != nil {
		return
	}
	l.mu.Lock()
	c := l.byID[string(p.RequestID)]
	l.c.log.Debug("call cancelled by the client", "bundle", l.bundle, "id", string(p.RequestID), "known", c != nil)
	if c == nil {
		l.mu.Unlock()
		return
	}
	if c.node == "" {
		c.cancelled = bytes.Clone(line) // sent when the node says it took the call
		l.mu.Unlock()
		return
	}
	l.forget(c)
	node, key := c.node, c.key
	l.mu.Unlock()
	l.c.tell(node, key, "", line)
}

// forget drops a call; the caller holds l.mu.
func (l *link) forget(c *call) {
	delete(l.calls, c.token)
	delete(l.byID, string(c.id))
	for _, local := range c.asked {
		delete(l.incoming, local)
	}
	if c.timer != nil {
		c.timer.Stop()
	}
	if c.asm != nil {
		c.asm.reset()
	}
}

// sweep drops the messages in parts of the link's calls whose next part stopped coming,
// and reports the bytes of parts still held.
func (l *link) sweep(now time.Time) int {
	l.mu.Lock()
	var asms []*assembler
	for _, c := range l.calls {
		if c.asm != nil {
			asms = append(asms, c.asm)
		}
	}
	l.mu.Unlock()
	held := 0
	for _, a := range asms {
		held += a.sweep(now)
	}
	return held
}

// maxAsked bounds the requests of the bundle during one call that wait for the session's
// answer; more are refused at once.
const maxAsked = 16

// receive takes what the node serving a call says about it.
func (l *link) receive(msg *nats.Msg) {
	token := msg.Subject[strings.LastIndexByte(msg.Subject, '.')+1:]
	l.mu.Lock()
	c := l.calls[token]
	l.mu.Unlock()
	if c == nil {
		return
	}
	if msg.Header.Get("Status") == "503" {
		l.unserved(c)
		return
	}
	// What a call carries is checked before any of it is held: signed (with a key), and
	// from the one node that took the call.
	if _, err := l.c.keys.check(msg, &l.guard); err != nil {
		l.c.refusals.add("message about a call", msg.Header.Get(hNode), err)
		return
	}
	node := msg.Header.Get(hNode)
	if node == "" {
		l.c.refusals.add("message about a call", "", fmt.Errorf("it names no node"))
		return
	}
	l.mu.Lock()
	first := c.node == ""
	if first {
		c.node, c.key = node, msg.Header.Get(hKey)
		c.asm = &assembler{max: l.c.b.Message, open: l.c.b.Parts, gap: l.c.b.PartGap}
	}
	taker, asm := c.node, c.asm
	cancelled := c.cancelled
	if first && cancelled != nil {
		l.forget(c)
	}
	l.mu.Unlock()
	if node != taker {
		l.c.refusals.add("message about a call", node, fmt.Errorf("node %q took the call", taker))
		return
	}
	if first && cancelled != nil {
		l.c.tell(node, c.key, "", cancelled)
		return
	}
	if msg.Header.Get(hKind) == "accept" {
		return
	}
	data, whole, err := asm.add(msg)
	if err != nil {
		l.fail(c, fmt.Sprintf("a message of node %q about the call to bundle %q was refused: %v", c.node, l.bundle, err))
		return
	}
	if !whole {
		return
	}
	m, perr := rpc.Parse(data, rpc.Limits{})
	if perr != nil {
		l.fail(c, fmt.Sprintf("node %q sent a message for bundle %q that is not JSON-RPC: %s", c.node, l.bundle, perr.Message))
		return
	}
	l.relay(c, token, &m, data, msg.Reply)
}

// unserved fails call c, to which the NATS server knows no node serving the bundle: the
// ones that announced it have gone since.
func (l *link) unserved(c *call) {
	var gone []string
	for _, id := range l.c.servers(l.bundle) {
		gone = append(gone, strconv.Quote(id))
	}
	why := fmt.Sprintf("no node of cluster %q serves bundle %q now", l.c.cfg.Name, l.bundle)
	if len(gone) > 0 {
		why += fmt.Sprintf(": node %s, which announced it, is gone", strings.Join(gone, ", "))
	}
	l.fail(c, why)
}

// relay hands the session one whole message m (data) of the node serving call c: its
// answer, a request of the bundle (answered at reply), a cancellation of such a request,
// or anything else the call carries.
func (l *link) relay(c *call, token string, m *rpc.Message, data []byte, reply string) {
	switch {
	case m.IsResponse():
		l.mu.Lock()
		_, live := l.calls[token]
		l.mu.Unlock()
		if !live {
			return
		}
		if _, list := listMembers[c.method]; list && m.Error == nil {
			if err := l.c.holdList(l, c.method, m.Result); err != nil {
				l.fail(c, fmt.Sprintf("bundle %q of node %q: %v", l.bundle, c.node, err))
				return
			}
		}
		l.mu.Lock()
		_, live = l.calls[token]
		l.forget(c)
		l.mu.Unlock()
		if live {
			l.deliver(data)
		}
	case m.IsRequest():
		l.relayRequest(c, m, data, reply)
	case m.Method == mcp.NotifyCancelled:
		var p mcp.CancelledParams
		_ = json.Unmarshal(m.Params, &p)
		l.mu.Lock()
		local, ok := c.asked[string(p.RequestID)]
		l.mu.Unlock()
		if ok {
			l.deliver(rpc.Notification(mcp.NotifyCancelled, mcp.CancelledNotice(local, p.Reason)).Encode())
		}
	default:
		l.deliver(data)
	}
}

// relayRequest hands the session a request the bundle makes during call c, under an id
// unique on this link (the bundle's ids are its node's); past maxAsked waiting it is
// refused at reply.
func (l *link) relayRequest(c *call, m *rpc.Message, data []byte, reply string) {
	l.mu.Lock()
	if len(c.asked) >= maxAsked {
		l.mu.Unlock()
		hdr := nats.Header{}
		hdr.Set(hKey, c.key)
		hdr.Set(hFrom, l.c.id)
		err := rpc.Errorf(mcp.CodeInternalError, "more than %d requests of bundle %q wait for the client in one call", maxAsked, l.bundle)
		_ = publish(l.c.out, reply, "", hdr, rpc.Failure(m.ID, err).Encode())
		return
	}
	l.next++
	local := `"cl-` + strconv.FormatUint(l.next, 36) + `"`
	if c.asked == nil {
		c.asked = map[string]string{}
	}
	c.asked[m.ID.String()] = local
	l.incoming[local] = &asked{call: c, remoteID: json.RawMessage(m.ID.String()), replyTo: reply}
	l.mu.Unlock()
	out, _ := rawjson.SetMember(data, "id", []byte(local))
	l.deliver(out)
}

// fail ends a call with an error the session reads as the bundle's answer: for tools/call
// a result with isError set, as for any bundle that fails a call; the requests the bundle
// made during it are withdrawn.
func (l *link) fail(c *call, msg string) {
	l.mu.Lock()
	_, live := l.calls[c.token]
	var asked []string
	if live {
		for _, local := range c.asked {
			asked = append(asked, local)
		}
		l.forget(c)
	}
	l.mu.Unlock()
	if !live {
		return
	}
	for _, local := range asked {
		l.deliver(rpc.Notification(mcp.NotifyCancelled, mcp.CancelledNotice(local, msg)).Encode())
	}
	var id rpc.ID
	_ = json.Unmarshal(c.id, &id)
	if c.method == mcp.MethodToolsCall {
		res, _ := json.Marshal(mcp.ErrorResult(msg))
		l.deliver(rpc.Result(id, res).Encode())
		return
	}
	l.deliver(rpc.Failure(id, rpc.Errorf(mcp.CodeInternalError, "%s", msg)).Encode())
}

// failWhere ends every call the node names holds (every call when node is ""), with why.
func (l *link) failWhere(node string, why func(c *call) string) {
	l.mu.Lock()
	var doomed []*call
	for _, c := range l.calls {
		if node == "" || c.node == node {
			doomed = append(doomed, c)
		}
	}
	l.mu.Unlock()
	for _, c := range doomed {
		l.fail(c, why(c))
	}
}

// failUntaken ends every call sent before then that no node has taken, with msg.
func (l *link) failUntaken(before time.Time, msg string) {
	l.mu.Lock()
	var doomed []*call
	for _, c := range l.calls {
		if c.node == "" && c.sent.Before(before) {
			doomed = append(doomed, c)
		}
	}
	l.mu.Unlock()
	for _, c := range doomed {
		l.fail(c, msg)
	}
}

// listChanged tells the session that the bundle's lists changed, as a bundle would.
func (l *link) listChanged() {
	// One is enough: the node lists everything again on any of them.
	l.deliver(rpc.Notification(mcp.NotifyToolsListChanged, nil).Encode())
}
