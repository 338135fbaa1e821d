// Package rawjson reads and edits the members of JSON objects in place, keeping the rest
// byte for byte: a relay changes a name or a token in params of any size, and a server reads
// the few members of a request it needs, without decoding the rest.
//
// The functions that read and edit expect valid JSON (checked by Valid, or a parser,
// before): given anything else they report that a member is missing rather than fail.
package rawjson

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math/bits"
)

// Members calls fn with each top-level member of the JSON object obj, in one pass. The name
// is compared without a copy (Name.Is); its String is made only when asked for.
func Members(obj []byte, fn func(name Name, value []byte)) {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return
	}
	i++
	for {
		_, vStart, vEnd, name, ok := nextMember(obj, i)
		if !ok {
			return
		}
		fn(name, obj[vStart:vEnd])
		i = skipSpace(obj, vEnd)
		if i >= len(obj) || obj[i] != ',' {
			return
		}
		i++
	}
}

// nextMember reads the member starting at or after obj[i]: where its name starts, where its
// value starts and ends, and its name.
func nextMember(obj []byte, i int) (kStart, vStart, vEnd int, name Name, ok bool) {
	i = skipSpace(obj, i)
	if i >= len(obj) || obj[i] != '"' {
		return 0, 0, 0, name, false
	}
	kStart = i
	kEnd, plain := skipString(obj, i)
	if kEnd < 0 {
		return 0, 0, 0, name, false
	}
	raw := obj[i+1 : kEnd-1]
	name = Name{raw: raw, escaped: !plain && bytes.IndexByte(raw, '\\') >= 0}
	i = skipSpace(obj, kEnd)
	if i >= len(obj) || obj[i] != ':' {
		return 0, 0, 0, name, false
	}
	vStart = skipSpace(obj, i+1)
	vEnd = skipValue(obj, vStart)
	if vEnd < 0 {
		return 0, 0, 0, name, false
	}
	return kStart, vStart, vEnd, name, true
}

// memberBounds finds the top-level member key of the JSON object obj: where its name starts
// and where its value starts and ends.
func memberBounds(obj []byte, key string) (int, int, int, bool) {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return 0, 0, 0, false
	}
	i++
	for {
		kStart, vStart, vEnd, name, ok := nextMember(obj, i)
		if !ok {
			return 0, 0, 0, false
		}
		if name.Is(key) {
			return kStart, vStart, vEnd, true
		}
		i = skipSpace(obj, vEnd)
		if i >= len(obj) || obj[i] != ',' {
			return 0, 0, 0, false
		}
		i++
	}
}

// Member returns the raw value of the top-level member key of the JSON object obj, without
// decoding the rest, or false when obj has no such member.
func Member(obj []byte, key string) ([]byte, bool) {
	_, start, end, ok := memberBounds(obj, key)
	if !ok {
		return nil, false
	}
	return obj[start:end], true
}

// SetMember returns obj with the value of its top-level member key replaced by value (valid
// JSON), or false when obj has no such member. The rest of obj is kept byte for byte.
func SetMember(obj []byte, key string, value []byte) ([]byte, bool) {
	_, start, end, ok := memberBounds(obj, key)
	if !ok {
		return nil, false
	}
	out := make([]byte, 0, len(obj)-(end-start)+len(value))
	return append(append(append(out, obj[:start]...), value...), obj[end:]...), true
}

// PutMember returns obj with its top-level member key set to value (valid JSON): replaced
// when present, else added first. ok is false when obj is not a JSON object.
func PutMember(obj []byte, key string, value []byte) ([]byte, bool) {
	return PutMembers(obj, Edit{Key: key, Value: value})
}

// Edit sets the top-level member Key of an object to Value (valid JSON): see PutMembers.
type Edit struct {
	Key   string
	Value []byte
}

// maxEdits is how many edits PutMembers makes in one copy; more take one copy each.
const maxEdits = 4

// PutMembers returns obj with each edit's member set to its value, as PutMember does (the
// rest of obj kept byte for byte, a member obj lacks added first), in one copy of obj
// however many members change: a relayed call renames its tool and edits its _meta. ok is
// false when obj is not a JSON object.
func PutMembers(obj []byte, edits ...Edit) ([]byte, bool) {
	return AppendPutMembers(nil, obj, edits...)
}

// AppendPutMembers appends obj edited as PutMembers edits it to dst, and returns the
// extended buffer: a relay that builds a whole line puts the edited params straight into
// it. obj and the edits' values may lie in dst, but not past its length (where the edit
// is written). ok is false (and dst is returned as it was) when obj is not a JSON object.
func AppendPutMembers(dst, obj []byte, edits ...Edit) ([]byte, bool) {
	if len(edits) > maxEdits {
		out, ok := obj, true
		for _, e := range edits {
			if out, ok = PutMember(out, e.Key, e.Value); !ok {
				return dst, false
			}
		}
		return append(dst, out...), true
	}
	open := skipSpace(obj, 0)
	if open >= len(obj) || obj[open] != '{' {
		return dst, false
	}
	// Where each edited member's value is, in obj; -1 for one to add.
	var starts, ends [maxEdits]int
	for k := range edits {
		starts[k] = -1
	}
	// The scan ends once every edited member is found: what follows (arguments of any
	// size, often) is copied unread.
	members, found := false, 0
	for i := open + 1; found < len(edits); {
		_, vStart, vEnd, name, ok := nextMember(obj, i)
		if !ok {
			break
		}
		members = true
		for k, e := range edits {
			if starts[k] < 0 && name.Is(e.Key) {
				starts[k], ends[k] = vStart, vEnd
				found++
			}
		}
		if i = skipSpace(obj, vEnd); i >= len(obj) || obj[i] != ',' {
			break
		}
		i++
	}
	size := len(obj)
	for k, e := range edits {
		if size += len(e.Value); starts[k] < 0 {
			size += len(e.Key) + 4
		} else {
			size -= ends[k] - starts[k]
		}
	}
	out := dst
	if cap(out)-len(out) < size {
		out = append(make([]byte, 0, len(dst)+size), dst...)
	}
	out = append(out, obj[:open+1]...)
	added := 0
	for k, e := range edits {
		if starts[k] >= 0 {
			continue
		}
		if added > 0 {
			out = append(out, ',')
		}
		out = append(AppendString(out, e.Key), ':')
		out = append(out, e.Value...)
		added++
	}
	if added > 0 && members {
		out = append(out, ',')
	}
	// The replaced values, in the order obj has them.
	at := open + 1
	for {
		next := -1
		for k := range edits {
			if starts[k] >= at && (next < 0 || starts[k] < starts[next]) {
				next = k
			}
		}
		if next < 0 {
			break
		}
		out = append(append(out, obj[at:starts[next]]...), edits[next].Value...)
		at = ends[next]
	}
	return append(out, obj[at:]...), true
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

// SkipString returns the index after the string starting at b[i] == '"', or -1 when no
// quote closes it; what the string holds is not checked.
func SkipString(b []byte, i int) int {
	end, _ := skipString(b, i)
	return end
}

// skipString is SkipString that also says when the string certainly holds no backslash
// (plain): names and values mostly run to tens of bytes, which are looked at eight at a
// time, the first quote or backslash among them found in one step; past shortRun bytes
// without either, IndexByte crosses the rest faster, from quote to quote, and plain is
// false (not known).
func skipString(b []byte, i int) (end int, plain bool) {
	plain = true
	j := i + 1
	for j+8 <= len(b) {
		m := quoteOrBackslash(binary.LittleEndian.Uint64(b[j:]))
		if m == 0 {
			if j += 8; j-i > shortRun {
				return skipLongString(b, j), false
			}
			continue
		}
		if j += bits.TrailingZeros64(m) >> 3; b[j] == '"' {
			return j + 1, plain
		}
		plain = false
		j += 2 // a backslash and the byte it escapes
	}
	for ; j < len(b); j++ {
		switch b[j] {
		case '"':
			return j + 1, plain
		case '\\':
			plain = false
			j++
		}
	}
	return -1, false
}

// shortRun is how many bytes of a string skipString looks at eight at a time before
// handing the rest to IndexByte.
const shortRun = 32

// skipLongString returns the index after the quote that ends a string whose bytes before
// b[j] are crossed, with b[j-1] neither a backslash nor an escaped byte; -1 when no quote
// ends it. It jumps from quote to quote: a quote ends the string unless an odd number of
// backslashes escapes it.
func skipLongString(b []byte, j int) int {
	for from := j; ; j++ {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return -1
		}
		j += k
		n := 0
		for p := j - 1; p >= from && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return j + 1
		}
	}
}

// quoteOrBackslash marks, with its high bit, each byte of w (read little-endian) that is a
// quote or a backslash. A mark may stand on another byte above (after) a marked one, never
// below the first: the lowest mark is the first quote or backslash.
func quoteOrBackslash(w uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	q, bs := w^(ones*'"'), w^(ones*'\\')
	return ((q-ones)&^q | (bs-ones)&^bs) & highs
}

// skipValue returns the index after the JSON value starting at b[i], or -1.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return SkipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = SkipString(b, j)
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

// StringIs reports whether the JSON value v reads as s the way String reads it (a missing
// value and null as ""), without a copy when v holds no escapes.
func StringIs(v []byte, s string) bool {
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' && bytes.IndexByte(v, '\\') < 0 {
		return string(v[1:len(v)-1]) == s
	}
	got, _ := String(v)
	return got == s
}

// String decodes the JSON string v as json.Unmarshal into a string does (null gives "" and
// true), without a decoder for one that holds no escapes: names and versions are read on
// every request.
func String(v []byte) (string, bool) {
	if string(v) == "null" {
		return "", true
	}
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return "", false
	}
	inner := v[1 : len(v)-1]
	plain := true
	for _, c := range inner {
		if c == '\\' || c == '"' || c < 0x20 {
			plain = false
			break
		}
	}
	if plain {
		return string(inner), true
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return "", false
	}
	return s, true
}

// AppendString appends s as a JSON string: names and keys are nearly always plain ASCII,
// which needs no encoder.
func AppendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	return append(append(append(b, '"'), s...), '"')
}

// Name is a member name as it stands in JSON text, between its quotes.
type Name struct {
	raw     []byte
	escaped bool
}

// NameOf returns the name whose text, between its quotes, is raw. Name keeps raw.
func NameOf(raw []byte) Name { return Name{raw: raw, escaped: bytes.IndexByte(raw, '\\') >= 0} }

// String is the name with its escapes resolved: "\u0061" and "a" are one name.
func (n Name) String() string {
	if !n.escaped {
		return string(n.raw)
	}
	var s string
	_ = json.Unmarshal(append(append([]byte{'"'}, n.raw...), '"'), &s)
	return s
}

// Is reports whether the name is key, without allocating for a name without escapes.
func (n Name) Is(key string) bool {
	if !n.escaped {
		return string(n.raw) == key
	}
	return n.String() == key
}

// Append appends the name quoted, as it was written.
func (n Name) Append(b []byte) []byte { return append(append(append(b, '"'), n.raw...), '"') }

// Equal reports whether two names are one, escapes resolved.
func (n Name) Equal(o Name) bool {
	if !n.escaped && !o.escaped {
		return bytes.Equal(n.raw, o.raw)
	}
	return n.String() == o.String()
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}
