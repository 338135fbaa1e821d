package node

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolnode/toolnode/runtime/internal/rpc"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

func TestReadRequest(t *testing.T) {
	tests := []struct {
		method, params string
		name, uri      string
		state, meta    string
		token          string
		err            string // "" when read
	}{
		{"tools/call", `{"name":"a.b","arguments":{"name":"inner","_meta":{}}}`, "a.b", "", "", "", "", ""},
		{"tools/call", `{"n\u0061me":"t","requestStat\u0065":"s"}`, "t", "", `"s"`, "", "", ""},
		{"tools/call", `{"name":"t","_meta":{"progressToken":7}}`, "t", "", "", `{"progressToken":7}`, "7", ""},
		{"tools/call", `{"name":"t","_meta":{"progressToken":null}}`, "t", "", "", `{"progressToken":null}`, "", ""},
		{"resources/read", `{"uri":"file:///x","name":"not the target"}`, "", "file:///x", "", "", "", ""},
		{"tools/list", `{"name":"t","cursor":null}`, "", "", "", "", "", ""},
		{"tools/call", `{"name":"a","Name":"b"}`, "", "", "", "", "", `member "Name" is not "name"`},
		{"tools/call", `{"NAME":"b","name":"a"}`, "", "", "", "", "", `member "NAME" is not "name"`},
		{"tools/call", `{"name":"a","Arguments":{}}`, "", "", "", "", "", `member "Arguments" is not "arguments"`},
		{"tools/call", `{"name":"a","_META":{}}`, "", "", "", "", "", `member "_META" is not "_meta"`},
		{"resources/read", `{"uri":"a","Uri":"b"}`, "", "", "", "", "", `member "Uri" is not "uri"`},
		{"completion/complete", `{"ref":{"type":"ref/prompt","name":"p","Name":"q"}}`, "", "", "", "", "", `member "Name" is not "name"`},
		{"tools/call", `{"name":1}`, "", "", "", "", "", `"name" must be a string`},
		{"tools/call", `{}`, "", "", "", "", "", `needs a string "name"`},
		{"resources/read", `{"uri":""}`, "", "", "", "", "", `needs a string "uri"`},
		{"tools/call", `[1]`, "", "", "", "", "", "must be an object"},
		{"tools/call", `{"name":"t","task":{"ttl":1}}`, "t", "", "", "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.params, func(t *testing.T) {
			r, err := ReadRequest(tt.method, json.RawMessage(tt.params))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Message, tt.err) || err.Code != mcp.CodeInvalidParams {
					t.Fatalf("error %v, want -32602 with %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.Name != tt.name || r.URI != tt.uri || string(r.State) != tt.state || string(r.Meta) != tt.meta || string(r.ProgressToken) != tt.token {
				t.Errorf("read name %q uri %q state %s meta %s token %s", r.Name, r.URI, r.State, r.Meta, r.ProgressToken)
			}
		})
	}
}

// FuzzRequestMembers: what the node decides on (ReadRequest, and toolnode.execute's
// ParseExecute) is what a bundle acts on, even one that reads params with Go's
// case-insensitive encoding/json, which keeps the last of the keys that match: on every
// input the node either refuses the request or reads the same name, URI and arguments.
func FuzzRequestMembers(f *testing.F) {
	for _, seed := range []struct{ method, params string }{
		{"tools/call", `{"name":"pub.echo","arguments":{"text":"x"}}`},
		{"tools/call", `{"name":"pub.echo","Name":"sec.echo"}`},
		{"tools/call", `{"N\u0061ME":"sec.echo","name":"pub.echo"}`},
		{"prompts/get", `{"name":"p","arguments":{"a":"b"},"ARGUMENTS":{"a":"c"}}`},
		{"resources/read", `{"uri":"fake://pub/readme","URI":"fake://sec/readme"}`},
		{"tools/call", `{"name":"toolnode.execute","arguments":{"name":"pub.echo","NAME":"sec.echo"}}`},
		{"tools/call", `{"name":"toolnode.execute","arguments":{"Name":"sec.echo","arguments":{}}}`},
		{"tools/call", `{"name":"x","argument\u017f":{"a":1}}`}, // ſ, which encoding/json folds to s
	} {
		f.Add(seed.method, seed.params)
	}
	f.Fuzz(func(t *testing.T, method, params string) {
		if _, ok := requestMembers[method]; !ok {
			return
		}
		if _, err := rpc.Parse([]byte(`{"jsonrpc":"2.0","id":1,"method":"x","params":`+params+`}`), rpc.Limits{}); err != nil {
			return // the front never reads params rpc.Parse refuses
		}
		r, err := ReadRequest(method, json.RawMessage(params))
		if err != nil {
			return
		}
		var bundle struct {
			Name      string          `json:"name"`
			URI       string          `json:"uri"`
			Arguments json.RawMessage `json:"arguments"`
		}
		if json.Unmarshal([]byte(params), &bundle) != nil {
			return // a bundle that cannot read the params does nothing with them
		}
		switch method {
		case mcp.MethodToolsCall, mcp.MethodPromptsGet:
			if bundle.Name != r.Name || string(bundle.Arguments) != string(r.Arguments) && !(bundle.Arguments == nil && r.Arguments == nil) {
				t.Fatalf("%s %s: the node read name %q arguments %s, a bundle %q %s", method, params, r.Name, r.Arguments, bundle.Name, bundle.Arguments)
			}
		case mcp.MethodResourcesRead, mcp.MethodResourcesSub, mcp.MethodResourcesUnsub:
			if bundle.URI != r.URI {
				t.Fatalf("%s %s: the node read uri %q, a bundle %q", method, params, r.URI, bundle.URI)
			}
		}
		if method != mcp.MethodToolsCall || r.Name != ExecuteToolName {
			return
		}
		name, args, perr := ParseExecute(r.Arguments)
		if perr != nil {
			return
		}
		var inner struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		if json.Unmarshal(r.Arguments, &inner) != nil {
			return
		}
		if inner.Name != name || inner.Arguments != nil && string(inner.Arguments) != "null" && string(inner.Arguments) != string(args) {
			t.Fatalf("execute %s: the node runs %q %s, a case-blind reader %q %s", r.Arguments, name, args, inner.Name, inner.Arguments)
		}
	})
}
