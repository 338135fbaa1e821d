package cluster

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
)

// hAuth signs a message with the cluster key: "<node> <stream> <seq> <unix ms> <mac>".
const hAuth = "Tn-Auth"

// MinKeyBytes is the shortest cluster key accepted.
const MinKeyBytes = 32

// ReadKey reads a cluster key from path: its bytes, white space around them trimmed. A key
// must be at least MinKeyBytes long; `head -c 32 /dev/urandom | base64 > FILE` makes one.
// A file others may read is accepted with a warning (warn is called with it).
func ReadKey(path string, warn func(string)) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("cluster key: %w", err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cluster key: %w", err)
	}
	key := bytes.TrimSpace(b)
	if len(key) < MinKeyBytes {
		return nil, fmt.Errorf("cluster key %s: %d bytes, want at least %d (make one with: head -c 32 /dev/urandom | base64 > %s)", path, len(key), MinKeyBytes, path)
	}
	if fi.Mode().Perm()&0o077 != 0 && warn != nil {
		warn(fmt.Sprintf("cluster key %s can be read by other users (mode %v): chmod 600 it", path, fi.Mode().Perm()))
	}
	return key, nil
}

// keyring signs what this node sends and checks what it receives. Without a key nothing is
// signed and every message is taken; the node a message names is then its own word.
type keyring struct {
	key    []byte
	node   string
	window time.Duration // how old (or how far ahead) a signed message may be
	macs   sync.Pool     // of HMACs with the key, to be reset
}

// stream is one connection's messages, signed in the order they go out: sequence numbers
// rise on the wire, so that a receiver can refuse one it has had before.
type stream struct {
	k  *keyring
	nc *nats.Conn
	id string // random per connection and process

	mu  sync.Mutex
	seq uint64
}

func newStream(k *keyring, nc *nats.Conn) *stream {
	var r [9]byte
	_, _ = rand.Read(r[:])
	return &stream{k: k, nc: nc, id: base64.RawURLEncoding.EncodeToString(r[:])}
}

// publish signs m (when there is a key) and sends it.
func (s *stream) publish(m *nats.Msg) error {
	if s.k.key == nil {
		return s.nc.PublishMsg(m)
	}
	if m.Header == nil {
		m.Header = nats.Header{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	s.k.seal(m, s.id, s.seq, time.Now())
	return s.nc.PublishMsg(m)
}

// seal signs m as message seq of stream, sent at.
func (k *keyring) seal(m *nats.Msg, stream string, seq uint64, at time.Time) {
	ms := at.UnixMilli()
	mac := k.mac(m, k.node, stream, seq, ms)
	m.Header.Set(hAuth, k.node+" "+stream+" "+strconv.FormatUint(seq, 10)+" "+strconv.FormatInt(ms, 10)+" "+base64.RawURLEncoding.EncodeToString(mac))
}

// mac sums up everything a message says: who signed it and when, where it goes, its
// headers and its body, each with its length so that no two messages sum alike.
func (k *keyring) mac(m *nats.Msg, node, stream string, seq uint64, ms int64) []byte {
	h, _ := k.macs.Get().(hash.Hash)
	if h == nil {
		h = hmac.New(sha256.New, k.key)
	}
	defer func() { h.Reset(); k.macs.Put(h) }()
	field := func(b []byte, v string) []byte {
		return append(binary.BigEndian.AppendUint64(b, uint64(len(v))), v...)
	}
	b := make([]byte, 0, 256)
	b = field(b, "toolnode cluster v1")
	b = field(b, node)
	b = field(b, stream)
	b = binary.BigEndian.AppendUint64(b, seq)
	b = binary.BigEndian.AppendUint64(b, uint64(ms))
	b = field(b, m.Subject)
	b = field(b, m.Reply)
	keys := make([]string, 0, len(m.Header))
	for key := range m.Header {
		if key != hAuth {
			keys = append(keys, key)
		}
	}
	sort.Strings(keys)
	b = binary.BigEndian.AppendUint64(b, uint64(len(keys)))
	for _, key := range keys {
		b = field(b, key)
		b = binary.BigEndian.AppendUint64(b, uint64(len(m.Header[key])))
		for _, v := range m.Header[key] {
			b = field(b, v)
		}
	}
	b = binary.BigEndian.AppendUint64(b, uint64(len(m.Data)))
	h.Write(b)
	h.Write(m.Data)
	return h.Sum(nil)
}

// Reasons a signed message is refused.
var (
	errUnsigned = errors.New("not signed with the cluster key")
	errForged   = errors.New("its signature does not match the cluster key")
	errStale    = errors.New("signed too long ago, or too far ahead, for this node's clock")
	errReplayed = errors.New("had before: a replay")
	errImposter = errors.New("names a node other than the one that signed it")
)

// check returns the node that signed m, or why m is refused: unsigned, forged, too old,
// already received on g, or naming (in Tn-Node or Tn-From) another node than its signer.
// Without a key every message passes, and the node is "". g may be nil for a message that
// cannot be had twice (an answer on a subscription of its own).
func (k *keyring) check(m *nats.Msg, g *guard) (string, error) {
	if k.key == nil {
		return "", nil
	}
	f := strings.Fields(m.Header.Get(hAuth))
	if len(f) != 5 {
		return "", errUnsigned
	}
	node, stream := f[0], f[1]
	seq, err1 := strconv.ParseUint(f[2], 10, 64)
	ms, err2 := strconv.ParseInt(f[3], 10, 64)
	mac, err3 := base64.RawURLEncoding.DecodeString(f[4])
	if err1 != nil || err2 != nil || err3 != nil {
		return "", errUnsigned
	}
	if !hmac.Equal(mac, k.mac(m, node, stream, seq, ms)) {
		return "", errForged
	}
	now := time.Now()
	at := time.UnixMilli(ms)
	if at.Before(now.Add(-k.window)) || at.After(now.Add(k.window)) {
		return node, errStale
	}
	for _, h := range []string{hNode, hFrom} {
		if v := m.Header.Get(h); v != "" && v != node {
			return node, errImposter
		}
	}
	if g != nil && !g.first(node+" "+stream, seq, now, k.window) {
		return node, errReplayed
	}
	return node, nil
}

// maxStreams bounds the senders one guard remembers at once.
const maxStreams = 4096

// guard remembers, for one subscription, the last sequence number of each sender's stream
// heard in the last window: a message of a stream at or below it was had before. A stream
// unheard for a window is forgotten, since its old messages are refused as too old.
type guard struct {
	mu   sync.Mutex
	last map[string]heard
}

type heard struct {
	seq uint64
	at  time.Time
}

// first reports whether seq is new on stream, and remembers it.
func (g *guard) first(stream string, seq uint64, now time.Time, window time.Duration) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.last == nil {
		g.last = map[string]heard{}
	}
	h, ok := g.last[stream]
	if ok && seq <= h.seq {
		return false
	}
	if !ok && len(g.last) >= 64 {
		for s, h := range g.last {
			if now.Sub(h.at) > window {
				delete(g.last, s)
			}
		}
		if len(g.last) >= maxStreams {
			return false
		}
	}
	g.last[stream] = heard{seq: seq, at: now}
	return true
}

// Derive makes a key for one purpose from the cluster key, so that the cluster key itself
// signs nothing but the cluster's messages: HMAC-SHA256 of the purpose under it.
func Derive(key []byte, purpose string) []byte {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(purpose))
	return mac.Sum(nil)
}
