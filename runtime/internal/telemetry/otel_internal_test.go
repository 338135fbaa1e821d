package telemetry

import (
	"encoding/json"
	"testing"

	"github.com/toolnode/toolnode/sdk-go/rawjson"

	"github.com/google/go-cmp/cmp"

	"github.com/toolnode/toolnode/runtime/internal/rpc"
)

// parsed reports whether the node takes a request with these params: among else, no name
// repeated in any object.
func parsed(params string) bool {
	_, err := rpc.Parse([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":`+params+`}`), rpc.Limits{})
	return err == nil
}

// FuzzSetMeta holds setMeta's splice to what decoding, setting and encoding would give.
func FuzzSetMeta(f *testing.F) {
	for _, seed := range []string{
		`{}`, `{ }`, `null`, ``, `{"name":"g"}`, `{"_meta":null}`, `{"_meta":{}}`,
		`{"_meta":{"progressToken":5,"traceparent":"old"},"name":"g"}`,
		`{"a\"b":"x}\"y","_meta":{"k":[1,{"z":"}"}]},"n":-1.5e3,"t":true}`,
		` { "arguments" : { "_meta" : 1 } , "x" : [ [ ] , { } ] } `,
		`{"name":"\\","_meta":{"a":"\\\""}}`,
		`{"_meta":{"a":1},"x":2,"_meta":{"b":2}}`,
		`{"_m\u0065ta":{"a":1},"name":"g"}`,
	} {
		f.Add(seed)
	}
	kv := map[string]string{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}
	f.Fuzz(func(t *testing.T, params string) {
		var want map[string]any
		if params != "" && (json.Unmarshal([]byte(params), &want) != nil || !parsed(params)) {
			return // setMeta is only given params the node parsed as an object or null
		}
		if want == nil {
			want = map[string]any{}
		}
		meta, _ := want["_meta"].(map[string]any)
		if _, isObj := want["_meta"].(map[string]any); !isObj && want["_meta"] != nil {
			return // a _meta that is not an object cannot carry a trace
		}
		if meta == nil {
			meta = map[string]any{}
		}
		for k, v := range kv {
			meta[k] = v
		}
		want["_meta"] = meta

		out, err := setMeta(json.RawMessage(params), []rawjson.Edit{{Key: "traceparent", Value: rawjson.AppendString(nil, kv["traceparent"])}})
		if err != nil {
			t.Fatalf("setMeta(%s): %v", params, err)
		}
		var got map[string]any
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("setMeta(%s) = %s, not JSON: %v", params, out, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("setMeta(%s) = %s (-want +got):\n%s", params, out, diff)
		}
	})
}
