package rawjson

import (
	"encoding/json"
	"testing"
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
