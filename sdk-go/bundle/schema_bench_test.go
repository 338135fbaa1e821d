package bundle

import (
	"encoding/json"
	"testing"
)

// BenchmarkCheckArguments measures validating a call's arguments against its tool's input
// schema, for good arguments and for each kind of mismatch reported to the caller.
func BenchmarkCheckArguments(b *testing.B) {
	schema, err := compileSchema(json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"},"count":{"type":"integer","minimum":0,"maximum":100},"tags":{"type":"array","items":{"type":"string"}}},"required":["name"]}`))
	if err != nil {
		b.Fatal(err)
	}
	cases := []struct{ name, args string }{
		{"valid", `{"name":"Ada","count":3,"tags":["a","b"]}`},
		{"missing", `{"count":3}`},
		{"wrong-type", `{"name":7}`},
		{"out-of-range", `{"name":"Ada","count":1000}`},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			args := json.RawMessage(c.args)
			want := c.name == "valid"
			for b.Loop() {
				if (checkArguments(schema, args) == "") != want {
					b.Fatal("unexpected verdict")
				}
			}
		})
	}
}
