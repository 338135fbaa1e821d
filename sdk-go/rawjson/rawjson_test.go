package rawjson

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestString(t *testing.T) {
	tests := []struct {
		in   string
		want string
		ok   bool
	}{
		{`"tools/call"`, "tools/call", true},
		{`""`, "", true},
		{`null`, "", true},
		{`"caf\u00e9 \"q\""`, `café "q"`, true},
		{`"a\/b"`, "a/b", true},
		{`12`, "", false},
		{`{"a":1}`, "", false},
		{`"`, "", false},
		{``, "", false},
	}
	for _, tt := range tests {
		got, ok := String([]byte(tt.in))
		if got != tt.want || ok != tt.ok {
			t.Errorf("String(%s) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestPutMemberQuotesNewNames(t *testing.T) {
	for _, key := range []string{"progressToken", "io.modelcontextprotocol/logLevel", `a"b`, "tab\there", "é"} {
		out, ok := PutMember([]byte(`{"x":1}`), key, []byte(`true`))
		if !ok {
			t.Fatalf("PutMember %q refused", key)
		}
		var m map[string]any
		if err := json.Unmarshal(out, &m); err != nil {
			t.Fatalf("PutMember %q: %s is not JSON: %v", key, out, err)
		}
		if m[key] != true || m["x"] != float64(1) {
			t.Errorf("PutMember %q gave %s", key, out)
		}
	}
}

// PutMembers makes in one copy what PutMember makes one edit at a time, and both what
// decoding, setting the members and encoding would.
func TestPutMembersAsPutMember(t *testing.T) {
	name := Edit{"name", []byte(`"echo"`)}
	meta := Edit{"_meta", []byte(`{"progressToken":"t"}`)}
	tests := []struct {
		obj   string
		edits []Edit
	}{
		{`{"name":"a.echo","arguments":{"name":"inner"}}`, []Edit{meta, name}},
		{`{"name":"a.echo","arguments":{},"_meta":{"x":1}}`, []Edit{meta, name}},
		{`{"_meta":{"x":1},"name":"a.echo"}`, []Edit{name, meta}},
		{`{ "arguments" : {} , "n\u0061me" : "a.echo" }`, []Edit{meta, name}},
		{`{}`, []Edit{meta, name}},
		{` { } `, []Edit{name}},
		{`{"a":1}`, nil},
		{`{"a":1}`, []Edit{{"a", []byte(`2`)}, {"b", []byte(`3`)}, {"c", []byte(`4`)}, {"d", []byte(`5`)}, {"e", []byte(`6`)}}},
	}
	for _, tt := range tests {
		want := []byte(tt.obj)
		for _, e := range tt.edits {
			var ok bool
			if want, ok = PutMember(want, e.Key, e.Value); !ok {
				t.Fatalf("PutMember(%s, %q) refused", want, e.Key)
			}
		}
		got, ok := PutMembers([]byte(tt.obj), tt.edits...)
		if !ok {
			t.Fatalf("PutMembers(%s) refused", tt.obj)
		}
		var g, w any
		if json.Unmarshal(got, &g) != nil || json.Unmarshal(want, &w) != nil || !reflect.DeepEqual(g, w) {
			t.Errorf("PutMembers(%s) = %s, want the members of %s", tt.obj, got, want)
		}
		var decoded map[string]any
		if err := json.Unmarshal([]byte(tt.obj), &decoded); err != nil {
			t.Fatal(err)
		}
		for _, e := range tt.edits {
			var v any
			if err := json.Unmarshal(e.Value, &v); err != nil {
				t.Fatal(err)
			}
			decoded[e.Key] = v
		}
		if !reflect.DeepEqual(g, any(decoded)) {
			t.Errorf("PutMembers(%s) = %s, want what decoding and setting give: %v", tt.obj, got, decoded)
		}
	}
	if _, ok := PutMembers([]byte(`[1]`), name); ok {
		t.Error("PutMembers edited an array")
	}
}

func TestAppendPutMembersAppendsWhatPutMembersReturns(t *testing.T) {
	name := Edit{"name", []byte(`"echo"`)}
	token := Edit{"progressToken", []byte(`"t"`)}
	for _, obj := range []string{`{"name":"a.echo","arguments":{"x":1}}`, `{}`, `{"_meta":{"a":1},"name":"b"}`} {
		want, _ := PutMembers([]byte(obj), name, token)
		for _, dst := range [][]byte{nil, []byte(`prefix:`), append(make([]byte, 0, 256), `roomy:`...)} {
			head := string(dst)
			got, ok := AppendPutMembers(dst, []byte(obj), name, token)
			if !ok || string(got) != head+string(want) {
				t.Errorf("AppendPutMembers(%q, %s) = %q, %v; want %q", head, obj, got, ok, head+string(want))
			}
		}
	}
	// What is edited may lie in the buffer written to, before its end: a value made in
	// the buffer, then the object it goes into.
	buf := AppendString(make([]byte, 0, 8), "tok")
	value := buf
	buf = append(buf, `{"a":1}`...)
	obj := buf[len(value):]
	got, ok := AppendPutMembers(buf, obj, Edit{"progressToken", value})
	if want := `"tok"{"a":1}{"progressToken":"tok","a":1}`; !ok || string(got) != want {
		t.Errorf("editing within the buffer gave %q, %v; want %q", got, ok, want)
	}
	if got, ok := AppendPutMembers([]byte(`kept`), []byte(`[1]`), name); ok || string(got) != "kept" {
		t.Errorf("AppendPutMembers of an array = %q, %v; want the buffer as it was and false", got, ok)
	}
}

func TestMembersAcrossEscapes(t *testing.T) {
	tests := []struct {
		obj  string
		want []string // name=value
	}{
		{`{"a":"x\\","b":1}`, []string{`a="x\\"`, `b=1`}},
		{`{"a":"x\"y","b":2}`, []string{`a="x\"y"`, `b=2`}},
		{`{"a":"\\\"","b":[{"c":"}"}]}`, []string{`a="\\\""`, `b=[{"c":"}"}]`}},
		{`{"q\"k":"v"}`, []string{`q"k="v"`}},
		{`{"a":"",  "b" : "\u0022" }`, []string{`a=""`, `b="\u0022"`}},
		{`{"a":"unterminated`, nil},
	}
	for _, tt := range tests {
		var got []string
		Members([]byte(tt.obj), func(name Name, value []byte) { got = append(got, name.String()+"="+string(value)) })
		if strings.Join(got, " ") != strings.Join(tt.want, " ") {
			t.Errorf("Members(%s) = %q, want %q", tt.obj, got, tt.want)
		}
	}
}

// FuzzMembers holds Members to what encoding/json reads from the same object: every member,
// the last of a repeated name winning, each value byte for byte.
func FuzzMembers(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `{"a":"x\\\"","b":[1,{"c":"]"}]}`, `{"n\u0061me":null,"name":true}`, `{ "a" : { } , "b" : "\\\\" }`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b := []byte(s)
		var want map[string]json.RawMessage
		if !utf8.Valid(b) || json.Unmarshal(b, &want) != nil || want == nil {
			return
		}
		got := map[string]json.RawMessage{}
		Members(b, func(name Name, value []byte) { got[name.String()] = value })
		if len(got) != len(want) {
			t.Fatalf("Members(%s) read %d members, encoding/json %d", s, len(got), len(want))
		}
		for k, v := range want {
			if string(got[k]) != string(v) {
				t.Fatalf("Members(%s): %q = %s, encoding/json %s", s, k, got[k], v)
			}
		}
	})
}

func TestStringIs(t *testing.T) {
	tests := []struct {
		v, s string
		want bool
	}{
		{`"echo"`, "echo", true},
		{`"echo"`, "echo2", false},
		{`"caf\u00e9"`, "café", true},
		{`"a\"b"`, `a"b`, true},
		{`null`, "", true},
		{``, "", true},
		{`""`, "", true},
		{`12`, "12", false},
	}
	for _, tt := range tests {
		if got := StringIs([]byte(tt.v), tt.s); got != tt.want {
			t.Errorf("StringIs(%s, %q) = %v, want %v", tt.v, tt.s, got, tt.want)
		}
	}
}

// BenchmarkMembers reads the members of what a relay reads on every call: the params of a
// tools/call (without and with a 2026-07-28 _meta), a tool's result, and params carrying
// 1 MiB of text (an image in base64) whose value is crossed unread.
func BenchmarkMembers(b *testing.B) {
	for _, tt := range []struct{ name, obj string }{
		{"call params", `{"name":"echo-go.echo","arguments":{"text":"bench"}}`},
		{"2026 call params", `{"name":"echo-go.echo","arguments":{"text":"bench"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
			`"io.modelcontextprotocol/clientCapabilities":{},"progressToken":17}}`},
		{"result", `{"content":[{"type":"text","text":"bench"}]}`},
		{"1MiB arguments", `{"name":"img.put","arguments":{"data":"` + strings.Repeat("iVBORw0KGgoAAAANSUhEUgAA", 1<<20/24) + `"}}`},
	} {
		obj := []byte(tt.obj)
		b.Run(tt.name, func(b *testing.B) {
			b.SetBytes(int64(len(obj)))
			for b.Loop() {
				n := 0
				Members(obj, func(Name, []byte) { n++ })
				if n == 0 {
					b.Fatal("no members")
				}
			}
		})
	}
}

// BenchmarkPutMembers makes a relay's edit of a call's params: the tool's name and the
// progress token in _meta.
func BenchmarkPutMembers(b *testing.B) {
	params := []byte(`{"name":"echo-go.echo","arguments":{"text":"bench"}}`)
	buf := make([]byte, 0, 256)
	name, meta := Edit{Key: "name", Value: []byte(`"echo"`)}, Edit{Key: "_meta", Value: []byte(`{"progressToken":"n1"}`)}
	for b.Loop() {
		if _, ok := AppendPutMembers(buf[:0], params, name, meta); !ok {
			b.Fatal("not edited")
		}
	}
}

// FuzzSkipString holds SkipString to the plain reading of the grammar, a byte at a time (a
// backslash takes the byte after it), for any bytes after an opening quote, and the name
// Members reads to one that knows exactly whether it holds an escape.
func FuzzSkipString(f *testing.F) {
	for _, s := range []string{`plain"`, `a long plain string of more than thirty-two bytes, then" "next"`, `esc\"aped quote after eight"`,
		`\\"`, `1234567\"`, `12345678"`, `1234567\\"`, `12345678\"x"`, `unterminated and long enough to go past the first words`, `\`, `ends in a backslash\`,
		`a string of forty bytes and more, then \\\\\" and " more`, `exactly8"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, s []byte) {
		b := append([]byte{'"'}, s...)
		want := -1
		for j := 1; j < len(b); j++ {
			if b[j] == '\\' {
				j++
			} else if b[j] == '"' {
				want = j + 1
				break
			}
		}
		if got := SkipString(b, 0); got != want {
			t.Fatalf("SkipString(%q) = %d, want %d", b, got, want)
		}
		if got, _ := skipString(b, 0); got != want {
			t.Fatalf("skipString(%q) = %d, want %d", b, got, want)
		}
		if want < 0 {
			return
		}
		obj := append(append(append([]byte{'{'}, b[:want]...), ":1"...), '}')
		Members(obj, func(name Name, _ []byte) {
			if w := NameOf(b[1 : want-1]); string(name.raw) != string(w.raw) || name.escaped != w.escaped {
				t.Fatalf("Members read the name %q as %+v, want %+v", b[:want], name, w)
			}
		})
	})
}
