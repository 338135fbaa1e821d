package jsonl

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

type nopCloser struct{ io.Writer }

func TestReadObjectSkipsJunk(t *testing.T) {
	big := strings.Repeat("y", 70<<20) // over 64 MiB: no scanner limit
	input := "banner from a library\n" +
		"\n" +
		`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n" +
		"{not json\n" +
		`{"jsonrpc":"2.0","id":2,"result":"` + big + `"}` + "\n" +
		"[1,2\n" +
		`{"jsonrpc":"2.0","method":"x"}` // last line without newline
	var junk []string
	s := New(strings.NewReader(input), io.Discard, nil, Options{OnJunk: func(line []byte, err error) {
		junk = append(junk, string(line))
	}})
	var got []map[string]any
	for {
		var v map[string]any
		if err := s.ReadObject(&v); err != nil {
			if err != io.EOF {
				t.Fatalf("read: %v", err)
			}
			break
		}
		got = append(got, v)
	}
	if len(got) != 3 {
		t.Fatalf("got %d messages, want 3", len(got))
	}
	if r, _ := got[1]["result"].(string); len(r) != len(big) {
		t.Errorf("big message: %d bytes of result, want %d", len(r), len(big))
	}
	if want := []string{"banner from a library", "{not json", "[1,2"}; strings.Join(junk, "|") != strings.Join(want, "|") {
		t.Errorf("junk %q, want %q", junk, want)
	}
}

func TestLineTooLong(t *testing.T) {
	input := strings.Repeat("z", 1000) + "\n" + `{"id":1}` + "\n"
	var errs []error
	s := New(strings.NewReader(input), io.Discard, nil, Options{MaxLine: 100, OnJunk: func(_ []byte, err error) { errs = append(errs, err) }})
	var v map[string]any
	if err := s.ReadObject(&v); err != nil {
		t.Fatal(err)
	}
	if len(errs) != 1 || !IsLineTooLong(errs[0]) {
		t.Fatalf("errors %v, want one line-too-long", errs)
	}
	if v["id"] != float64(1) {
		t.Errorf("read %v after the long line", v)
	}
}

func TestWriteObjectIsOneLine(t *testing.T) {
	var buf bytes.Buffer
	s := New(strings.NewReader(""), &buf, nil, Options{})
	if err := s.WriteObject(map[string]string{"text": "a\nb"}); err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); strings.Count(got, "\n") != 1 || !strings.HasSuffix(got, "\n") || !json.Valid([]byte(got)) {
		t.Errorf("wrote %q", got)
	}
}

func BenchmarkReadObject(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hello"}]}}` + "\n")
	data := bytes.Repeat(line, 1000)
	b.SetBytes(int64(len(line)))
	b.ResetTimer()
	for i := 0; i < b.N; {
		s := New(bytes.NewReader(data), io.Discard, nil, Options{})
		for j := 0; j < 1000 && i < b.N; j++ {
			var v json.RawMessage
			if err := s.ReadObject(&v); err != nil {
				b.Fatal(err)
			}
			i++
		}
	}
}
