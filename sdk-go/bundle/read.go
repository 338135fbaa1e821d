package bundle

import (
	"encoding/json"

	"github.com/toolnode/toolnode/sdk-go/mcp"
	"github.com/toolnode/toolnode/sdk-go/rawjson"
)

// Every line is a request or an answer, and most are tool calls: their few members are
// read in one pass over the line, after one check that it is JSON, instead of decoding it
// with encoding/json twice (the envelope, then the params, each checked and scanned again).
// What the fast path does not expect (a member of the wrong type, an array) goes through
// encoding/json as before, so that errors read the same.

// readRequest reads the envelope of one line of input; valid says whether rawjson.Valid
// took the line. One it did not is read by encoding/json, which says why it fails.
func readRequest(line []byte, valid bool) (request, error) {
	var req request
	if !valid || !isObject(line) {
		return req, json.Unmarshal(line, &req) // fails, saying why
	}
	f := fields{ok: true}
	rawjson.Members(line, func(name rawjson.Name, v []byte) {
		switch {
		case name.Is("jsonrpc"):
			req.JSONRPC = f.str(v)
		case name.Is("id"):
			req.ID = v
		case name.Is("method"):
			req.Method = f.str(v)
		case name.Is("params"):
			req.Params = v
		case name.Is("result"):
			req.Result = v
		case name.Is("error"):
			req.Error = v
		}
	})
	if !f.ok {
		req = request{}
		return req, json.Unmarshal(line, &req)
	}
	return req, nil
}

// readCallParams reads the params of a tools/call, which readRequest has checked.
func readCallParams(params json.RawMessage, p *toolCallParams) *RPCError {
	if len(params) == 0 || string(params) == "null" {
		return nil
	}
	f := fields{ok: isObject(params)}
	rawjson.Members(params, func(name rawjson.Name, v []byte) {
		switch {
		case name.Is("name"):
			p.Name = f.str(v)
		case name.Is("arguments"):
			p.Arguments = v
		case name.Is("_meta"):
			switch {
			case string(v) == "null":
				p.Meta = nil
			case isObject(v):
				p.Meta = &mcp.StatelessMeta{}
				f.ok = f.ok && readMeta(v, p.Meta)
			default:
				f.ok = false
			}
		case name.Is("inputResponses"):
			p.InputResponses = v
		case name.Is("requestState"):
			p.RequestState = nil
			if string(v) != "null" {
				s := f.str(v)
				p.RequestState = &s
			}
		}
	})
	if !f.ok {
		*p = toolCallParams{}
		return decodeParams(params, p)
	}
	return nil
}

// readMeta reads the members of a request's _meta the server looks at, and reports
// whether they have the types they must.
func readMeta(raw []byte, m *mcp.StatelessMeta) bool {
	f := fields{ok: true}
	rawjson.Members(raw, func(name rawjson.Name, v []byte) {
		switch {
		case name.Is(mcp.MetaProtocolVersion):
			m.ProtocolVersion = f.str(v, mcp.Version20260728)
		case name.Is(mcp.MetaLogLevel):
			m.LogLevel = f.str(v, "debug", "info", "warning", "error")
		case name.Is(mcp.MetaClientCapabilities):
			m.ClientCapabilities = v
		case name.Is(mcp.MetaClientInfo):
			m.ClientInfo = v
		case name.Is("progressToken"):
			m.ProgressToken = v
		case name.Is("traceparent"):
			m.Traceparent = v
		case name.Is("tracestate"):
			m.Tracestate = v
		}
	})
	return f.ok
}

// fields records whether every member read so far had the type it must.
type fields struct{ ok bool }

// str reads a string member; any other value marks the read failed. A value among known,
// as every call spells it, is had without a copy.
func (f *fields) str(v []byte, known ...string) string {
	if len(v) > 2 && v[0] == '"' {
		for _, k := range known {
			if string(v[1:len(v)-1]) == k {
				return k
			}
		}
	}
	s, ok := rawjson.String(v)
	f.ok = f.ok && ok
	return s
}

// isObject reports whether the JSON text b is an object.
func isObject(b []byte) bool {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return c == '{'
	}
	return false
}
