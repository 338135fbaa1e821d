package cluster

import (
	"fmt"
	"strconv"
	"sync"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nuid"
)

// Headers of the messages between nodes. A message's body is one JSON-RPC message, or one
// part of it.
const (
	// hNode names the node that sent a message about a call it serves.
	hNode = "Tn-Node"
	// hFrom names the node a call comes from.
	hFrom = "Tn-From"
	// hKey names a call being served, on the node serving it.
	hKey = "Tn-Key"
	// hKind is "accept" on the first message of a call taken by a node, "ping" on a ping.
	hKind = "Tn-Kind"
	// hMsg, hPart and hLast cut a message larger than the server's max payload into parts
	// sent in order: every part names its message and its place, the last says so.
	hMsg  = "Tn-Msg"
	hPart = "Tn-Part"
	hLast = "Tn-Last"
)

// headroom is kept below the server's max payload for the headers of a part.
const headroom = 4 << 10

// publish sends body to subject with the headers hdr, cut into parts when it is larger than
// the server takes in one message. NATS keeps the order of one connection's messages to
// one subscriber, so the receiver puts the parts together in order.
func publish(nc *nats.Conn, subject, reply string, hdr nats.Header, body []byte) error {
	max := int(nc.MaxPayload()) - headroom
	if max <= 0 {
		max = 64 << 10 // not connected yet: the smallest max payload a server would set
	}
	if len(body) <= max {
		return nc.PublishMsg(&nats.Msg{Subject: subject, Reply: reply, Header: hdr, Data: body})
	}
	id := nuid.Next()
	for part := 0; len(body) > 0; part++ {
		n := min(len(body), max)
		h := nats.Header{}
		for k, v := range hdr {
			h[k] = v
		}
		h.Set(hMsg, id)
		h.Set(hPart, strconv.Itoa(part))
		if n == len(body) {
			h.Set(hLast, "1")
		}
		if err := nc.PublishMsg(&nats.Msg{Subject: subject, Reply: reply, Header: h, Data: body[:n]}); err != nil {
			return fmt.Errorf("publish part %d of a %d-byte message: %w", part, len(body), err)
		}
		body = body[n:]
	}
	return nil
}

// assembler puts messages sent in parts back together.
type assembler struct {
	mu      sync.Mutex
	partial map[string]*partial
}

type partial struct {
	next int
	data []byte
}

// add takes one message and returns the whole message once complete (ok), nothing while
// parts are missing, or an error when a part came out of order: one was lost.
func (a *assembler) add(m *nats.Msg) (data []byte, ok bool, err error) {
	id := m.Header.Get(hMsg)
	if id == "" {
		return m.Data, true, nil
	}
	part, _ := strconv.Atoi(m.Header.Get(hPart))
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.partial == nil {
		a.partial = map[string]*partial{}
	}
	p := a.partial[id]
	if p == nil {
		p = &partial{}
		a.partial[id] = p
	}
	if part != p.next {
		delete(a.partial, id)
		return nil, false, fmt.Errorf("part %d of a message came where part %d was due: a part was lost", part, p.next)
	}
	p.next++
	p.data = append(p.data, m.Data...)
	if m.Header.Get(hLast) != "1" {
		return nil, false, nil
	}
	delete(a.partial, id)
	return p.data, true, nil
}
