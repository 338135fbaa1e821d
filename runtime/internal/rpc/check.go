package rpc

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"math/bits"
	"unicode/utf8"

	"github.com/toolnode/toolnode/sdk-go/mcp"
	"github.com/toolnode/toolnode/sdk-go/rawjson"
)

// DefaultMaxDepth is how deeply arrays and objects may nest in a message by default. Tool
// arguments and results seldom go past ten; parsers of other languages (Python's among
// them) fail somewhere past a thousand.
const DefaultMaxDepth = 128

// Limits bounds what Parse accepts. The zero value takes the defaults.
type Limits struct {
	// MaxDepth is the deepest nesting of arrays and objects, the message itself counting
	// as one. Default DefaultMaxDepth.
	MaxDepth int
}

func (l Limits) depth() int {
	if l.MaxDepth <= 0 {
		return DefaultMaxDepth
	}
	return l.MaxDepth
}

// Parse checks one JSON-RPC message and returns it. Params, Result and the error's data
// are slices of line. What fails is an *Error with the code the spec names: -32700 for
// what is not JSON (invalid UTF-8 and lone surrogate escapes included), -32600 for JSON
// that is not a JSON-RPC 2.0 message, nests deeper than the limit or repeats a member name
// in any object. The returned message carries the id whenever it could be read, so that the
// error can be answered to it.
func Parse(line []byte, lim Limits) (Message, *Error) {
	var m Message
	c := checker{b: line, maxDepth: lim.depth(), members: true}
	i := skipSpace(line, 0)
	if i < len(line) && line[i] == '[' {
		return m, Errorf(mcp.CodeInvalidRequest, "invalid request: a batch where one message was expected")
	}
	if i >= len(line) || line[i] != '{' {
		if json.Valid(line) {
			return m, Errorf(mcp.CodeInvalidRequest, "invalid request: a message is a JSON object")
		}
		return m, Errorf(mcp.CodeParseError, "parse error: not a JSON object")
	}
	end := c.value(i, 0)
	if end >= 0 && skipSpace(line, end) != len(line) {
		c.fail(mcp.CodeParseError, "parse error: data after the message at byte %d", end)
	}
	jsonrpc, id, method, params, result, errObj := c.top.jsonrpc, c.top.id, c.top.method, c.top.params, c.top.result, c.top.err
	var idErr error
	if id != nil {
		// Read even from a message that fails, so that the answer can name it and a
		// request can be told from a response.
		m.ID, idErr = parseID(id)
	}
	if c.err != nil {
		if method != nil {
			m.Method = "?"
		}
		return m, c.err
	}
	if string(jsonrpc) != `"2.0"` {
		return m, Errorf(mcp.CodeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`)
	}
	if idErr != nil {
		return m, AsError(idErr)
	}
	switch {
	case method != nil:
		if result != nil || errObj != nil {
			return m, Errorf(mcp.CodeInvalidRequest, "invalid request: a message with a method has no result or error")
		}
		if m.ID.IsNull() {
			return m, Errorf(mcp.CodeInvalidRequest, "invalid request: a request's id is not null")
		}
		if method[0] != '"' {
			return m, Errorf(mcp.CodeInvalidRequest, `invalid request: "method" must be a string`)
		}
		name, ok := "", true
		if bytes.IndexByte(method, '\\') < 0 {
			name = methodName(method[1 : len(method)-1])
		} else {
			name, ok = unquote(method)
		}
		if !ok {
			return m, Errorf(mcp.CodeInvalidRequest, `invalid request: bad "method"`)
		}
		if name == "" {
			return m, Errorf(mcp.CodeInvalidRequest, `invalid request: "method" is empty`)
		}
		m.Method = name
		if params != nil && params[0] != '{' && params[0] != '[' {
			if string(params) != "null" {
				return m, Errorf(mcp.CodeInvalidRequest, `invalid request: "params" must be an object or an array`)
			}
			params = nil
		}
		m.Params = params
	case id == nil:
		return m, Errorf(mcp.CodeInvalidRequest, `invalid request: neither a request, a notification nor a response`)
	case (result == nil) == (errObj == nil):
		return m, Errorf(mcp.CodeInvalidRequest, `invalid request: a response has either "result" or "error"`)
	case errObj != nil:
		if errObj[0] != '{' {
			return m, Errorf(mcp.CodeInvalidRequest, `invalid request: "error" must be an object`)
		}
		m.Error = decodeError(errObj)
	default:
		m.Result = result
	}
	return m, nil
}

// SplitBatch checks a JSON array of messages as a whole (UTF-8, nesting, duplicate names) and
// returns its elements, each to be given to Parse.
func SplitBatch(body []byte, lim Limits) ([][]byte, *Error) {
	c := checker{b: body, maxDepth: lim.depth()}
	var elems [][]byte
	c.elem = func(v []byte) { elems = append(elems, v) }
	i := skipSpace(body, 0)
	if i >= len(body) || body[i] != '[' {
		return nil, Errorf(mcp.CodeParseError, "parse error: not a JSON array")
	}
	end := c.value(i, 0)
	if end >= 0 && skipSpace(body, end) != len(body) {
		c.fail(mcp.CodeParseError, "parse error: data after the batch at byte %d", end)
	}
	if c.err != nil {
		return nil, c.err
	}
	return elems, nil
}

// checker validates JSON in one pass: syntax, UTF-8, nesting and duplicate member names. It
// reports the members of the outermost object to top, or the elements of the outermost
// array to elem.
// envelope is where a checker keeps the members of a message's top level.
type envelope struct {
	jsonrpc, id, method, params, result, err []byte
}

// set keeps value when key names a member of the envelope.
func (e *envelope) set(key, value []byte) {
	switch string(key) {
	case "jsonrpc":
		e.jsonrpc = value
	case "id":
		e.id = value
	case "method":
		e.method = value
	case "params":
		e.params = value
	case "result":
		e.result = value
	case "error":
		e.err = value
	}
}

type checker struct {
	b        []byte
	maxDepth int
	members  bool     // keep the top level's members in top
	top      envelope // a message's, when members is set
	elem     func(value []byte)
	err      *Error
	escaped  bool // the last string str checked holds an escape
}

func (c *checker) fail(code int64, format string, args ...any) int {
	if c.err == nil {
		c.err = Errorf(code, format, args...)
	}
	return -1
}

// value checks the value at b[i] and returns the index after it, or -1.
func (c *checker) value(i, depth int) int {
	b := c.b
	if i >= len(b) {
		return c.fail(mcp.CodeParseError, "parse error: unexpected end of input")
	}
	switch ch := b[i]; {
	case ch == '"':
		if end := shortString(b, i); end >= 0 {
			return end
		}
		return c.str(i)
	case ch == '{':
		return c.object(i, depth+1)
	case ch == '[':
		return c.array(i, depth+1)
	case ch == '-' || ch >= '0' && ch <= '9':
		return c.number(i)
	case ch == 't':
		return c.literal(i, "true")
	case ch == 'f':
		return c.literal(i, "false")
	case ch == 'n':
		return c.literal(i, "null")
	}
	return c.fail(mcp.CodeParseError, "parse error: unexpected %q at byte %d", b[i], i)
}

func (c *checker) literal(i int, word string) int {
	if !bytes.HasPrefix(c.b[i:], []byte(word)) {
		return c.fail(mcp.CodeParseError, "parse error: bad literal at byte %d", i)
	}
	return i + len(word)
}

func (c *checker) number(i int) int {
	b, j := c.b, i
	if b[j] == '-' {
		j++
	}
	digits := func() int {
		k := j
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
		return j - k
	}
	switch {
	case j < len(b) && b[j] == '0':
		j++
	case digits() == 0:
		return c.fail(mcp.CodeParseError, "parse error: bad number at byte %d", i)
	}
	if j < len(b) && b[j] == '.' {
		j++
		if digits() == 0 {
			return c.fail(mcp.CodeParseError, "parse error: bad number at byte %d", i)
		}
	}
	if j < len(b) && (b[j] == 'e' || b[j] == 'E') {
		j++
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		if digits() == 0 {
			return c.fail(mcp.CodeParseError, "parse error: bad number at byte %d", i)
		}
	}
	return j
}

// str checks the string at b[i] == '"' and returns the index after it. It sets c.escaped
// when the string holds an escape, so that a member name's caller knows whether its text
// is its name.
func (c *checker) str(i int) int {
	b := c.b
	for j := i + 1; j < len(b); {
		if j = skipPlain(b, j); j >= len(b) {
			break
		}
		ch := b[j]
		switch {
		case ch == '"':
			return j + 1
		case ch == '\\':
			c.escaped = true
			if j+1 >= len(b) {
				return c.fail(mcp.CodeParseError, "parse error: unterminated string at byte %d", i)
			}
			switch b[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j += 2
			case 'u':
				r, ok := hex4(b, j+2)
				if !ok {
					return c.fail(mcp.CodeParseError, "parse error: bad \\u escape at byte %d", j)
				}
				j += 6
				switch {
				case r >= 0xDC00 && r <= 0xDFFF:
					return c.fail(mcp.CodeParseError, "parse error: lone surrogate escape at byte %d", j-6)
				case r >= 0xD800 && r <= 0xDBFF:
					lo, ok := hex4(b, j+2)
					if j+1 >= len(b) || b[j] != '\\' || b[j+1] != 'u' || !ok || lo < 0xDC00 || lo > 0xDFFF {
						return c.fail(mcp.CodeParseError, "parse error: lone surrogate escape at byte %d", j-6)
					}
					j += 6
				}
			default:
				return c.fail(mcp.CodeParseError, "parse error: bad escape at byte %d", j)
			}
		case ch < 0x20:
			return c.fail(mcp.CodeParseError, "parse error: control character in a string at byte %d", j)
		default:
			r, size := utf8.DecodeRune(b[j:])
			if r == utf8.RuneError && size <= 1 {
				return c.fail(mcp.CodeParseError, "parse error: invalid UTF-8 at byte %d", j)
			}
			j += size
		}
	}
	return c.fail(mcp.CodeParseError, "parse error: unterminated string at byte %d", i)
}

// shortString returns the index after the string at b[i] == '"' when the eight bytes after
// its opening quote hold its closing one with only plain bytes before it, as most names and
// many values do; else -1, and str checks the string. Small enough to be inlined, it spares
// those strings two calls.
func shortString(b []byte, i int) int {
	if i+9 <= len(b) {
		// With no mark in the eight bytes, j is the byte after them: a quote there ends the
		// string as well.
		j := i + 1 + bits.TrailingZeros64(unplain(binary.LittleEndian.Uint64(b[i+1:])))>>3
		if j < len(b) && b[j] == '"' {
			return j + 1
		}
	}
	return -1
}

// skipPlain returns the index of the first byte from b[j] on that a string does not hold as
// it is (a quote, a backslash, a control character, a byte of a rune of several), or
// len(b). Most of a message is text without escapes, and a large result (an image in
// base64, a file) is nearly all of it: eight bytes are looked at at once, and the first
// that is not plain among them is found in one step, so that a short string (a member
// name, most values) costs one look.
func skipPlain(b []byte, j int) int {
	if j+8 <= len(b) {
		if s := unplain(binary.LittleEndian.Uint64(b[j:])); s != 0 {
			return j + bits.TrailingZeros64(s)>>3
		}
		j += 8
	}
	// A long run: sixteen bytes at a time.
	for ; j+16 <= len(b); j += 16 {
		s, t := unplain(binary.LittleEndian.Uint64(b[j:])), unplain(binary.LittleEndian.Uint64(b[j+8:]))
		switch {
		case s != 0:
			return j + bits.TrailingZeros64(s)>>3
		case t != 0:
			return j + 8 + bits.TrailingZeros64(t)>>3
		}
	}
	for ; j+8 <= len(b); j += 8 {
		if s := unplain(binary.LittleEndian.Uint64(b[j:])); s != 0 {
			return j + bits.TrailingZeros64(s)>>3
		}
	}
	for j < len(b) && b[j] >= 0x20 && b[j] < utf8.RuneSelf && b[j] != '"' && b[j] != '\\' {
		j++
	}
	return j
}

// unplain marks, with its high bit, each byte of w (read little-endian) that a string does
// not hold as it is: a quote, a backslash, a control character or a byte of 0x80 and over.
// A mark may stand on a plain byte above (after) a marked one, never below the first: the
// lowest mark is the first byte that is not plain, and none means all eight are.
func unplain(w uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	q, bs := w^(ones*'"'), w^(ones*'\\') // a byte of these is 0 where w has a quote, a backslash
	// (v-ones)&^v marks the bytes of v that are 0, (w-0x20s)&^w those of w below 0x20, and
	// w itself those of 0x80 and over.
	return ((q-ones)&^q | (bs-ones)&^bs | (w-ones*0x20)&^w | w) & highs
}

func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, ch := range b[i : i+4] {
		switch {
		case ch >= '0' && ch <= '9':
			r = r<<4 | rune(ch-'0')
		case ch >= 'a' && ch <= 'f':
			r = r<<4 | rune(ch-'a'+10)
		case ch >= 'A' && ch <= 'F':
			r = r<<4 | rune(ch-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// smallObject is how many members an object may have before duplicates are found with a
// map rather than by comparing with each earlier name.
const smallObject = 16

// nameAt is where a member name's text (between its quotes) lies in the checked bytes.
// Offsets of 32 bits keep the names of an object in 128 bytes of stack, which each object
// clears; a text longer than 4 GiB has its names kept in a map.
type nameAt struct{ start, end uint32 }

func (c *checker) object(i, depth int) int {
	if depth > c.maxDepth {
		return c.fail(mcp.CodeInvalidRequest, "invalid request: nested deeper than %d levels", c.maxDepth)
	}
	b := c.b
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1
	}
	var names [smallObject]nameAt
	var escaped uint32 // bit k: names[k] holds an escape
	n := 0
	var seen map[string]struct{}
	if uint64(len(b)) > math.MaxUint32 {
		seen = make(map[string]struct{}, 2*smallObject)
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return c.fail(mcp.CodeParseError, "parse error: expected a member name at byte %d", i)
		}
		kEnd, esc := shortString(b, i), false
		if kEnd < 0 {
			c.escaped = false
			if kEnd = c.str(i); kEnd < 0 {
				return -1
			}
			esc = c.escaped
		}
		raw := b[i+1 : kEnd-1]
		switch {
		case seen != nil:
			k := rawjson.NameOf(raw).String()
			if _, dup := seen[k]; dup {
				return c.duplicate(k)
			}
			seen[k] = struct{}{}
		case n < smallObject:
			for k, prev := range names[:n] {
				p := b[prev.start:prev.end]
				if string(p) == string(raw) || (esc || escaped&(1<<k) != 0) && rawjson.NameOf(p).Equal(rawjson.NameOf(raw)) {
					return c.duplicate(rawjson.NameOf(raw).String())
				}
			}
			names[n] = nameAt{uint32(i + 1), uint32(kEnd - 1)}
			if esc {
				escaped |= 1 << n
			}
			n++
		default:
			seen = make(map[string]struct{}, 2*smallObject)
			for _, prev := range names {
				seen[rawjson.NameOf(b[prev.start:prev.end]).String()] = struct{}{}
			}
			k := rawjson.NameOf(raw).String()
			if _, dup := seen[k]; dup {
				return c.duplicate(k)
			}
			seen[k] = struct{}{}
		}
		i = skipSpace(b, kEnd)
		if i >= len(b) || b[i] != ':' {
			return c.fail(mcp.CodeParseError, "parse error: expected ':' at byte %d", i)
		}
		vStart := skipSpace(b, i+1)
		vEnd := c.value(vStart, depth)
		if vEnd < 0 {
			return -1
		}
		if depth == 1 && c.members {
			c.top.set(raw, b[vStart:vEnd])
		}
		i = skipSpace(b, vEnd)
		if i >= len(b) {
			return c.fail(mcp.CodeParseError, "parse error: unexpected end of input")
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return i + 1
		default:
			return c.fail(mcp.CodeParseError, "parse error: expected ',' or '}' at byte %d", i)
		}
	}
}

func (c *checker) duplicate(name string) int {
	return c.fail(mcp.CodeInvalidRequest, "invalid request: member %q appears twice in one object", clip([]byte(name), 80))
}

func (c *checker) array(i, depth int) int {
	if depth > c.maxDepth {
		return c.fail(mcp.CodeInvalidRequest, "invalid request: nested deeper than %d levels", c.maxDepth)
	}
	b := c.b
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1
	}
	for {
		vEnd := c.value(i, depth)
		if vEnd < 0 {
			return -1
		}
		if depth == 1 && c.elem != nil {
			c.elem(b[i:vEnd])
		}
		i = skipSpace(b, vEnd)
		if i >= len(b) {
			return c.fail(mcp.CodeParseError, "parse error: unexpected end of input")
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case ']':
			return i + 1
		default:
			return c.fail(mcp.CodeParseError, "parse error: expected ',' or ']' at byte %d", i)
		}
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// methodName returns the method named b: one of protocolMethods without a copy (every
// message carries one), any other copied.
func methodName(b []byte) string {
	for _, m := range protocolMethods {
		if string(b) == m {
			return m
		}
	}
	return string(b)
}

// protocolMethods are the methods most messages carry, the most frequent first.
var protocolMethods = [...]string{mcp.MethodToolsCall, mcp.NotifyProgress, mcp.NotifyCancelled, mcp.NotifyMessage,
	mcp.MethodToolsList, mcp.MethodPing, mcp.MethodPromptsGet, mcp.MethodResourcesRead}

// unquote decodes the JSON string b; a variable of its own, since decoding into it moves it
// to the heap.
func unquote(b []byte) (string, bool) {
	var s string
	err := json.Unmarshal(b, &s)
	return s, err == nil
}
