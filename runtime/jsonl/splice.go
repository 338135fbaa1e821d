package jsonl

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Splicing keeps payloads out of jsonrpc2's hands. jsonrpc2 v0.2.3 decodes every request's
// params into a map and every response's result into an interface{} before handing them
// over as raw JSON, and re-validates raw JSON when it encodes: for a relay that only passes
// payloads along, that is most of the work per message (and for a 10 MiB result, seconds).
//
// So the stream cuts the value of one member (Options.Splice: "params" or "result") out of
// each message it reads, hands jsonrpc2 a short placeholder string instead, and gives the
// bytes back to whoever calls Take with the placeholder. The other way, Hold turns a payload
// into a placeholder that WriteObject replaces by the payload as it writes. Placeholders
// carry a random nonce of the stream, so that no peer can forge one.
type splicer struct {
	prefix    []byte // `"\u0000tn-<nonce>-`
	seq       atomic.Uint64
	mu        sync.Mutex
	vals      map[string]held // by placeholder
	lastSweep time.Time
}

type held struct {
	payload []byte
	at      time.Time
}

// Payloads nobody takes (the answer to a call its caller gave up on) are dropped after
// heldTTL, checked when more than sweepAbove are held.
const (
	heldTTL    = 10 * time.Minute
	sweepAbove = 1024
)

func newSplicer() *splicer {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return &splicer{prefix: []byte(`"\u0000tn-` + hex.EncodeToString(b) + "-"), vals: map[string]held{}}
}

func (s *splicer) hold(payload []byte) []byte {
	ph := strconv.AppendUint(append([]byte(nil), s.prefix...), s.seq.Add(1), 10)
	ph = append(ph, '"')
	now := time.Now()
	s.mu.Lock()
	s.vals[string(ph)] = held{payload: payload, at: now}
	if len(s.vals) > sweepAbove && now.Sub(s.lastSweep) > time.Minute {
		s.lastSweep = now
		for k, v := range s.vals {
			if now.Sub(v.at) > heldTTL {
				delete(s.vals, k)
			}
		}
	}
	s.mu.Unlock()
	return ph
}

func (s *splicer) take(ph []byte) ([]byte, bool) {
	if !bytes.HasPrefix(ph, s.prefix) {
		return nil, false
	}
	s.mu.Lock()
	v, ok := s.vals[string(ph)]
	delete(s.vals, string(ph))
	s.mu.Unlock()
	return v.payload, ok
}

// splice replaces every placeholder in b by its payload.
func (s *splicer) splice(b []byte) []byte {
	i := bytes.Index(b, s.prefix)
	if i < 0 {
		return b
	}
	var out []byte
	for i >= 0 {
		end := bytes.IndexByte(b[i+len(s.prefix):], '"')
		if end < 0 {
			break
		}
		end += i + len(s.prefix) + 1
		payload, ok := s.take(b[i:end])
		if !ok {
			out = append(out, b[:end]...)
		} else {
			out = append(append(out, b[:i]...), payload...)
		}
		b = b[end:]
		i = bytes.Index(b, s.prefix)
	}
	return append(out, b...)
}

// memberSpan finds the value of the top-level member key of the JSON object in line and
// returns its bounds. It does not validate: the caller checks the value with json.Valid.
func memberSpan(line []byte, key string) (int, int, bool) {
	_, start, end, ok := memberBounds(line, key)
	return start, end, ok
}

// memberBounds is memberSpan that also returns where the member's key starts.
func memberBounds(line []byte, key string) (int, int, int, bool) {
	i := skipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return 0, 0, 0, false
	}
	i++
	for {
		i = skipSpace(line, i)
		if i >= len(line) || line[i] != '"' {
			return 0, 0, 0, false
		}
		kStart := i
		kEnd := skipString(line, i)
		if kEnd < 0 {
			return 0, 0, 0, false
		}
		k := line[i+1 : kEnd-1]
		i = skipSpace(line, kEnd)
		if i >= len(line) || line[i] != ':' {
			return 0, 0, 0, false
		}
		i = skipSpace(line, i+1)
		vEnd := skipValue(line, i)
		if vEnd < 0 {
			return 0, 0, 0, false
		}
		if string(k) == key {
			return kStart, i, vEnd, true
		}
		i = skipSpace(line, vEnd)
		if i >= len(line) || line[i] != ',' {
			return 0, 0, 0, false
		}
		i++
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] == '"', or -1.
func skipString(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// skipValue returns the index after the JSON value starting at b[i], or -1.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = skipString(b, j)
				if j < 0 {
					return -1
				}
				j--
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\r' && b[j] != '\n' {
		j++
	}
	if j == i {
		return -1
	}
	return j
}

// Member returns the raw value of the top-level member key of the JSON object obj, without
// decoding the rest, or false when obj has no such member.
func Member(obj []byte, key string) ([]byte, bool) {
	start, end, ok := memberSpan(obj, key)
	if !ok {
		return nil, false
	}
	return obj[start:end], true
}

// SetMember returns obj with the value of its top-level member key replaced by value (which
// must be valid JSON), or false when obj has no such member. The rest of obj is kept byte
// for byte.
func SetMember(obj []byte, key string, value []byte) ([]byte, bool) {
	start, end, ok := memberSpan(obj, key)
	if !ok {
		return nil, false
	}
	out := make([]byte, 0, len(obj)-(end-start)+len(value))
	return append(append(append(out, obj[:start]...), value...), obj[end:]...), true
}

// PutMember returns obj with its top-level member key set to value (valid JSON): replaced
// when present, else added first. ok is false when obj is not a JSON object.
func PutMember(obj []byte, key string, value []byte) ([]byte, bool) {
	if out, ok := SetMember(obj, key, value); ok {
		return out, true
	}
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return nil, false
	}
	quoted, _ := json.Marshal(key)
	out := make([]byte, 0, len(obj)+len(quoted)+len(value)+2)
	out = append(append(append(append(out, obj[:i+1]...), quoted...), ':'), value...)
	if j := skipSpace(obj, i+1); j < len(obj) && obj[j] != '}' {
		out = append(out, ',')
	}
	return append(out, obj[i+1:]...), true
}

// DeleteMember returns obj without its top-level member key (and the comma that went with
// it); obj itself when it has no such member.
func DeleteMember(obj []byte, key string) []byte {
	kStart, _, vEnd, ok := memberBounds(obj, key)
	if !ok {
		return obj
	}
	end := skipSpace(obj, vEnd)
	start := kStart
	if end < len(obj) && obj[end] == ',' {
		end = skipSpace(obj, end+1) // a member follows: take our comma
	} else {
		// The last member: take the comma before it, if any.
		j := start - 1
		for j >= 0 && (obj[j] == ' ' || obj[j] == '\t' || obj[j] == '\n' || obj[j] == '\r') {
			j--
		}
		if j >= 0 && obj[j] == ',' {
			start = j
		}
		end = vEnd
	}
	out := make([]byte, 0, len(obj)-(end-start))
	return append(append(out, obj[:start]...), obj[end:]...)
}
