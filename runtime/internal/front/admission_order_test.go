package front

import (
	"encoding/json"
	"testing"

	"github.com/toolnode/toolnode/runtime/internal/node"
	"github.com/toolnode/toolnode/runtime/internal/rpc"
	"github.com/toolnode/toolnode/sdk-go/mcp"
	"github.com/toolnode/toolnode/sdk-go/rawjson"
)

// recordedCheck is a transport's check of a stateless request that answers err and records
// the version it was given, and whether it ran at all.
type recordedCheck struct {
	err     *rpc.Error
	ran     bool
	version json.RawMessage
}

func (c *recordedCheck) CheckStateless(_ *node.Request, version json.RawMessage) *rpc.Error {
	c.ran, c.version = true, version
	return c.err
}

// TestAdmitChecksInOrder: Admit tells a request's era by its _meta or by what its transport
// names, and answers the first check that fails in the order its doc gives (a method the
// stateless revision removed, the params, the transport's check, the _meta), so that a
// request wrong in several ways gets the same answer on every transport.
func TestAdmitChecksInOrder(t *testing.T) {
	const (
		meta     = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
		badMeta  = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`
		oldMeta  = `"_meta":{"progressToken":"p"}`
		mismatch = mcp.CodeHeaderMismatch
	)
	for _, tc := range []struct {
		name        string
		method      string
		params      string
		version     string // what the transport names beside the request
		sessionOnly bool
		checkFails  bool
		code        int64 // 0: admitted
		stateless   bool  // admitted for a stateless client, or refused by that revision's checks
		checked     bool  // the transport's check ran
		listens     bool
	}{
		{name: "a session's call", method: "tools/call", params: `{"name":"a.echo"}`},
		{name: "a session's call with a _meta that names no revision", method: "tools/call", params: `{"name":"a.echo",` + oldMeta + `}`},
		{name: "a session's misspelled member", method: "tools/call", params: `{"nam":"a.echo"}`, code: mcp.CodeInvalidParams},
		{name: "a stateless call", method: "tools/call", params: `{"name":"a.echo",` + meta + `}`, stateless: true, checked: true},
		{name: "a stateless listen", method: "subscriptions/listen", params: `{` + meta + `}`, stateless: true, checked: true, listens: true},
		{name: "a session's listen", method: "subscriptions/listen", params: `{}`},
		{name: "stateless by the transport alone", method: "tools/list", params: `{}`, version: "2026-07-28",
			code: mcp.CodeInvalidParams, stateless: true, checked: true},
		{name: "a removed method, bad params, bad _meta, bad headers", method: "logging/setLevel", params: `{"lvl":1,` + badMeta + `}`,
			checkFails: true, code: mcp.CodeMethodNotFound, stateless: true},
		{name: "bad params, bad _meta, bad headers", method: "tools/call", params: `{"nam":"a.echo",` + badMeta + `}`,
			checkFails: true, code: mcp.CodeInvalidParams},
		{name: "bad headers, bad _meta", method: "tools/call", params: `{"name":"a.echo",` + badMeta + `}`,
			checkFails: true, code: mismatch, stateless: true, checked: true},
		{name: "a bad _meta", method: "tools/call", params: `{"name":"a.echo",` + badMeta + `}`,
			code: mcp.CodeInvalidParams, stateless: true, checked: true},
		{name: "a revision the node does not serve", method: "tools/list",
			params: `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}`,
			code:   mcp.CodeUnsupportedVersion, stateless: true, checked: true},
		{name: "a batch's element with a stateless _meta", method: "ping", params: `{` + meta + `}`, sessionOnly: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s Server
			check := &recordedCheck{}
			if tc.checkFails {
				check.err = rpc.Errorf(mismatch, "header mismatch")
			}
			a, refused := s.Admit(&Inbound{Method: tc.method, Params: json.RawMessage(tc.params), Version: tc.version,
				SessionOnly: tc.sessionOnly, Check: check})
			switch {
			case tc.code == 0 && refused != nil:
				t.Fatalf("refused: %v", refused.Err)
			case tc.code != 0 && refused == nil:
				t.Fatalf("admitted, want error %d", tc.code)
			case refused != nil:
				if refused.Err.Code != tc.code || refused.Stateless != tc.stateless {
					t.Errorf("refused with %d (stateless %v), want %d (%v): %s", refused.Err.Code, refused.Stateless, tc.code, tc.stateless, refused.Err.Message)
				}
			default:
				if a.Req == nil || a.Req.Method != tc.method || (a.Client != nil) != tc.stateless || a.Listens() != tc.listens {
					t.Errorf("admitted %+v, want a request of %s, stateless %v, listening %v", a, tc.method, tc.stateless, tc.listens)
				}
			}
			if check.ran != tc.checked {
				t.Errorf("the transport's check ran: %v, want %v", check.ran, tc.checked)
			}
			m, _ := rawjson.Member(json.RawMessage(tc.params), "_meta")
			if want, _ := rawjson.Member(m, mcp.MetaProtocolVersion); check.ran && string(check.version) != string(want) {
				t.Errorf("the transport's check was given the revision %s, want %s as written", check.version, want)
			}
		})
	}
}
