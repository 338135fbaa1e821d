package rpc

import (
	"errors"
	"fmt"
	"io"
	"sync"
)

// DefaultMaxQueue is how many bytes an Outbox holds for a peer that does not read, by
// default: room for several large results (images, files) in flight at once.
const DefaultMaxQueue = 64 << 20

// ErrNotReading is wrapped by the errors of sends refused because the peer has not read
// what was sent to it before.
var ErrNotReading = errors.New("the peer is not reading what is sent to it")

// errOutboxClosed is the error of sends after Close.
var errOutboxClosed = errors.New("connection closed")

// keepSpare is the largest buffer kept between writes; a larger one (after a 10 MiB result)
// goes back to the garbage collector.
const keepSpare = 1 << 20

// Outbox sends to one peer without ever waiting for it. Send queues bytes and returns;
// Run, on a goroutine of its own, writes them. When the writer is a non-blocking pipe, Send
// writes at once when nothing is queued, which spares the hand-off to Run. What is queued
// is bounded: past MaxQueue, sends are refused with ErrNotReading, and only this peer's
// messages fail. Safe for concurrent use.
type Outbox struct {
	w      io.Writer
	direct func([]byte) (int, error)
	limit  int
	batch  *Batch

	mu      sync.Mutex
	inBatch bool // queued for the release of batch
	buf     []byte
	spare   []byte
	writing int // bytes taken by Run and being written
	err     error
	closing bool
	wake    chan struct{}
	// stop (closed by Close) and done (closed when Run returns) are made when first
	// asked for: an HTTP response's outbox, made for every call, is never Run.
	stop chan struct{}
	done chan struct{}
}

// OutboxOptions configures an Outbox. The zero value is usable.
type OutboxOptions struct {
	// MaxQueue bounds the bytes queued and being written. A message is always taken when
	// nothing is queued, whatever its size. Default DefaultMaxQueue.
	MaxQueue int
	// Batch, when set, defers the writes made at once (to a non-blocking pipe) while it is
	// held.
	Batch *Batch
}

// NewOutbox returns an outbox writing to w. Start Run on a goroutine of its own.
func NewOutbox(w io.Writer, opts OutboxOptions) *Outbox {
	o := new(Outbox)
	o.Init(w, opts)
	return o
}

// Init makes o, a zero Outbox, one writing to w, as NewOutbox makes one: an Outbox held
// in a value of its own (an HTTP response's, made for every call) is then no allocation of
// its own. o must not be copied once in use.
func (o *Outbox) Init(w io.Writer, opts OutboxOptions) {
	if opts.MaxQueue <= 0 {
		opts.MaxQueue = DefaultMaxQueue
	}
	o.w, o.direct, o.limit, o.batch = w, directWriter(w), opts.MaxQueue, opts.Batch
	o.wake = make(chan struct{}, 1)
}

// Send queues b (whole messages; the outbox copies what it keeps). It never blocks on the
// peer. It fails when the outbox is closed or broken, or with ErrNotReading when the peer
// has more than MaxQueue bytes waiting.
func (o *Outbox) Send(b []byte) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.err != nil {
		return o.err
	}
	if o.closing {
		return errOutboxClosed
	}
	queued := len(o.buf) + o.writing
	if queued > 0 && queued+len(b) > o.limit {
		return fmt.Errorf("%w: %d bytes are waiting, over the limit of %d", ErrNotReading, queued, o.limit)
	}
	if queued == 0 && o.direct != nil && (o.batch == nil || !o.batch.keep(o)) {
		n, err := o.direct(b)
		if err != nil {
			o.err = fmt.Errorf("write: %w", err)
			return o.err
		}
		if n == len(b) {
			return nil
		}
		b = b[n:]
	}
	o.buf = append(o.buf, b...)
	if o.inBatch {
		return nil // written at the release
	}
	select {
	case o.wake <- struct{}{}:
	default:
	}
	return nil
}

// writeHeld writes what was kept while a Batch was held: at once what the pipe takes, the
// rest by Run.
func (o *Outbox) writeHeld() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.inBatch = false
	if len(o.buf) == 0 || o.err != nil {
		return
	}
	if o.writing == 0 {
		n, err := o.direct(o.buf)
		if err != nil {
			o.err = fmt.Errorf("write: %w", err)
			o.buf = nil
			return
		}
		o.buf = o.buf[:copy(o.buf, o.buf[n:])]
		if len(o.buf) == 0 {
			return
		}
	}
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// Queued is the number of bytes waiting for the peer.
func (o *Outbox) Queued() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.buf) + o.writing
}

// Run writes what is queued until Close (after which it writes what was queued before) or a
// write fails. The writes block on the peer; nothing else waits for them. A caller that
// writes on a goroutine it already has (an HTTP handler) uses Wake and WriteQueued instead.
func (o *Outbox) Run() {
	stop, done := o.Closed(), o.runDone()
	defer close(done)
	for {
		select {
		case <-o.wake:
		case <-stop:
		}
		more, err := o.WriteQueued()
		if err != nil || !more {
			return
		}
	}
}

// Wake receives a value when something has been queued since the last WriteQueued.
func (o *Outbox) Wake() <-chan struct{} { return o.wake }

// WriteQueued writes what is queued now, waiting for the peer, and reports whether the
// outbox is still open (false after Close once everything is written, or after a failed
// write).
func (o *Outbox) WriteQueued() (bool, error) {
	for {
		o.mu.Lock()
		if o.err != nil {
			o.mu.Unlock()
			return false, o.err
		}
		if len(o.buf) == 0 {
			open := !o.closing
			o.mu.Unlock()
			return open, nil
		}
		out := o.buf
		o.buf, o.spare = o.spare[:0], nil
		o.writing = len(out)
		o.mu.Unlock()

		_, err := o.w.Write(out)

		o.mu.Lock()
		o.writing = 0
		if cap(out) <= keepSpare {
			o.spare = out[:0]
		}
		if err != nil {
			o.err = fmt.Errorf("write: %w", err)
			o.buf = nil
			o.mu.Unlock()
			return false, o.err
		}
		o.mu.Unlock()
	}
}

// Close stops taking messages; Run writes what was queued and returns. It does not wait:
// a writer stuck on a peer that does not read is unblocked by closing the peer's stream.
func (o *Outbox) Close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.closing {
		o.closing = true
		if o.stop != nil {
			close(o.stop)
		}
	}
}

// Closed is closed by Close.
func (o *Outbox) Closed() <-chan struct{} {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.stop == nil {
		o.stop = make(chan struct{})
		if o.closing {
			close(o.stop)
		}
	}
	return o.stop
}

// Done is closed when Run has returned.
func (o *Outbox) Done() <-chan struct{} { return o.runDone() }

func (o *Outbox) runDone() chan struct{} {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.done == nil {
		o.done = make(chan struct{})
	}
	return o.done
}

// Err is why the outbox broke, or nil.
func (o *Outbox) Err() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.err
}
