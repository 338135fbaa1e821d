package jsonl

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
)

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

func TestMemberSpan(t *testing.T) {
	tests := []struct {
		line, key, want string
	}{
		{`{"jsonrpc":"2.0","id":1,"result":{"a":[1,"}"]}}`, "result", `{"a":[1,"}"]}`},
		{` { "id" : 2 , "params" : "x\"y" } `, "params", `"x\"y"`},
		{`{"params":[{"b":"]"}],"id":3}`, "params", `[{"b":"]"}]`},
		{`{"result":null}`, "result", `null`},
		{`{"result":12.5e3}`, "result", `12.5e3`},
		{`{"id":1}`, "result", ""},
		{`[1,2]`, "result", ""},
		{`{"result":{"open"`, "result", ""},
	}
	for _, tt := range tests {
		start, end, ok := memberSpan([]byte(tt.line), tt.key)
		got := ""
		if ok {
			got = tt.line[start:end]
		}
		if got != tt.want {
			t.Errorf("memberSpan(%s, %q) = %q, want %q", tt.line, tt.key, got, tt.want)
		}
	}
}

func TestSpliceRoundTrip(t *testing.T) {
	payload := `{"content":[{"type":"text","text":"` + strings.Repeat("é<>&", 1000) + `"}]}`
	in := `{"jsonrpc":"2.0","id":7,"result":` + payload + "}\n"
	var out bytes.Buffer
	s := New(strings.NewReader(in), &out, nil, Options{Splice: []string{"result"}})
	var msg struct {
		ID     int             `json:"id"`
		Result json.RawMessage `json:"result"`
	}
	if err := s.ReadObject(&msg); err != nil {
		t.Fatal(err)
	}
	if len(msg.Result) > 60 {
		t.Fatalf("the decoder saw the whole payload (%d bytes)", len(msg.Result))
	}
	got := s.Take(msg.Result)
	if string(got) != payload {
		t.Fatalf("Take gave %d bytes, not the payload", len(got))
	}
	// Written back through a placeholder, byte for byte, with no escaping of <>&.
	ph := s.Hold(got)
	if err := s.WriteObject(map[string]any{"id": 7, "result": ph}); err != nil {
		t.Fatal(err)
	}
	if want := `{"id":7,"result":` + payload + "}\n"; out.String() != want {
		t.Errorf("wrote %.80q…, want the payload spliced in", out.String())
	}
}

func TestPlaceholdersCannotBeForged(t *testing.T) {
	var out bytes.Buffer
	s := New(strings.NewReader(""), &out, nil, Options{})
	secret := s.Hold(json.RawMessage(`"secret"`))
	// A peer can only guess at the nonce; a string that looks like a placeholder passes
	// through as text.
	forged := strings.Replace(string(secret), string(secret[12:20]), "00000000", 1)
	if err := s.WriteObject(map[string]any{"text": json.RawMessage(forged)}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "secret") {
		t.Errorf("a forged placeholder was replaced: %s", out.String())
	}
	if got := s.Take(secret); string(got) != `"secret"` {
		t.Errorf("the real placeholder lost its payload: %s", got)
	}
}

func TestPutMember(t *testing.T) {
	tests := []struct{ obj, key, val, want string }{
		{`{}`, "a", `1`, `{"a":1}`},
		{` { "b" : 2 }`, "a", `1`, ` {"a":1, "b" : 2 }`},
		{`{"a":{"x":[1]},"b":2}`, "a", `"y"`, `{"a":"y","b":2}`},
	}
	for _, tt := range tests {
		got, ok := PutMember([]byte(tt.obj), tt.key, []byte(tt.val))
		if !ok || string(got) != tt.want || !json.Valid(got) {
			t.Errorf("PutMember(%s, %s, %s) = %s, %v; want %s", tt.obj, tt.key, tt.val, got, ok, tt.want)
		}
	}
	if _, ok := PutMember([]byte(`[1]`), "a", []byte(`1`)); ok {
		t.Error("PutMember accepted an array")
	}
}

func TestDeleteMember(t *testing.T) {
	tests := []struct{ obj, key, want string }{
		{`{"a":1,"b":2}`, "a", `{"b":2}`},
		{`{"a":1,"b":2}`, "b", `{"a":1}`},
		{`{"a":1}`, "a", `{}`},
		{`{ "a" : [1,{"b":2}] , "c" : 3 }`, "a", `{ "c" : 3 }`},
		{`{"a":1}`, "z", `{"a":1}`},
	}
	for _, tt := range tests {
		got := DeleteMember([]byte(tt.obj), tt.key)
		if string(got) != tt.want || !json.Valid(got) {
			t.Errorf("DeleteMember(%s, %s) = %s, want %s", tt.obj, tt.key, got, tt.want)
		}
	}
}

func TestTryWriteLineOnlyWhenThePipeHasRoom(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	s := New(strings.NewReader(""), w, nil, Options{})
	line := bytes.Repeat([]byte("x"), 1000)
	wrote := 0
	for range 1000 {
		ok, err := s.TryWriteLine(line)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		wrote++
	}
	// Nobody reads: the pipe fills, and TryWriteLine says no rather than block.
	if wrote == 0 || wrote >= 1000 {
		t.Fatalf("wrote %d lines into an unread pipe", wrote)
	}
	buf := make([]byte, 64<<10)
	for drained := 0; drained < wrote*1001; {
		n, _ := r.Read(buf)
		drained += n
	}
	if ok, _ := s.TryWriteLine(line); !ok {
		t.Error("a drained pipe has no room")
	}
	if ok, _ := New(strings.NewReader(""), io.Discard, nil, Options{}).TryWriteLine(line); ok {
		t.Error("TryWriteLine wrote to a writer that is not a pipe")
	}
}

func TestFastLane(t *testing.T) {
	pr, pw := io.Pipe()
	s := New(pr, io.Discard, nil, Options{Splice: []string{"result"}})
	got := make(chan Answer, 4)
	if !s.Expect(7, func(a Answer) { got <- a }) || !s.Expect(8, func(a Answer) { got <- a }) || !s.Expect(9, func(a Answer) { got <- a }) {
		t.Fatal("Expect refused on an open stream")
	}
	if !s.Forget(9) || s.Forget(9) {
		t.Fatal("Forget should take a waiting call exactly once")
	}
	go func() {
		// A request from the peer that happens to use id 7 is not an answer; the answers
		// to 7 and 8 take the lane; a notification goes on to the decoder.
		io.WriteString(pw, `{"jsonrpc":"2.0","id":7,"method":"roots/list"}`+"\n")
		io.WriteString(pw, `{"jsonrpc":"2.0","id":8,"error":{"code":-32602,"message":"no"}}`+"\n")
		io.WriteString(pw, `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hi"}]}}`+"\n")
		io.WriteString(pw, `{"jsonrpc":"2.0","method":"notifications/progress","params":{}}`+"\n")
		pw.Close()
	}()
	var methods []string
	for {
		var m map[string]any
		if err := s.ReadObject(&m); err != nil {
			break
		}
		methods = append(methods, m["method"].(string))
	}
	if strings.Join(methods, ",") != "roots/list,notifications/progress" {
		t.Errorf("decoded %v; want the request and the notification only", methods)
	}
	a8, a7 := <-got, <-got
	if string(a8.Error) != `{"code":-32602,"message":"no"}` || string(a7.Result) != `{"content":[{"type":"text","text":"hi"}]}` {
		t.Errorf("answers: %+v %+v", a8, a7)
	}
	// After the stream ends, nothing more is taken and late registrations are refused.
	if s.Expect(10, func(Answer) {}) {
		t.Error("Expect accepted a call on an ended stream")
	}
}

func TestFastLaneFailsWaitingCallsWhenTheStreamEnds(t *testing.T) {
	s := New(strings.NewReader(""), io.Discard, nil, Options{})
	got := make(chan Answer, 1)
	s.Expect(1, func(a Answer) { got <- a })
	var v map[string]any
	if err := s.ReadObject(&v); err != io.EOF {
		t.Fatalf("read: %v", err)
	}
	if a := <-got; !errors.Is(a.Err, ErrClosed) {
		t.Errorf("a call waiting when the stream ended got %+v", a)
	}
}

func TestJunkLeavesNoPayloadHeld(t *testing.T) {
	// Valid JSON that is not a message: the payload cut out of it must not stay held.
	s := New(strings.NewReader(`{"result":{"big":"payload"},"id":{"not":"an id"}}`+"\n"), io.Discard, nil, Options{Splice: []string{"result"}})
	var v struct {
		ID int `json:"id"`
	}
	if err := s.ReadObject(&v); err != io.EOF {
		t.Fatalf("read: %v", err)
	}
	if n := len(s.sp.vals); n != 0 {
		t.Errorf("%d payloads still held after a junk line", n)
	}
}
