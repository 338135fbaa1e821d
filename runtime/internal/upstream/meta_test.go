package upstream

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/toolnode/toolnode/runtime/internal/rpc"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// TestPrepareEditsMetaOnce: a call's progress token is replaced by the node's, the client's
// is handed back, and a stateless bundle's revision members go in beside it, whatever the
// client put in _meta; everything else of params is kept.
func TestPrepareEditsMetaOnce(t *testing.T) {
	info, caps := `{"name":"toolnode","version":"1"}`, `{"sampling":{}}`
	revision := map[string]string{
		mcp.MetaProtocolVersion:    `"` + mcp.Version20260728 + `"`,
		mcp.MetaClientCapabilities: caps,
		mcp.MetaLogLevel:           `"debug"`,
	}
	type prepareCase struct {
		name      string
		era       Era
		params    string
		wantOld   string // the client's token, "" for none
		wantMeta  map[string]string
		keepOther map[string]string // other members of params and their values
	}
	tests := []prepareCase{
		{"session, no _meta", EraSession, `{"name":"t","arguments":{"a":1}}`, "",
			map[string]string{"progressToken": `"tn-x"`}, map[string]string{"name": `"t"`, "arguments": `{"a":1}`}},
		{"session, the client's token", EraSession, `{"name":"t","_meta":{"progressToken":7,"k":"v"}}`, "7",
			map[string]string{"progressToken": `"tn-x"`, "k": `"v"`}, map[string]string{"name": `"t"`}},
		{"session, a null token", EraSession, `{"_meta":{"progressToken":null}}`, "",
			map[string]string{"progressToken": `"tn-x"`}, nil},
		{"stateless, no _meta", EraStateless, `{"name":"t"}`, "",
			with(revision, "progressToken", `"tn-x"`), map[string]string{"name": `"t"`}},
		{"stateless, the client's token and a member of its own", EraStateless, `{"name":"t","_meta":{"k":[1,2],"progressToken":"c"}}`, `"c"`,
			with(with(revision, "progressToken", `"tn-x"`), "k", `[1,2]`), map[string]string{"name": `"t"`}},
		{"stateless, the client's revision members kept", EraStateless,
			`{"_meta":{"io.modelcontextprotocol/clientCapabilities":{"roots":{}},"io.modelcontextprotocol/logLevel":"error","progressToken":1}}`, "1",
			map[string]string{
				mcp.MetaProtocolVersion:    `"` + mcp.Version20260728 + `"`,
				mcp.MetaClientCapabilities: `{"roots":{}}`,
				mcp.MetaLogLevel:           `"error"`,
				"progressToken":            `"tn-x"`,
			}, nil},
		{"stateless, empty params", EraStateless, ``, "", with(revision, "progressToken", `"tn-x"`), nil},
		{"stateless, a member name with escapes kept as written", EraStateless, `{"_meta":{"k\u0022q\\":[1]}}`, "",
			with(with(revision, "progressToken", `"tn-x"`), `k"q\`, `[1]`), nil},
	}
	// The capabilities a session's client declared go to a stateless bundle in place of
	// the node's; a client's own _meta still wins, and a session bundle is told nothing.
	type capsCase struct {
		prepareCase
		caps   string
		rename string // the name the bundle knows the tool by
	}
	all := []capsCase{
		{prepareCase{"stateless, the session client's capabilities", EraStateless, `{"name":"t"}`, "",
			with(with(revision, "progressToken", `"tn-x"`), mcp.MetaClientCapabilities, `{"roots":{"listChanged":true}}`),
			map[string]string{"name": `"t"`}}, `{"roots":{"listChanged":true}}`, ""},
		{prepareCase{"stateless, no capabilities declared", EraStateless, `{"name":"t"}`, "",
			with(with(revision, "progressToken", `"tn-x"`), mcp.MetaClientCapabilities, `{}`),
			map[string]string{"name": `"t"`}}, `{}`, ""},
		{prepareCase{"stateless, the client's own _meta wins over its session", EraStateless,
			`{"_meta":{"io.modelcontextprotocol/clientCapabilities":{"sampling":{}}}}`, "",
			with(with(revision, "progressToken", `"tn-x"`), mcp.MetaClientCapabilities, `{"sampling":{}}`), nil}, `{"roots":{}}`, ""},
		{prepareCase{"session, capabilities not sent", EraSession, `{"name":"t"}`, "",
			map[string]string{"progressToken": `"tn-x"`}, map[string]string{"name": `"t"`}}, `{"roots":{}}`, ""},
		// The tool is renamed in the same edit, wherever the members are.
		{prepareCase{"stateless, renamed", EraStateless,
			`{"_meta":{"io.modelcontextprotocol/clientCapabilities":{}},"name":"b.t","arguments":{"name":"x"}}`, "",
			with(with(revision, "progressToken", `"tn-x"`), mcp.MetaClientCapabilities, `{}`),
			map[string]string{"name": `"t"`, "arguments": `{"name":"x"}`}}, "", "t"},
		{prepareCase{"session, renamed", EraSession, `{"arguments":{},"name":"b.t"}`, "",
			map[string]string{"progressToken": `"tn-x"`}, map[string]string{"name": `"t"`, "arguments": `{}`}}, "", "t"},
		// A 2026-07-28 client's call to a session bundle loses its revision's members in
		// the same edit.
		{prepareCase{"session, a 2026-07-28 call renamed", EraSession,
			`{"name":"b.t","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":"c","io.modelcontextprotocol/clientCapabilities":{},"x":1},"arguments":{}}`,
			`"c"`, map[string]string{"progressToken": `"tn-x"`, "x": `1`}, map[string]string{"name": `"t"`, "arguments": `{}`}}, "", "t"},
	}
	for _, tt := range tests {
		all = append(all, capsCase{prepareCase: tt})
	}
	// One client per era serves every case, each made twice: the merge a stateless call
	// keeps for the next must serve the same _meta again and no other.
	clients := map[Era]*Client{}
	for _, era := range []Era{EraSession, EraStateless} {
		c := &Client{}
		c.setMeta([]byte(info), []byte(caps))
		c.era.Store(uint32(era))
		clients[era] = c
	}
	var twice []capsCase
	for _, tt := range all {
		twice = append(twice, tt, tt)
	}
	for _, tt := range twice {
		t.Run(tt.name, func(t *testing.T) {
			var caps json.RawMessage
			if tt.caps != "" {
				caps = json.RawMessage(tt.caps)
			}
			out, old := clients[tt.era].prepare(json.RawMessage(tt.params), Edit{Name: tt.rename, Token: "tn-x", Caller: Caller{Caps: caps}})
			if string(old) != tt.wantOld {
				t.Errorf("old token = %s, want %s", old, tt.wantOld)
			}
			if n := bytes.Count(out, []byte(`"progressToken"`)); n != 1 {
				t.Errorf("%d progress tokens in %s", n, out)
			}
			var got map[string]json.RawMessage
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("params are not JSON: %v: %s", err, out)
			}
			var meta map[string]json.RawMessage
			if err := json.Unmarshal(got["_meta"], &meta); err != nil {
				t.Fatalf("_meta: %v: %s", err, out)
			}
			if gm := compact(t, meta); !reflect.DeepEqual(gm, tt.wantMeta) {
				t.Errorf("_meta = %v, want %v", gm, tt.wantMeta)
			}
			delete(got, "_meta")
			if tt.keepOther == nil {
				tt.keepOther = map[string]string{}
			}
			if gm := compact(t, got); !reflect.DeepEqual(gm, tt.keepOther) {
				t.Errorf("other members = %v, want %v", gm, tt.keepOther)
			}
		})
	}
}

// A stateless bundle is asked for the log messages the caller wants: every level when the
// node knows nothing of it, its level when it has one, none when it wants none; a level in
// the client's own _meta wins. Each case comes twice, after another: the merge kept for the
// next call serves the same caller only.
func TestPrepareTellsTheCallersLogLevel(t *testing.T) {
	c := &Client{}
	c.setMeta([]byte(`{"name":"toolnode","version":"1"}`), []byte(`{}`))
	c.era.Store(uint32(EraStateless))
	own := `{"_meta":{"io.modelcontextprotocol/logLevel":"info"}}`
	tests := []struct {
		name, params string
		caller       Caller
		want         string // the logLevel member sent, "" for none
	}{
		{"nothing known", `{}`, Caller{}, `"debug"`},
		{"a session that set a level", `{}`, Caller{LogLevel: "error"}, `"error"`},
		{"a stateless request that named none", `{}`, Caller{NoLogs: true}, ``},
		{"the client's own level", own, Caller{NoLogs: true}, `"info"`},
	}
	for range 2 {
		for _, tt := range tests {
			out, _ := c.prepare(json.RawMessage(tt.params), Edit{Token: "tn-x", Caller: tt.caller})
			var p struct {
				Meta map[string]json.RawMessage `json:"_meta"`
			}
			if err := json.Unmarshal(out, &p); err != nil {
				t.Fatalf("%s: %v: %s", tt.name, err, out)
			}
			if got := p.Meta[mcp.MetaLogLevel]; string(got) != tt.want {
				t.Errorf("%s: logLevel %s, want %s, in %s", tt.name, got, tt.want, out)
			}
		}
	}
}

// with is m with k set to v.
func with(m map[string]string, k, v string) map[string]string {
	out := map[string]string{}
	for mk, mv := range m {
		out[mk] = mv
	}
	out[k] = v
	return out
}

func compact(t *testing.T, m map[string]json.RawMessage) map[string]string {
	t.Helper()
	out := map[string]string{}
	for k, v := range m {
		var x any
		if err := json.Unmarshal(v, &x); err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		b, _ := json.Marshal(x)
		out[k] = string(b)
	}
	return out
}

// TestSessionBundlesGetNoRevisionMeta: a 2026-07-28 client's call reaches a bundle spoken
// to in a session without the members that revision puts in every request, and with
// everything else it carried.
func TestSessionBundlesGetNoRevisionMeta(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"no _meta", `{"name":"a","arguments":{"io.modelcontextprotocol/x":1}}`, `{"name":"a","arguments":{"io.modelcontextprotocol/x":1}}`},
		{"revision members only",
			`{"name":"a","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"info"}}`,
			`{"name":"a","_meta":{}}`},
		{"others kept",
			`{"_meta":{"progressToken":7,"io.modelcontextprotocol/clientInfo":{"name":"c"},"io.modelcontextprotocol/related-task":{"taskId":"t"}},"name":"a"}`,
			`{"_meta":{"progressToken":7,"io.modelcontextprotocol/related-task":{"taskId":"t"}},"name":"a"}`},
		{"_meta not an object", `{"_meta":null,"io.modelcontextprotocol/protocolVersion":1}`, `{"_meta":null,"io.modelcontextprotocol/protocolVersion":1}`},
	}
	c := &Client{}
	c.era.Store(uint32(EraSession))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := c.prepare(json.RawMessage(tt.in), Edit{})
			var g, w any
			if err := json.Unmarshal(got, &g); err != nil {
				t.Fatalf("%s: %v", got, err)
			}
			_ = json.Unmarshal([]byte(tt.want), &w)
			if !reflect.DeepEqual(g, w) {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

// TestTokenTagNamesTheCall: a progress token made of the node's tag and the request's id
// replaces the client's, in both eras, and TokenID reads the id back from it alone.
func TestTokenTagNamesTheCall(t *testing.T) {
	const tag = "tn-AbC_9-"
	for _, era := range []Era{EraSession, EraStateless} {
		c := &Client{}
		c.setMeta([]byte(`{"name":"toolnode","version":"1"}`), []byte(`{}`))
		c.era.Store(uint32(era))
		out, old := c.prepare(json.RawMessage(`{"name":"a","_meta":{"progressToken":"mine"}}`), Edit{TokenTag: tag, id: rpc.Int(4217)})
		var p struct {
			Meta struct {
				ProgressToken string `json:"progressToken"`
			} `json:"_meta"`
		}
		if err := json.Unmarshal(out, &p); err != nil {
			t.Fatalf("era %d: %v: %s", era, err, out)
		}
		if p.Meta.ProgressToken != tag+"4217" || string(old) != `"mine"` {
			t.Errorf("era %d: token %q, the client's %s, in %s", era, p.Meta.ProgressToken, old, out)
		}
		if id, ok := TokenID(p.Meta.ProgressToken, tag); !ok || id != 4217 {
			t.Errorf("era %d: TokenID = %d, %v", era, id, ok)
		}
	}
	for _, token := range []string{"", tag, "tn-other-1", tag + "12x", tag + "-1", tag + "123456789012345678901", "4217"} {
		if id, ok := TokenID(token, tag); ok {
			t.Errorf("TokenID(%q) = %d, want none", token, id)
		}
	}
}
