package rpc

import "sync"

// Batch gathers the writes that handling a burst of input causes, so that they leave in one
// write each instead of one per message. A Conn given a Batch holds it while more whole
// lines wait in its read buffer, and releases it before it reads again; while any Conn
// holds it, an Outbox given the same Batch queues what it would have written at once, and
// the last release writes it. Under load a call then costs the pipes a fraction of a write
// each way; a lone message is written as soon as it is handled, as without a Batch.
//
// Holding never outlasts the handling of input already read, which never blocks (see
// ConnOptions.Handle), so nothing waits on a held write. The zero value is ready to use.
type Batch struct {
	mu      sync.Mutex
	holders int
	held    []*Outbox
}

func (b *Batch) hold() {
	b.mu.Lock()
	b.holders++
	b.mu.Unlock()
}

// release ends one hold; the last one writes what the outboxes kept meanwhile.
func (b *Batch) release() {
	b.mu.Lock()
	b.holders--
	var out []*Outbox
	if b.holders == 0 && len(b.held) > 0 {
		out = b.held
		b.held = nil
	}
	b.mu.Unlock()
	for _, o := range out {
		o.writeHeld()
	}
}

// keep reports whether o should queue rather than write now, and if so remembers to
// write it at the release. o.mu is held.
func (b *Batch) keep(o *Outbox) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.holders == 0 {
		return false
	}
	if !o.inBatch {
		o.inBatch = true
		b.held = append(b.held, o)
	}
	return true
}
