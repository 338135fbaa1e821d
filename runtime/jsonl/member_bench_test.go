package jsonl

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// The messages the node edits on their way through: a client's tools/call, and a bundle's
// answer carrying 64 KiB of text.
var (
	callParams = []byte(`{"name":"go.greet","arguments":{"name":"Ada","times":3,"tags":["a","b"]},"_meta":{"progressToken":"p-17"}}`)
	bigAnswer  = []byte(`{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"` + strings.Repeat("0123456789abcdef", 4096) + `"}]},"id":42}`)
)

func BenchmarkMember(b *testing.B) {
	for _, tt := range []struct {
		name, key string
		obj       []byte
		want      string
	}{
		{"call/name", "name", callParams, `"go.greet"`},
		{"call/_meta", "_meta", callParams, `{"progressToken":"p-17"}`},
		{"answer64k/id", "id", bigAnswer, `42`},
	} {
		b.Run(tt.name, func(b *testing.B) {
			b.SetBytes(int64(len(tt.obj)))
			for b.Loop() {
				if v, ok := Member(tt.obj, tt.key); !ok || string(v) != tt.want {
					b.Fatalf("Member(%q) = %s, %v", tt.key, v, ok)
				}
			}
		})
	}
}

// BenchmarkSetMember replaces the tool name of a call, as the node does mapping an exposed
// name to the bundle's own, and a member of a large answer, which copies it whole.
func BenchmarkSetMember(b *testing.B) {
	for _, tt := range []struct {
		name, key string
		obj       []byte
	}{
		{"call/name", "name", callParams},
		{"answer64k/id", "id", bigAnswer},
	} {
		b.Run(tt.name, func(b *testing.B) {
			b.SetBytes(int64(len(tt.obj)))
			for b.Loop() {
				out, ok := SetMember(tt.obj, tt.key, []byte(`7`))
				if !ok || len(out) != len(tt.obj)-len(mustMember(b, tt.obj, tt.key))+1 {
					b.Fatalf("SetMember(%q) gave %d bytes, %v", tt.key, len(out), ok)
				}
			}
		})
	}
}

func mustMember(b *testing.B, obj []byte, key string) []byte {
	v, ok := Member(obj, key)
	if !ok {
		b.Fatalf("no %q", key)
	}
	return v
}

// BenchmarkPutDeleteMember adds a member to a call's _meta and takes it out again, as the
// node does remapping progress tokens and removing its routing key from bundles' messages.
func BenchmarkPutDeleteMember(b *testing.B) {
	meta := mustMember(b, callParams, "_meta")
	for b.Loop() {
		put, ok := PutMember(meta, "io.toolnode/request", []byte(`"c-1"`))
		if !ok {
			b.Fatal("PutMember failed")
		}
		if got := DeleteMember(put, "io.toolnode/request"); !bytes.Equal(got, meta) {
			b.Fatalf("DeleteMember gave %s", got)
		}
	}
}

// BenchmarkSpliceRelay reads a 64 KiB answer with its result spliced out, and writes it on
// with the result spliced back in: the whole cost of relaying it, minus the pipes.
func BenchmarkSpliceRelay(b *testing.B) {
	line := append(append([]byte(nil), bigAnswer...), '\n')
	data := bytes.Repeat(line, 100)
	b.SetBytes(int64(len(line)))
	var out countWriter
	for i := 0; i < b.N; {
		s := New(bytes.NewReader(data), &out, nil, Options{Splice: []string{"result"}})
		for j := 0; j < 100 && i < b.N; j++ {
			var msg struct {
				ID     int             `json:"id"`
				Result json.RawMessage `json:"result"`
			}
			if err := s.ReadObject(&msg); err != nil {
				b.Fatal(err)
			}
			if err := s.WriteObject(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "result": s.Hold(s.Take(msg.Result))}); err != nil {
				b.Fatal(err)
			}
			i++
		}
	}
	if out.n != int64(b.N)*int64(len(line)) {
		b.Fatalf("wrote %d bytes for %d answers of %d", out.n, b.N, len(line))
	}
}

type countWriter struct{ n int64 }

func (w *countWriter) Write(p []byte) (int, error) { w.n += int64(len(p)); return len(p), nil }
