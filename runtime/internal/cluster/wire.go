package cluster

import (
	"fmt"
	"strconv"
	"sync"
	"time"

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
	// sent in order: every part names its message and its place, the last says so; the
	// first says how large the whole is in hSize, so that a receiver can refuse it before
	// holding any of it.
	hMsg  = "Tn-Msg"
	hPart = "Tn-Part"
	hLast = "Tn-Last"
	hSize = "Tn-Size"
)

// headroom is kept below the server's max payload for the headers of a part.
const headroom = 4 << 10

// publish sends body to subject with the headers hdr on s, cut into parts when it is
// larger than the server takes in one message. NATS keeps the order of one connection's
// messages to one subscriber, so the receiver puts the parts together in order.
func publish(s *stream, subject, reply string, hdr nats.Header, body []byte) error {
	max := int(s.nc.MaxPayload()) - headroom
	if max <= 0 {
		max = 64 << 10 // not connected yet: the smallest max payload a server would set
	}
	if len(body) <= max {
		return s.publish(&nats.Msg{Subject: subject, Reply: reply, Header: hdr, Data: body})
	}
	id := nuid.Next()
	size := len(body)
	for part := 0; len(body) > 0; part++ {
		n := min(len(body), max)
		h := nats.Header{}
		for k, v := range hdr {
			h[k] = v
		}
		h.Set(hMsg, id)
		h.Set(hPart, strconv.Itoa(part))
		if part == 0 {
			h.Set(hSize, strconv.Itoa(size))
		}
		if n == len(body) {
			h.Set(hLast, "1")
		}
		if err := s.publish(&nats.Msg{Subject: subject, Reply: reply, Header: h, Data: body[:n]}); err != nil {
			return fmt.Errorf("publish part %d of a %d-byte message: %w", part, size, err)
		}
		body = body[n:]
	}
	return nil
}

// assembler puts the messages about one call that come in parts back together, holding
// at most max bytes in at most open messages at once; a message whose next part has not
// come within gap is dropped.
type assembler struct {
	max, open int
	gap       time.Duration

	mu      sync.Mutex
	partial map[string]*partial
	held    int
}

type partial struct {
	next int
	data []byte
	last time.Time
}

// add takes one message and returns the whole message once complete (ok), nothing while
// parts are missing, or an error when a part came out of order (one was lost) or the
// message is over the bounds; what was held of it is then dropped.
func (a *assembler) add(m *nats.Msg) (data []byte, ok bool, err error) {
	id := m.Header.Get(hMsg)
	if id == "" {
		if len(m.Data) > a.max {
			return nil, false, fmt.Errorf("a message of %d bytes is over the bound of %d", len(m.Data), a.max)
		}
		return m.Data, true, nil
	}
	part, _ := strconv.Atoi(m.Header.Get(hPart))
	now := time.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.expire(now)
	p := a.partial[id]
	if p == nil {
		if part != 0 {
			return nil, false, fmt.Errorf("part %d of a message came where part 0 was due: a part was lost", part)
		}
		if size, _ := strconv.Atoi(m.Header.Get(hSize)); size > a.max-a.held {
			return nil, false, fmt.Errorf("a message of %d bytes is over the bound of %d", size, a.max-a.held)
		}
		if len(a.partial) >= a.open {
			return nil, false, fmt.Errorf("more than %d messages came in parts at once", a.open)
		}
		if a.partial == nil {
			a.partial = map[string]*partial{}
		}
		p = &partial{}
		a.partial[id] = p
	}
	if part != p.next {
		a.dropLocked(id)
		return nil, false, fmt.Errorf("part %d of a message came where part %d was due: a part was lost", part, p.next)
	}
	if a.held+len(m.Data) > a.max {
		a.dropLocked(id)
		return nil, false, fmt.Errorf("a message in parts grew over the bound of %d bytes", a.max)
	}
	p.next++
	p.last = now
	p.data = append(p.data, m.Data...)
	a.held += len(m.Data)
	if m.Header.Get(hLast) != "1" {
		return nil, false, nil
	}
	a.held -= len(p.data)
	delete(a.partial, id)
	return p.data, true, nil
}

// expire drops the messages whose parts stopped coming; the caller holds a.mu.
func (a *assembler) expire(now time.Time) {
	for id, p := range a.partial {
		if now.Sub(p.last) > a.gap {
			a.dropLocked(id)
		}
	}
}

func (a *assembler) dropLocked(id string) {
	if p := a.partial[id]; p != nil {
		a.held -= len(p.data)
		delete(a.partial, id)
	}
}

// sweep drops the messages whose parts stopped coming and reports the bytes still held.
func (a *assembler) sweep(now time.Time) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.expire(now)
	return a.held
}

// reset drops every message held.
func (a *assembler) reset() {
	a.mu.Lock()
	a.partial, a.held = nil, 0
	a.mu.Unlock()
}
