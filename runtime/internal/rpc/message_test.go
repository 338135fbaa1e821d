package rpc

import (
	"encoding/json"
	"math"
	"strconv"
	"testing"
)

// TestAnIntegerIDIsOneIDHoweverItIsMade holds the two forms an id is kept in to one id: an
// integer read from a message equals the one Int makes, whichever form either is kept in,
// and writes back as it was read.
func TestAnIntegerIDIsOneIDHoweverItIsMade(t *testing.T) {
	for _, n := range []uint64{0, 1, 9, 10, 99, 100, 4711, 1 << 32, math.MaxInt64, math.MaxUint64 - 1, math.MaxUint64} {
		text := strconv.FormatUint(n, 10)
		read, err := parseID([]byte(text))
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		if read != Int(n) {
			t.Errorf("%s read is %#v, Int makes %#v", text, read, Int(n))
		}
		if got, ok := read.Uint(); !ok || got != n {
			t.Errorf("%s: Uint = %d, %v", text, got, ok)
		}
		if read.String() != text || string(read.append(nil)) != text {
			t.Errorf("%s writes as %s, %s", text, read.String(), read.append(nil))
		}
		if read.IsZero() || read.IsNull() {
			t.Errorf("%s is zero or null", text)
		}
		byID := map[ID]bool{Int(n): true}
		if !byID[read] {
			t.Errorf("%s read is not found under Int(%d)", text, n)
		}
	}
}

// TestOtherIDsKeepTheirText: what is not a plain unsigned integer (a sign, a number past
// 64 bits, a string that reads as one) is kept and written as it came, and is not the
// integer it looks like.
func TestOtherIDsKeepTheirText(t *testing.T) {
	for _, tt := range []struct {
		text string
		same ID // an id it must not equal
	}{
		{"-0", Int(0)},
		{"-5", Int(5)},
		{"123456789012345678901234567890", Int(0)},
		{"18446744073709551616", Int(0)},
		{`"5"`, Int(5)},
		{"null", Int(0)},
	} {
		id, err := parseID([]byte(tt.text))
		if err != nil {
			t.Fatalf("%s: %v", tt.text, err)
		}
		if id.String() != tt.text {
			t.Errorf("%s reads back as %s", tt.text, id.String())
		}
		if id == tt.same {
			t.Errorf("%s is the same id as %s", tt.text, tt.same)
		}
		m := Message{ID: id, Result: json.RawMessage(`{}`)}
		if got, want := string(m.Append(nil)), `{"jsonrpc":"2.0","id":`+tt.text+`,"result":{}}`; got != want {
			t.Errorf("answer %s, want %s", got, want)
		}
	}
	if b, _ := json.Marshal(ID{}); string(b) != "null" {
		t.Errorf("no id marshals as %s", b)
	}
	if !(ID{}).IsZero() || Int(0).IsZero() {
		t.Error("IsZero is wrong about no id or id 0")
	}
}

// BenchmarkID reads an integer id from a message and writes it into the answer.
func BenchmarkID(b *testing.B) {
	raw, buf := []byte("104729"), make([]byte, 0, 32)
	for b.Loop() {
		id, err := parseID(raw)
		if err != nil {
			b.Fatal(err)
		}
		buf = id.append(buf[:0])
	}
}
