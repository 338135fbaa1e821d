package node

import (
	"encoding/json"
	"github.com/toolnode/toolnode/runtime/internal/oauth"
	"strings"

	"github.com/toolnode/toolnode/runtime/internal/rpc"
	"github.com/toolnode/toolnode/sdk-go/mcp"
	"github.com/toolnode/toolnode/sdk-go/rawjson"
)

// A Request is a client's request as the front read it, once: the members of its params the
// node decides and acts on, each read exactly as named. Access, audit, telemetry, routing
// and the edit that readies the request for its bundle all read these fields, never params
// again, so that what is checked is what is done. It is input only: what the node does
// with the request is its call's record (call) and, once answered, its Outcome.
//
// A member the node reads may not also come spelled in another case ("Name" beside
// "name"): the node reads names exactly, but a bundle decoding params with a
// case-insensitive decoder (Go's encoding/json among them) could act on the other
// spelling. ReadRequest refuses such params.
type Request struct {
	// Method is the JSON-RPC method.
	Method string
	// Params are the request's params as they came; nil when it had none.
	Params json.RawMessage
	// Name is the tool or prompt a tools/call or prompts/get names, as the client gave it
	// (a strict client's rendering is mapped back by the front, see Canonical).
	Name string
	// Canonical is the catalog's name of the target: Name, or what a strict client's
	// rendering maps back to. The front sets it; "" means Name.
	Canonical string
	// URI is the resource resources/read, resources/subscribe and resources/unsubscribe
	// name.
	URI string
	// Arguments are the arguments of a tools/call or prompts/get; nil when absent.
	Arguments json.RawMessage
	// Meta is params' _meta; nil when absent.
	Meta json.RawMessage
	// Ref is the ref of a completion/complete: its type and the prompt's name or the
	// template's URI.
	Ref Ref
	// State and Responses are the requestState and inputResponses of a retry of the
	// 2026-07-28 revision; nil for a first request.
	State, Responses json.RawMessage
	// Cursor is the cursor of a */list request; "" for its first page.
	Cursor string
	// TaskID is the task tasks/get, tasks/update and tasks/cancel name.
	TaskID string
	// ProgressToken is the progress token in Meta; nil when the client asked for none.
	ProgressToken json.RawMessage

	// Allow is the caller's filter: what it may see and use; nil for everything. The front
	// sets it from the access file.
	Allow Allow
	// Guard says which of the caller's calls need approval, and what it may approve; nil
	// when none do. The front sets it from the access file.
	Guard *Guard
	// Token is the caller's verified OAuth access token, which a bundle with
	// "token_exchange" gets a token of its own from; nil without one. The HTTP front sets
	// it from the HTTP request that carried this request.
	Token *oauth.Token
	// Strict says the caller is shown tool names in their underscore form (a client that
	// refuses dots): toolnode.search answers with that form. The front sets it.
	Strict bool
}

// Ref is what a completion/complete completes.
type Ref struct {
	// Type is "ref/prompt" or "ref/resource".
	Type string
	// Name is the prompt's name (ref/prompt); URI the template's (ref/resource).
	Name, URI string
}

// Target is the catalog's name of the tool or prompt the request names.
func (r *Request) Target() string {
	if r.Canonical != "" {
		return r.Canonical
	}
	return r.Name
}

// requestMembers are the members of params ReadRequest reads, by method.
var requestMembers = map[string][]string{
	mcp.MethodToolsCall:         {"name", "arguments"},
	mcp.MethodPromptsGet:        {"name", "arguments"},
	mcp.MethodResourcesRead:     {"uri"},
	mcp.MethodResourcesSub:      {"uri"},
	mcp.MethodResourcesUnsub:    {"uri"},
	mcp.MethodComplete:          {"ref"},
	mcp.MethodToolsList:         {"cursor"},
	mcp.MethodPromptsList:       {"cursor"},
	mcp.MethodResourcesList:     {"cursor"},
	mcp.MethodResourceTemplates: {"cursor"},
	mcp.MethodTasksGet:          {"taskId"},
	mcp.MethodTasksUpdate:       {"taskId"},
	mcp.MethodTasksCancel:       {"taskId"},
	mcp.MethodSkillsList:        {"cursor"},
	mcp.MethodSkillsGet:         {"uri"},
}

// ReadRequest reads what the node acts on from a request's params, which rpc.Parse has
// checked (valid JSON, no member named twice). Its errors are -32602 and say what is wrong;
// with one, the Request holds what could be read, for the audit log.
func ReadRequest(method string, params json.RawMessage) (*Request, *rpc.Error) {
	r := &Request{Method: method, Params: params}
	if len(params) == 0 || string(params) == "null" {
		return r, r.check()
	}
	if params[0] != '{' {
		return r, invalidParams(method + " params must be an object")
	}
	wanted := requestMembers[method]
	var bad *rpc.Error
	rawjson.Members(params, func(name rawjson.Name, value []byte) {
		if bad != nil {
			return
		}
		switch {
		case name.Is("_meta"):
			r.Meta = value
			return
		case name.Is("requestState"):
			r.State = value
			return
		case name.Is("inputResponses"):
			r.Responses = value
			return
		}
		for _, w := range wanted {
			if name.Is(w) {
				bad = r.take(w, value)
				return
			}
		}
		bad = misspelled(method, name.String(), append(wanted, "_meta", "requestState", "inputResponses"))
	})
	if bad != nil {
		return r, bad
	}
	if r.Meta != nil {
		if t, ok := rawjson.Member(r.Meta, "progressToken"); ok && string(t) != "null" {
			r.ProgressToken = t
		}
	}
	return r, r.check()
}

// take reads the member key of params.
func (r *Request) take(key string, value []byte) *rpc.Error {
	str := func(dst *string) *rpc.Error {
		s, ok := rawjson.String(value)
		if !ok {
			return invalidParams(r.Method + " params: \"" + key + "\" must be a string")
		}
		*dst = s
		return nil
	}
	switch key {
	case "name":
		return str(&r.Name)
	case "uri":
		return str(&r.URI)
	case "taskId":
		return str(&r.TaskID)
	case "cursor":
		if string(value) == "null" {
			return nil
		}
		return str(&r.Cursor)
	case "arguments":
		if string(value) != "null" {
			r.Arguments = value
		}
	case "ref":
		return r.readRef(value)
	}
	return nil
}

// readRef reads the ref of a completion/complete, with the same care as params.
func (r *Request) readRef(value []byte) *rpc.Error {
	if len(value) == 0 || value[0] != '{' {
		return invalidParams("completion/complete needs a \"ref\" object")
	}
	var bad *rpc.Error
	rawjson.Members(value, func(name rawjson.Name, v []byte) {
		var dst *string
		switch {
		case bad != nil:
			return
		case name.Is("type"):
			dst = &r.Ref.Type
		case name.Is("name"):
			dst = &r.Ref.Name
		case name.Is("uri"):
			dst = &r.Ref.URI
		default:
			bad = misspelled("completion/complete ref", name.String(), []string{"type", "name", "uri"})
			return
		}
		s, ok := rawjson.String(v)
		if !ok {
			bad = invalidParams("completion/complete ref: \"" + name.String() + "\" must be a string")
			return
		}
		*dst = s
	})
	return bad
}

// misspelled refuses a member that spells one the node reads in another case; any other
// member is left alone (nil).
func misspelled(what, name string, known []string) *rpc.Error {
	for _, k := range known {
		if strings.EqualFold(name, k) {
			return invalidParams(what + " params: member \"" + name + "\" is not \"" + k + "\": the node reads member names " +
				"exactly, and a bundle might read \"" + name + "\" as \"" + k + "\"; send \"" + k + "\" alone")
		}
	}
	return nil
}

// check refuses a request that lacks what its method needs.
func (r *Request) check() *rpc.Error {
	switch r.Method {
	case mcp.MethodToolsCall:
		if r.Name == "" {
			return invalidParams("tools/call needs a string \"name\"")
		}
	case mcp.MethodPromptsGet:
		if r.Name == "" {
			return invalidParams("prompts/get needs a string \"name\"")
		}
	case mcp.MethodResourcesRead, mcp.MethodResourcesSub, mcp.MethodResourcesUnsub, mcp.MethodSkillsGet:
		if r.URI == "" {
			return invalidParams(r.Method + " needs a string \"uri\"")
		}
	case mcp.MethodTasksGet, mcp.MethodTasksUpdate, mcp.MethodTasksCancel:
		if r.TaskID == "" {
			return invalidParams(r.Method + " needs a string \"taskId\"")
		}
	case mcp.MethodComplete:
		if r.Ref.Type == "" {
			return invalidParams("completion/complete needs a \"ref\" object with its \"type\"")
		}
	}
	return nil
}
