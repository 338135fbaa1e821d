package rpc

import (
	"encoding/json"
	"errors"
	"sync"
)

// ErrClosed is the error of calls whose connection ended before their answer.
var ErrClosed = errors.New("connection closed")

// Done receives the outcome of a call, exactly once: the peer's result, or an error (the
// peer's *Error, or why the call ended without an answer). It runs on the goroutine that
// learned the outcome (for an answer, the one that read it, so that the answer can be
// written on without a hand-off) and must not block.
type Done func(result json.RawMessage, err error)

// Answerer receives the outcome of a call, as a Done does: exactly once, on the goroutine
// that learned it, without blocking. A value already made for the call can take it (a
// node's relay), sparing the function value a Done would be for every call.
type Answerer interface {
	Answer(result json.RawMessage, err error)
}

// Answer calls d: every Done is an Answerer.
func (d Done) Answer(result json.RawMessage, err error) { d(result, err) }

// Pending is the table of calls waiting for answers, under ids it hands out. The zero value
// is ready to use.
type Pending struct {
	mu     sync.Mutex
	next   uint64
	calls  map[uint64]Answerer
	closed error
}

// Add registers done and returns the id to send the call under; an error when the table is
// closed (done is then not called).
func (p *Pending) Add(done Done) (ID, error) { return p.AddTo(done) }

// AddTo is Add with the outcome given to a, which must not be nil.
func (p *Pending) AddTo(a Answerer) (ID, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed != nil {
		return ID{}, p.closed
	}
	if p.calls == nil {
		p.calls = map[uint64]Answerer{}
	}
	p.next++
	p.calls[p.next] = a
	return Int(p.next), nil
}

// Take removes the call id and returns where its outcome goes, or nil when it is not
// waiting (answered, taken before, or never sent). Whoever takes a call owns its end.
func (p *Pending) Take(id ID) Answerer {
	n, ok := id.Uint()
	if !ok {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	done := p.calls[n]
	if done != nil {
		delete(p.calls, n)
	}
	return done
}

// Deliver ends the call that response m answers and reports whether one was waiting. A
// second answer to the same id, or an answer to an id never sent, finds nobody.
func (p *Pending) Deliver(m *Message) bool {
	done := p.Take(m.ID)
	if done == nil {
		return false
	}
	if m.Error != nil {
		done.Answer(nil, m.Error)
	} else {
		done.Answer(m.Result, nil)
	}
	return true
}

// Only returns the id of the one call waiting, when exactly one is.
func (p *Pending) Only() (ID, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.calls) != 1 {
		return ID{}, false
	}
	for n := range p.calls {
		return Int(n), true
	}
	return ID{}, false
}

// Len is how many calls are waiting.
func (p *Pending) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.calls)
}

// Close ends every waiting call with err and refuses new ones with it. Later calls change
// nothing.
func (p *Pending) Close(err error) {
	p.mu.Lock()
	if p.closed != nil {
		p.mu.Unlock()
		return
	}
	p.closed = err
	calls := p.calls
	p.calls = nil
	p.mu.Unlock()
	for _, done := range calls {
		done.Answer(nil, err)
	}
}

// Await runs an asynchronous call and waits for its outcome.
func Await(call func(done Done)) (json.RawMessage, error) {
	type outcome struct {
		res json.RawMessage
		err error
	}
	ch := make(chan outcome, 1)
	call(func(res json.RawMessage, err error) { ch <- outcome{res, err} })
	o := <-ch
	return o.res, o.err
}
