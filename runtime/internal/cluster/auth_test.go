package cluster

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// A message signed with the cluster key passes once; changed, unsigned, signed with
// another key, too old, had before or naming another node than its signer, it does not.
func TestSignedMessagesAreChecked(t *testing.T) {
	key := []byte("the cluster's own key, 32 bytes or more")
	b := &keyring{key: key, node: "b", window: time.Minute}
	a := &keyring{key: key, node: "a", window: time.Minute}
	sign := func(k *keyring, m *nats.Msg, seq uint64, at time.Time) *nats.Msg {
		k.seal(m, "s1", seq, at)
		return m
	}
	msg := func() *nats.Msg {
		return &nats.Msg{Subject: "toolnode.t.node.a", Reply: "r", Header: nats.Header{hKey: {"k"}}, Data: []byte(`{"jsonrpc":"2.0"}`)}
	}
	now := time.Now()
	for _, tc := range []struct {
		name string
		m    func(g *guard) *nats.Msg
		want error
	}{
		{"signed", func(*guard) *nats.Msg { return sign(b, msg(), 1, now) }, nil},
		{"unsigned", func(*guard) *nats.Msg { return msg() }, errUnsigned},
		{"a body changed", func(*guard) *nats.Msg { m := sign(b, msg(), 1, now); m.Data = []byte("{}"); return m }, errForged},
		{"a header changed", func(*guard) *nats.Msg { m := sign(b, msg(), 1, now); m.Header.Set(hKey, "other"); return m }, errForged},
		{"a header added", func(*guard) *nats.Msg { m := sign(b, msg(), 1, now); m.Header.Set(hKind, "ping"); return m }, errForged},
		{"sent elsewhere", func(*guard) *nats.Msg { m := sign(b, msg(), 1, now); m.Subject = "toolnode.t.node.c"; return m }, errForged},
		{"another reply subject", func(*guard) *nats.Msg { m := sign(b, msg(), 1, now); m.Reply = "s"; return m }, errForged},
		{"another key", func(*guard) *nats.Msg {
			return sign(&keyring{key: []byte("not the cluster's key, but as long as one"), node: "b"}, msg(), 1, now)
		}, errForged},
		{"too old", func(*guard) *nats.Msg { return sign(b, msg(), 1, now.Add(-2*time.Minute)) }, errStale},
		{"too far ahead", func(*guard) *nats.Msg { return sign(b, msg(), 1, now.Add(2*time.Minute)) }, errStale},
		{"had before", func(g *guard) *nats.Msg {
			m := sign(b, msg(), 7, now)
			if _, err := a.check(m, g); err != nil {
				t.Fatal(err)
			}
			return sign(b, msg(), 7, now)
		}, errReplayed},
		{"an earlier one after a later one", func(g *guard) *nats.Msg {
			if _, err := a.check(sign(b, msg(), 8, now), g); err != nil {
				t.Fatal(err)
			}
			return sign(b, msg(), 3, now)
		}, errReplayed},
		{"naming another node", func(*guard) *nats.Msg {
			m := msg()
			m.Header.Set(hNode, "c")
			return sign(b, m, 1, now)
		}, errImposter},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := &guard{}
			signer, err := a.check(tc.m(g), g)
			if !errors.Is(err, tc.want) {
				t.Fatalf("error %v, want %v", err, tc.want)
			}
			if err == nil && signer != "b" {
				t.Errorf("signed by %q, want b", signer)
			}
		})
	}
}

// The key file is read whole, trimmed; a short one is refused, one others may read is
// taken with a warning.
func TestReadKey(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string, mode os.FileMode) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
		return path
	}
	var warned []string
	warn := func(w string) { warned = append(warned, w) }
	key, err := ReadKey(write("ok", "  "+strings.Repeat("k", 32)+"\n", 0o600), warn)
	if err != nil || string(key) != strings.Repeat("k", 32) || len(warned) != 0 {
		t.Errorf("key %q, %v, warnings %v", key, err, warned)
	}
	if _, err := ReadKey(write("short", strings.Repeat("k", 31), 0o600), warn); err == nil || !strings.Contains(err.Error(), "31 bytes, want at least 32") {
		t.Errorf("a short key: %v", err)
	}
	if _, err := ReadKey(write("open", strings.Repeat("k", 32), 0o644), warn); err != nil || len(warned) != 1 || !strings.Contains(warned[0], "chmod 600") {
		t.Errorf("a key others may read: %v, warnings %v", err, warned)
	}
	if _, err := ReadKey(filepath.Join(dir, "missing"), warn); err == nil {
		t.Error("a missing key file was taken")
	}
}

// BenchmarkSignAndCheck measures what the cluster key costs one message of a call.
func BenchmarkSignAndCheck(b *testing.B) {
	k := &keyring{key: []byte("the cluster's own key, 32 bytes or more"), node: "a", window: time.Minute}
	body := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"bench"}}}`)
	g := &guard{}
	b.ReportAllocs()
	for i := range b.N {
		m := &nats.Msg{Subject: "toolnode.t.bundle.echo", Reply: "toolnode.t.reply.a.x.1", Header: nats.Header{hFrom: {"a"}}, Data: body}
		k.seal(m, "s", uint64(i+1), time.Now())
		if _, err := k.check(m, g); err != nil {
			b.Fatal(err)
		}
	}
}
