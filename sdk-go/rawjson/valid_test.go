package rawjson

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestValid(t *testing.T) {
	deep := strings.Repeat("[", 5) + strings.Repeat("]", 5)
	for _, tt := range []struct {
		in    string
		depth int
		want  bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a\"b\\c\u00e9\/"}}}`, 10, true},
		{` [ 1 , -0.5e+3 , true , false , null , "" , { } , [ ] ] `, 10, true},
		{`0`, 0, true},
		{`"x"`, 0, true},
		{`{}`, 0, false},
		{deep, 5, true},
		{deep, 4, false},
		{`{"a":[{"b":[]}]}`, 4, true},
		{`{"a":[{"b":[]}]}`, 3, false},
		{``, 10, false},
		{` `, 10, false},
		{`{"a":1,}`, 10, false},
		{`[1,]`, 10, false},
		{`[,1]`, 10, false},
		{`{"a" 1}`, 10, false},
		{`{a:1}`, 10, false},
		{`{"a":1}}`, 10, false},
		{`{"a":1} x`, 10, false},
		{`[1 2]`, 10, false},
		{`01`, 10, false},
		{`1.`, 10, false},
		{`.5`, 10, false},
		{`1e`, 10, false},
		{`-`, 10, false},
		{`+1`, 10, false},
		{`tru`, 10, false},
		{`truex`, 10, false},
		{`"\x"`, 10, false},
		{`"\u12g4"`, 10, false},
		{`"\u123"`, 10, false},
		{"\"a\tb\"", 10, false},
		{`"abc`, 10, false},
		{`"abc\"`, 10, false},
		{`[`, 10, false},
		{`{"a":`, 10, false},
		{"\"\xff\"", 10, true}, // encoding/json does not check UTF-8 either
	} {
		if got := Valid([]byte(tt.in), tt.depth); got != tt.want {
			t.Errorf("Valid(%q, %d) = %v, want %v", tt.in, tt.depth, got, tt.want)
		}
	}
}

// FuzzValid holds Valid to encoding/json: a text is valid exactly when json.Valid says so
// and it nests no deeper than the limit.
func FuzzValid(f *testing.F) {
	for _, s := range []string{`{"a":[1,{"b":null}],"c":"\u0041\n"}`, `[-0.1e-5,true,false]`, `{"a":1,}`, `"\ud800"`, `[[[[]]]]`, ` 1 `, `01`, `{"":{}}`} {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, s string, limit int) {
		limit = max(limit%8, 0)
		b := []byte(s)
		want := json.Valid(b) && nesting(t, b) <= limit
		if got := Valid(b, limit); got != want {
			t.Fatalf("Valid(%q, %d) = %v, encoding/json says %v", s, limit, got, want)
		}
	})
}

func BenchmarkValid(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
		`"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"debug","progressToken":"tn-B-NM6fFS-1"},"name":"greet","arguments":{"name":"Ada"}}}`)
	b.Run("rawjson.Valid", func(b *testing.B) {
		b.SetBytes(int64(len(line)))
		for b.Loop() {
			Valid(line, 1000)
		}
	})
	b.Run("json.Valid", func(b *testing.B) {
		b.SetBytes(int64(len(line)))
		for b.Loop() {
			json.Valid(line)
		}
	})
}
