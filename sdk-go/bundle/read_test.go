package bundle

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolnode/toolnode/sdk-go/rawjson"
)

// foldsInto reports whether obj has a top-level member whose name differs from one of names
// in case alone: encoding/json takes such a member for the field, the one-pass reader (like
// JSON-RPC and MCP) does not.
func foldsInto(obj []byte, names ...string) bool {
	var members map[string]json.RawMessage
	if json.Unmarshal(obj, &members) != nil {
		return false
	}
	for k := range members {
		for _, n := range names {
			if k != n && strings.EqualFold(k, n) {
				return true
			}
		}
	}
	return false
}

// FuzzReadRequest holds the one-pass reader of requests to encoding/json, which the SDK used
// before: the same envelope, the same tool call params, and an error where it gave one, for
// the lines that reach it (valid UTF-8).
func FuzzReadRequest(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{"name":"Ada"}}}`,
		`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":7},"name":"x","requestState":"s","inputResponses":{}}}`,
		`{"jsonrpc":"2.0","id":2,"result":{"ok":true}}`,
		`{"jsonrpc":2,"method":5}`,
		`[{"jsonrpc":"2.0"}]`,
		`{"n\u0061me":"x","name":null}`,
		`{"_meta":null,"requestState":null,"name":"\u00e9"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if !utf8.Valid(line) {
			return // refused before it is read (session.handle)
		}
		var want request
		wantErr := json.Unmarshal(line, &want)
		got, gotErr := readRequest(line, rawjson.Valid(line, maxDepth))
		if foldsInto(line, "jsonrpc", "id", "method", "params", "result", "error") {
			return
		}
		if (wantErr == nil) != (gotErr == nil) {
			t.Fatalf("%s: encoding/json says %v, readRequest %v", line, wantErr, gotErr)
		}
		if wantErr != nil {
			return
		}
		if !reflect.DeepEqual(normal(want), normal(got)) {
			t.Fatalf("%s: encoding/json read %+v, readRequest %+v", line, want, got)
		}

		params := want.Params
		var wantP, gotP toolCallParams
		wantPErr := decodeParams(params, &wantP)
		gotPErr := readCallParams(params, &gotP)
		if foldsInto(params, "name", "arguments", "_meta", "inputResponses", "requestState") {
			return
		}
		if wantP.Meta != nil || gotP.Meta != nil {
			if meta, ok := metaOf(params); ok && foldsInto(meta, "io.modelcontextprotocol/protocolVersion", "io.modelcontextprotocol/clientCapabilities",
				"io.modelcontextprotocol/clientInfo", "io.modelcontextprotocol/logLevel", "progressToken", "traceparent", "tracestate") {
				return
			}
		}
		if (wantPErr == nil) != (gotPErr == nil) {
			t.Fatalf("params %s: encoding/json says %v, readCallParams %v", params, wantPErr, gotPErr)
		}
		if wantPErr == nil && !reflect.DeepEqual(wantP, gotP) {
			t.Fatalf("params %s: encoding/json read %+v, readCallParams %+v", params, wantP, gotP)
		}
	})
}

// normal makes raw members comparable: encoding/json copies them, the reader points into the
// line, and an absent member is nil for both.
func normal(r request) request {
	for _, m := range []*json.RawMessage{&r.ID, &r.Params, &r.Result, &r.Error} {
		if *m != nil {
			*m = bytes.Clone(*m)
		}
	}
	return r
}

// metaOf returns the _meta member of params, when it is an object.
func metaOf(params []byte) ([]byte, bool) {
	var p struct {
		Meta json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil || len(p.Meta) == 0 || p.Meta[0] != '{' {
		return nil, false
	}
	return p.Meta, true
}
