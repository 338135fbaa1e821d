package jsonl

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
)

// The fast lane carries requests past jsonrpc2 when the caller wants a callback rather than
// a goroutine waiting on the answer. A relay spends most of a call's time handing it from
// goroutine to goroutine: jsonrpc2 answers a call through a channel to the goroutine that
// waits in Wait, which then writes it on. With Expect, the answer is handed to a function on
// the reading goroutine itself, which can write it straight on to the client; the message
// never reaches jsonrpc2, whose pending calls know nothing of it.
//
// Only answers whose numeric id was registered with Expect take the lane, so ids must come
// from the same counter as those given to jsonrpc2 (the upstream client's ReserveID).

// Answer is what Expect's function is given: the raw result, or the raw error object, or,
// when the stream ended first, Err.
type Answer struct {
	Result json.RawMessage
	Error  json.RawMessage
	Err    error
}

// ErrClosed is the Answer.Err of calls whose stream ended before their answer.
var ErrClosed = errors.New("stream closed")

type lane struct {
	mu      sync.Mutex
	waiting map[uint64]func(Answer)
	count   atomic.Int64 // len(waiting), read without the lock on every line
	closed  bool
}

// Expect registers done for the answer to request id, and reports false when the stream has
// already ended. done runs on the reading goroutine and must not block.
func (s *Stream) Expect(id uint64, done func(Answer)) bool {
	s.fl.mu.Lock()
	defer s.fl.mu.Unlock()
	if s.fl.closed {
		return false
	}
	if s.fl.waiting == nil {
		s.fl.waiting = map[uint64]func(Answer){}
	}
	s.fl.waiting[id] = done
	s.fl.count.Add(1)
	return true
}

// Forget drops the registration of id and reports whether it was still waiting: whoever
// gets true owns the call's end (its answer will not be delivered).
func (s *Stream) Forget(id uint64) bool {
	return s.take(id) != nil
}

func (s *Stream) take(id uint64) func(Answer) {
	s.fl.mu.Lock()
	defer s.fl.mu.Unlock()
	done := s.fl.waiting[id]
	if done != nil {
		delete(s.fl.waiting, id)
		s.fl.count.Add(-1)
	}
	return done
}

// failAll ends every registered call with err, on a goroutine of its own: the functions
// may wait to learn how the peer ended.
func (s *Stream) failAll(err error) {
	s.fl.mu.Lock()
	waiting := s.fl.waiting
	s.fl.waiting, s.fl.closed = nil, true
	s.fl.count.Store(0)
	s.fl.mu.Unlock()
	if len(waiting) == 0 {
		return
	}
	go func() {
		for _, done := range waiting {
			done(Answer{Err: err})
		}
	}()
}

// deliver hands line to a registered function when it answers a fast-lane request, and
// reports whether it did.
func (s *Stream) deliver(line []byte) bool {
	if s.fl.count.Load() == 0 {
		return false
	}
	var id, result, errObj []byte
	isRequest := false
	Members(line, func(key string, value []byte) {
		switch key {
		case "id":
			id = value
		case "method":
			isRequest = true
		case "result":
			result = value
		case "error":
			errObj = value
		}
	})
	if isRequest || id == nil || (result == nil && errObj == nil) {
		return false
	}
	n, err := strconv.ParseUint(string(id), 10, 64)
	if err != nil {
		return false
	}
	done := s.take(n)
	if done == nil {
		return false
	}
	if result != nil && !json.Valid(result) || errObj != nil && !json.Valid(errObj) {
		done(Answer{Err: errors.New("the answer is not valid JSON")})
		return true
	}
	// The line's buffer is reused by the next read.
	done(Answer{Result: bytes.Clone(result), Error: bytes.Clone(errObj)})
	return true
}

// Members calls fn with each top-level member of the JSON object in line, in one pass.
func Members(line []byte, fn func(key string, value []byte)) {
	i := skipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return
	}
	i++
	for {
		i = skipSpace(line, i)
		if i >= len(line) || line[i] != '"' {
			return
		}
		kEnd := skipString(line, i)
		if kEnd < 0 {
			return
		}
		key := line[i+1 : kEnd-1]
		i = skipSpace(line, kEnd)
		if i >= len(line) || line[i] != ':' {
			return
		}
		i = skipSpace(line, i+1)
		vEnd := skipValue(line, i)
		if vEnd < 0 {
			return
		}
		fn(string(key), line[i:vEnd])
		i = skipSpace(line, vEnd)
		if i >= len(line) || line[i] != ',' {
			return
		}
		i++
	}
}
