package rpc

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolnode/toolnode/sdk-go/mcp"
)

func TestParse(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	cases := []struct {
		name   string
		line   string
		code   int64  // 0 when the message is valid
		id     string // the id Parse reads, valid or not
		method string
	}{
		{"request", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`, 0, "1", "tools/call"},
		{"string id", `{"jsonrpc":"2.0","id":"a-1","method":"ping"}`, 0, `"a-1"`, "ping"},
		{"escaped id is canonical", `{"jsonrpc":"2.0","id":"\u0061","method":"ping"}`, 0, `"a"`, "ping"},
		{"negative id", `{"jsonrpc":"2.0","id":-7,"method":"ping"}`, 0, "-7", "ping"},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, 0, "", "notifications/initialized"},
		{"null params", `{"jsonrpc":"2.0","id":2,"method":"ping","params":null}`, 0, "2", "ping"},
		{"result", `{"jsonrpc":"2.0","id":3,"result":{"ok":true}}`, 0, "3", ""},
		{"error", `{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"no"}}`, 0, "3", ""},
		{"null id error", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`, 0, "null", ""},
		{"whitespace", " {\"jsonrpc\" : \"2.0\" , \"id\" : 4 , \"method\" : \"ping\" } ", 0, "4", "ping"},
		{"depth at the limit", `{"jsonrpc":"2.0","id":5,"method":"x","params":{"a":` + deep(DefaultMaxDepth-2) + `}}`, 0, "5", "x"},

		{"not JSON", `hello`, mcp.CodeParseError, "", ""},
		{"truncated", `{"jsonrpc":"2.0","id":1,"method":"ping"`, mcp.CodeParseError, "1", ""},
		{"invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"x\",\"params\":{\"a\":\"\xff\"}}", mcp.CodeParseError, "6", ""},
		{"overlong UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"x\",\"params\":{\"a\":\"\xc0\xaf\"}}", mcp.CodeParseError, "6", ""},
		{"lone high surrogate", `{"jsonrpc":"2.0","id":7,"method":"x","params":{"a":"\ud800"}}`, mcp.CodeParseError, "7", ""},
		{"lone low surrogate", `{"jsonrpc":"2.0","id":7,"method":"x","params":{"a":"\udc00x"}}`, mcp.CodeParseError, "7", ""},
		{"control character", "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"x\",\"params\":{\"a\":\"\x01\"}}", mcp.CodeParseError, "8", ""},
		{"trailing data", `{"jsonrpc":"2.0","id":9,"method":"ping"} {}`, mcp.CodeParseError, "9", ""},
		{"bad number", `{"jsonrpc":"2.0","id":10,"method":"x","params":{"n":01}}`, mcp.CodeParseError, "10", ""},
		{"too deep", `{"jsonrpc":"2.0","id":11,"method":"x","params":{"a":` + deep(DefaultMaxDepth) + `}}`, mcp.CodeInvalidRequest, "11", ""},
		{"duplicate top-level", `{"jsonrpc":"2.0","id":12,"method":"x","method":"y"}`, mcp.CodeInvalidRequest, "12", ""},
		{"duplicate _meta", `{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"_meta":{},"name":"a","_meta":{"progressToken":1}}}`, mcp.CodeInvalidRequest, "13", ""},
		{"duplicate escaped", `{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"a","n\u0061me":"b"}}`, mcp.CodeInvalidRequest, "14", ""},
		{"duplicate escaped first", `{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"n\u0061me":"a","name":"b"}}`, mcp.CodeInvalidRequest, "14", ""},
		{"duplicate of an escaped name", `{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"n\u0061me":"a","nam\u0065s":"b","names":1}}`, mcp.CodeInvalidRequest, "14", ""},
		{"escaped names differ", `{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"n\u0061me":"a","nam\u0065s":"b"}}`, 0, "14", "tools/call"},
		{"duplicate long names", `{"jsonrpc":"2.0","id":14,"method":"x","params":{"a name longer than sixteen bytes":1,"a name longer than sixteen bytes":2}}`, mcp.CodeInvalidRequest, "14", ""},
		{"names that share a start", `{"jsonrpc":"2.0","id":14,"method":"x","params":{"a name longer than sixteen bytes":1,"a name longer than sixteen bytes!":2}}`, 0, "14", "x"},
		{"duplicate deep", `{"jsonrpc":"2.0","id":15,"method":"x","params":{"a":[{"k":1,"k":2}]}}`, mcp.CodeInvalidRequest, "15", ""},
		{"duplicate in a large object", `{"jsonrpc":"2.0","id":16,"method":"x","params":{` + manyKeys(40) + `,"k3":0}}`, mcp.CodeInvalidRequest, "16", ""},
		{"no jsonrpc", `{"id":17,"method":"ping"}`, mcp.CodeInvalidRequest, "17", ""},
		{"wrong jsonrpc", `{"jsonrpc":"1.0","id":17,"method":"ping"}`, mcp.CodeInvalidRequest, "17", ""},
		{"fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, mcp.CodeInvalidRequest, "", ""},
		{"object id", `{"jsonrpc":"2.0","id":{},"method":"ping"}`, mcp.CodeInvalidRequest, "", ""},
		{"null id request", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, mcp.CodeInvalidRequest, "null", ""},
		{"numeric method", `{"jsonrpc":"2.0","id":18,"method":5}`, mcp.CodeInvalidRequest, "18", ""},
		{"scalar params", `{"jsonrpc":"2.0","id":19,"method":"x","params":3}`, mcp.CodeInvalidRequest, "19", ""},
		{"result and error", `{"jsonrpc":"2.0","id":20,"result":{},"error":{"code":1,"message":"m"}}`, mcp.CodeInvalidRequest, "20", ""},
		{"response without id", `{"jsonrpc":"2.0","result":{}}`, mcp.CodeInvalidRequest, "", ""},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, mcp.CodeInvalidRequest, "", ""},
		{"array scalar", `3`, mcp.CodeInvalidRequest, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := Parse([]byte(c.line), Limits{})
			switch {
			case c.code == 0 && err != nil:
				t.Fatalf("Parse: %v", err)
			case c.code != 0 && err == nil:
				t.Fatalf("Parse accepted it: %+v", m)
			case c.code != 0 && err.Code != c.code:
				t.Fatalf("code %d (%s), want %d", err.Code, err.Message, c.code)
			}
			if c.code != 0 && !errors.Is(err, &Error{Code: c.code}) {
				t.Errorf("errors.Is does not match the code")
			}
			if got := m.ID.String(); got != c.id {
				t.Errorf("id %q, want %q", got, c.id)
			}
			if c.code == 0 && m.Method != c.method {
				t.Errorf("method %q, want %q", m.Method, c.method)
			}
		})
	}
}

func manyKeys(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"k` + string(rune('0'+i%10)) + string(rune('a'+i/10)) + `":0`)
	}
	return strings.ReplaceAll(b.String(), `"k3a"`, `"k3"`)
}

func TestParseKeepsPayloadsAsSent(t *testing.T) {
	line := `{"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{"z":1,"a":{"b":[1,2.50,"é"]}}}`
	m, err := Parse([]byte(line), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"z":1,"a":{"b":[1,2.50,"é"]}}`; string(m.Params) != want {
		t.Errorf("params %s, want %s byte for byte", m.Params, want)
	}
	if got := string(m.Append(nil)); got != line {
		t.Errorf("encoded\n%s\nwant\n%s", got, line)
	}
}

func TestSplitBatch(t *testing.T) {
	elems, err := SplitBatch([]byte(` [ {"jsonrpc":"2.0","id":1,"method":"ping"} , {"jsonrpc":"2.0","method":"x"} ] `), Limits{})
	if err != nil || len(elems) != 2 || string(elems[1]) != `{"jsonrpc":"2.0","method":"x"}` {
		t.Fatalf("SplitBatch = %q, %v", elems, err)
	}
	if _, err := SplitBatch([]byte(`[{"a":1,"a":2}]`), Limits{}); err == nil || err.Code != mcp.CodeInvalidRequest {
		t.Errorf("duplicate in a batch element: %v", err)
	}
}

// FuzzParse checks Parse against the standard library: what it accepts is valid JSON and
// valid UTF-8, re-encodes to JSON that parses to the same message, and nothing panics.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":[1,{"b":null}]}}}`,
		`{"jsonrpc":"2.0","id":"x","result":{"content":[{"type":"text","text":"hi\n"}]}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":{"x":1}}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":0.5}}`,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":{\"a\":\"\\ud83d\\ude00\xe2\x82\xac\"}}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		m, err := Parse(line, Limits{MaxDepth: 32})
		if err != nil {
			if err.Code != mcp.CodeParseError && err.Code != mcp.CodeInvalidRequest {
				t.Fatalf("code %d", err.Code)
			}
			return
		}
		if !json.Valid(line) || !utf8.Valid(line) {
			t.Fatalf("accepted what is not valid JSON in UTF-8: %q", line)
		}
		again, err := Parse(m.Append(nil), Limits{MaxDepth: 32})
		if err != nil {
			t.Fatalf("re-encoded message fails: %v: %s", err, m.Append(nil))
		}
		if again.ID != m.ID || again.Method != m.Method || string(again.Params) != string(m.Params) || string(again.Result) != string(m.Result) {
			t.Fatalf("re-encoded message differs: %+v vs %+v", again, m)
		}
	})
}

// FuzzDuplicates holds the checker's refusal of a member named twice to a reading of the
// same JSON by encoding/json's tokens: of JSON both read, the checker refuses a duplicate
// exactly where some object has two members whose names decode alike.
func FuzzDuplicates(f *testing.F) {
	for _, s := range []string{
		`{"a":1,"b":{"a":2,"c":[{"d":1,"d":2}]}}`, `{"n\u0061me":1,"name":2}`, `{"\u00e9":1,"é":2}`, `{"\/":1,"/":2}`,
		`{"a":1,"a ":2}`, `[{"x":{}},{"x":{}}]`, `{"k0":0,"k1":0,"k2":0,"k3":0,"k4":0,"k5":0,"k6":0,"k7":0,"k8":0,"k9":0,"ka":0,"kb":0,"kc":0,"kd":0,"ke":0,"kf":0,"kg":0,"k0":1}`,
		`{"a name longer than sixteen bytes":1,"a name longer than sixteen bytes":2}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			return
		}
		c := &checker{b: b, maxDepth: 1 << 20}
		end := c.value(skipSpace(b, 0), 0)
		dup := c.err != nil && strings.Contains(c.err.Message, "appears twice")
		if end < 0 && !dup {
			return // refused for another reason (UTF-8, a lone surrogate): not a case to compare
		}
		if want := hasDuplicates(t, b); dup != want {
			t.Fatalf("%q: the checker finds a duplicate: %v (%v); encoding/json's tokens: %v", b, dup, c.err, want)
		}
	})
}

// hasDuplicates reports whether an object in the valid JSON b has two members whose names
// decode alike, reading b with encoding/json's tokens.
func hasDuplicates(t *testing.T, b []byte) bool {
	dec := json.NewDecoder(strings.NewReader(string(b)))
	type frame struct {
		names  map[string]bool
		object bool
		key    bool // the next token of an object is a name
	}
	var stack []frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			if len(stack) > 0 && stack[len(stack)-1].object {
				stack[len(stack)-1].key = true
			}
			continue
		}
		if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].key {
			name, ok := tok.(string)
			if !ok {
				t.Fatalf("a member name read as %T", tok)
			}
			if stack[n-1].names[name] {
				return true
			}
			stack[n-1].names[name] = true
			stack[n-1].key = false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, frame{names: map[string]bool{}, object: true, key: true})
		case json.Delim('['):
			stack = append(stack, frame{})
		default:
			if n := len(stack); n > 0 && stack[n-1].object {
				stack[n-1].key = true
			}
		}
	}
}

// strOneByOne is the string check as it stood before plain ASCII was crossed eight bytes at
// a time: a byte at a time, as the JSON grammar reads. FuzzStringCheck holds str to it.
func strOneByOne(b []byte, i int) (int, bool) {
	for j := i + 1; j < len(b); {
		ch := b[j]
		switch {
		case ch == '"':
			return j + 1, true
		case ch == '\\':
			if j+1 >= len(b) {
				return 0, false
			}
			switch b[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j += 2
			case 'u':
				r, ok := hex4(b, j+2)
				if !ok {
					return 0, false
				}
				j += 6
				switch {
				case r >= 0xDC00 && r <= 0xDFFF:
					return 0, false
				case r >= 0xD800 && r <= 0xDBFF:
					lo, ok := hex4(b, j+2)
					if j+1 >= len(b) || b[j] != '\\' || b[j+1] != 'u' || !ok || lo < 0xDC00 || lo > 0xDFFF {
						return 0, false
					}
					j += 6
				}
			default:
				return 0, false
			}
		case ch < 0x20:
			return 0, false
		case ch < utf8.RuneSelf:
			j++
		default:
			r, size := utf8.DecodeRune(b[j:])
			if r == utf8.RuneError && size <= 1 {
				return 0, false
			}
			j += size
		}
	}
	return 0, false
}

// FuzzStringCheck holds the checker's string scan to the byte-by-byte one: the same end, or
// the same refusal, for any bytes after an opening quote.
func FuzzStringCheck(f *testing.F) {
	for _, s := range []string{
		`"plain"`, `"a long plain string of more than eight bytes", "next"`, `"tab	inside"`, `"esc\"aped quote after eight"`,
		`"\ud83d\ude00 and more text"`, "\"caf\xc3\xa9 and eight more bytes\"", "\"bad \xff utf-8 here\"", `"unterminated and long enough`,
		`"exactly8"`, `"12345678"`, `"1234567"`, `"1234567\"`, "\"ctl\x01 in the middle of a long run\"", `"\u0041\u00e9 then text"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, s []byte) {
		b := append([]byte{'"'}, s...)
		want, ok := strOneByOne(b, 0)
		c := &checker{b: b}
		got := c.str(0)
		if short := shortString(b, 0); short >= 0 && (!ok || short != want) {
			t.Fatalf("shortString(%q) = %d; the byte-by-byte check says %d, %v", b, short, want, ok)
		}
		if !ok {
			if got >= 0 {
				t.Fatalf("accepted %q up to %d; the byte-by-byte check refuses it", b, got)
			}
			return
		}
		if got != want {
			t.Fatalf("%q ends at %d, want %d (err %v)", b, got, want, c.err)
		}
	})
}

// BenchmarkParse checks what a relayed call reads: a 2025-11-25 tools/call, a 2026-07-28
// one, a bundle's answer to it, and a result carrying 1 MiB of text (an image in base64, a
// file).
func BenchmarkParse(b *testing.B) {
	call2025 := []byte(`{"jsonrpc":"2.0","id":10452,"method":"tools/call","params":{"name":"echo-go.echo","arguments":{"text":"bench"}}}`)
	call := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo-go.echo","arguments":{"text":"bench"},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	answer := []byte(`{"jsonrpc":"2.0","id":20931,"result":{"content":[{"type":"text","text":"bench"}]}}`)
	large := []byte(`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"image","mimeType":"image/png","data":"` +
		strings.Repeat("iVBORw0KGgoAAAANSUhEUgAA", 1<<20/24) + `"}]}}`)
	for _, tt := range []struct {
		name string
		line []byte
	}{{"2025 call", call2025}, {"call", call}, {"answer", answer}, {"1MiB result", large}} {
		b.Run(tt.name, func(b *testing.B) {
			b.SetBytes(int64(len(tt.line)))
			for b.Loop() {
				if _, err := Parse(tt.line, Limits{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestMethodNamesAreReadAsWritten(t *testing.T) {
	for _, tt := range []struct{ raw, want string }{
		{`"tools/call"`, "tools/call"},
		{`"notifications/progress"`, "notifications/progress"},
		{`"tools\/call"`, "tools/call"},
		{`"x/\u0061"`, "x/a"},
		{`"tools/callx"`, "tools/callx"},
	} {
		m, err := Parse([]byte(`{"jsonrpc":"2.0","id":1,"method":`+tt.raw+`}`), Limits{})
		if err != nil || m.Method != tt.want {
			t.Errorf("method %s read as %q (%v), want %q", tt.raw, m.Method, err, tt.want)
		}
	}
}
