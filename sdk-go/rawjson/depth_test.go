package rawjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
)

// nesting is how deeply valid JSON nests arrays and objects, as encoding/json reads it.
func nesting(t testing.TB, b []byte) int {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber() // a number past float64 is still valid JSON
	depth, deepest := 0, 0
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return deepest
		}
		if err != nil {
			t.Fatalf("nesting of %q: %v", b, err)
		}
		switch tok {
		case json.Delim('['), json.Delim('{'):
			depth++
			deepest = max(deepest, depth)
		case json.Delim(']'), json.Delim('}'):
			depth--
		}
	}
}

func TestTooDeep(t *testing.T) {
	for _, tc := range []struct {
		name  string
		line  string
		limit int
		want  bool
	}{
		{"flat", `{"a":1}`, 1, false},
		{"one over", `{"a":[1]}`, 1, true},
		{"at the limit", `[[[]]]`, 3, false},
		{"past the limit", `[[[[]]]]`, 3, true},
		{"brackets in a string", `{"a":"[[[[{{{{"}`, 1, false},
		{"escaped quote in a string", `{"a":"\"[[["}`, 1, false},
		{"escaped backslash ends the string", `{"a":"\\",  "b":[[1]]}`, 2, true},
		{"three backslashes then a quote", `{"a":"\\\"[[","b":1}`, 1, false},
		{"quote after many escaped backslashes", `["\\\\\\\\",[[1]]]`, 2, true},
		{"unterminated string", `{"a":"[[[[`, 1, false},
		{"closers only", `]]]]}`, 0, false},
		{"empty", ``, 0, false},
		{"long string then deep", `{"a":"` + strings.Repeat("x", 500) + `","b":[[[1]]]}`, 3, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := TooDeep([]byte(tc.line), tc.limit); got != tc.want {
				t.Errorf("TooDeep(%q, %d) = %v, want %v", tc.line, tc.limit, got, tc.want)
			}
			if json.Valid([]byte(tc.line)) {
				if want := nesting(t, []byte(tc.line)) > tc.limit; want != tc.want {
					t.Fatalf("case is wrong: encoding/json nests %q %v the limit", tc.line, want)
				}
			}
		})
	}
}

// FuzzTooDeep holds TooDeep to encoding/json's reading of how deeply valid JSON nests, at
// every limit up to one past it; on any other input it must only not fail.
func FuzzTooDeep(f *testing.F) {
	for _, s := range []string{`{"a":[1,{"b":"]\"["}]}`, `["\\",[[]]]`, `"\\\\\""`, `[[[[[]]]]]`, `{"a":"x\u0022["}`, `[1E700]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			TooDeep(b, 2)
			return
		}
		n := nesting(t, b)
		for limit := range n + 2 {
			if got, want := TooDeep(b, limit), n > limit; got != want {
				t.Fatalf("TooDeep(%q, %d) = %v, but it nests %d deep", b, limit, got, n)
			}
		}
	})
}
