package httpfront

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/front"
	"github.com/toolnode/toolnode/runtime/internal/node"
	"github.com/toolnode/toolnode/runtime/internal/rpc"
	"github.com/toolnode/toolnode/sdk-go/mcp"
	"github.com/toolnode/toolnode/sdk-go/rawjson"
)

// HTTP headers of the 2026-07-28 revision, which mirror body fields for intermediaries.
const (
	HeaderMethod     = "Mcp-Method"
	HeaderName       = "Mcp-Name"
	HeaderParamStart = "Mcp-Param-"
)

// stateless serves a message of a 2026-07-28 client: no session, every request admitted
// (a, see Handler.admit) and answered on its own, on the POST that carries it. a is zero
// for a notification or a response.
func (h *Handler) stateless(w http.ResponseWriter, r *http.Request, id front.Identity, msg *rpc.Message, a front.Admitted, body []byte, forwarded bool) {
	fail := func(status int, err *rpc.Error) { writeMessage(w, status, nil, rpc.Failure(msg.ID, err)) }
	switch {
	case msg.IsNotification():
		w.WriteHeader(http.StatusAccepted) // the revision defines none over HTTP; nothing to do
		return
	case msg.IsResponse():
		fail(http.StatusBadRequest, rpc.Errorf(mcp.CodeInvalidRequest, "invalid request: a client without a session sends no responses"))
		return
	}
	req, v := a.Req, a.Client
	if state, _ := rawjson.String(req.State); state != "" {
		if owner := h.stateReplica(forwarded, state); owner != "" {
			h.forward(w, r, id, owner, body)
			return
		}
	}
	if err := h.checkParamHeaders(r, req, v); err != nil {
		fail(http.StatusBadRequest, err)
		return
	}
	if a.Listens() {
		st := h.newStream(w, nil, false)
		defer st.close()
		h.listen(r, st, msg, req, v)
		return
	}
	// The call's context is the request's: a client that leaves cancels it. A request that
	// may have messages before its answer gets an event stream, its way back for them; any
	// other is answered as plain JSON, with no stream to set up.
	call := v.Begin(r.Context(), msg.ID)
	if v.Streams() {
		cs := h.newCallStream(w, nil, false)
		defer cs.close()
		call.SendOn(cs)
		cs.serve(r, call, msg, req, statelessStatus)
		return
	}
	ch := make(answer, 1)
	call.Serve(req, ch)
	o := <-ch
	if o.err != nil {
		fail(statelessStatus(o.err), o.err)
		return
	}
	writeMessage(w, http.StatusOK, nil, rpc.Result(msg.ID, o.res))
}

// noStream is where the messages of a stateless request without a stream would go: it has
// asked for none (see front.MetaEntry.Streams), and takes no requests.
type noStream struct{}

func (noStream) Notify(_ context.Context, method string, _ any) error {
	return fmt.Errorf("send %s: the request has no stream", method)
}

func (noStream) Request(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return nil, errNoRequests()
}

// errNoRequests refuses a request to a client without a session.
func errNoRequests() *rpc.Error {
	return rpc.Errorf(mcp.CodeInternalError, "a client without a session takes no requests (2026-07-28 asks with input_required results)")
}

// refusalStatus is the HTTP status of a stateless request the front's admission refused
// (see front.Refusal): 404 for a method the revision removed, else 400.
func refusalStatus(err *rpc.Error) int {
	if err.Code == mcp.CodeMethodNotFound {
		return http.StatusNotFound
	}
	return http.StatusBadRequest
}

// statelessStatus is the HTTP status of an answer to a stateless request.
func statelessStatus(err *rpc.Error) int {
	switch {
	case err == nil:
		return http.StatusOK
	case err.Code == mcp.CodeMethodNotFound:
		return http.StatusNotFound
	case err.Code == mcp.CodeHeaderMismatch, err.Code == mcp.CodeMissingClientCapability, err.Code == mcp.CodeUnsupportedVersion:
		return http.StatusBadRequest
	}
	return http.StatusOK
}

// mismatch is the -32020 error of a header that does not say what the body says.
func mismatch(format string, args ...any) *rpc.Error {
	return rpc.Errorf(mcp.CodeHeaderMismatch, "header mismatch: "+format, args...)
}

// mirrored is an HTTP request whose headers mirror its body, as the admission of a
// stateless request checks them (a front.StatelessCheck).
type mirrored http.Request

// CheckStateless implements front.StatelessCheck: the headers mirroring the body say what
// the body says.
func (m *mirrored) CheckStateless(req *node.Request, version json.RawMessage) *rpc.Error {
	return checkHeaders((*http.Request)(m), req, version)
}

// checkHeaders checks that the headers mirroring the body say what the body says: the
// protocol version, the method, and the name of a tool or prompt or the URI of a resource.
// A mismatch is -32020. version is the revision the request's _meta names, as written.
func checkHeaders(r *http.Request, req *node.Request, version json.RawMessage) *rpc.Error {
	if raw := version; raw != nil {
		// A version that is not a string is left to readMeta, which refuses it.
		if v, isString := rawjson.String(raw); isString {
			switch got := r.Header.Get(HeaderProtocolVersion); {
			case got == "":
				return mismatch("missing %s header", HeaderProtocolVersion)
			case got != v:
				return mismatch("%s header %q does not match _meta %q", HeaderProtocolVersion, got, v)
			}
		}
	}
	switch got := r.Header.Get(HeaderMethod); {
	case got == "":
		return mismatch("missing %s header", HeaderMethod)
	case got != req.Method:
		return mismatch("%s header %q does not match the body's method %q", HeaderMethod, got, req.Method)
	}
	if target, named := headerTarget(req); named {
		got, present := r.Header[http.CanonicalHeaderKey(HeaderName)]
		if !present {
			return mismatch("missing %s header", HeaderName)
		}
		if v, ok := headerValue(got[0]); !ok || v != target {
			return mismatch("%s header value %q does not match body value %q", HeaderName, got[0], target)
		}
	}
	return nil
}

// headerTarget is what Mcp-Name names for a request: the tool or prompt, the resource's
// URI, or the task; false for a method without one.
func headerTarget(req *node.Request) (string, bool) {
	switch req.Method {
	case mcp.MethodToolsCall, mcp.MethodPromptsGet:
		return req.Name, true
	case mcp.MethodResourcesRead:
		return req.URI, true
	case mcp.MethodTasksGet, mcp.MethodTasksUpdate, mcp.MethodTasksCancel:
		return req.TaskID, true
	}
	return "", false
}

// headerValue decodes a header value that may be in the =?base64?...?= sentinel form.
func headerValue(v string) (string, bool) {
	inner, ok := strings.CutPrefix(v, "=?base64?")
	if !ok {
		for _, c := range []byte(v) {
			if c < 0x20 && c != '\t' || c > 0x7e {
				return "", false
			}
		}
		return v, true
	}
	inner, ok = strings.CutSuffix(inner, "?=")
	if !ok {
		return "", false
	}
	b, err := base64.StdEncoding.DecodeString(inner)
	return string(b), err == nil
}

// checkParamHeaders checks the Mcp-Param-* headers of a tools/call against the arguments the
// tool's inputSchema marks with x-mcp-header: each argument present has its header, equal to
// it. The tool is the one the call reaches, whatever form of its name the client used.
func (h *Handler) checkParamHeaders(r *http.Request, req *node.Request, v *front.Stateless) *rpc.Error {
	cat := h.srv.Node().Catalog()
	if req.Method != mcp.MethodToolsCall || !cat.Mirrors() {
		return nil // the usual case: no tool has arguments to check
	}
	e, ok := cat.Lookup(v.CanonicalName(req.Name))
	if !ok || !e.Mirrors {
		return nil // most tools mirror nothing: no need to walk the schema
	}
	schema, _ := rawjson.Member(e.JSON, "inputSchema")
	for _, ph := range paramHeaders(schema) {
		want, present := argAt(req.Arguments, ph.path)
		got, sent := r.Header[http.CanonicalHeaderKey(HeaderParamStart+ph.header)]
		switch {
		case !present && !sent:
		case !present:
			return mismatch("%s%s header sent for an argument the call does not have", HeaderParamStart, ph.header)
		case !sent:
			return mismatch("missing %s%s header for argument %s", HeaderParamStart, ph.header, strings.Join(ph.path, "."))
		default:
			v, ok := headerValue(got[0])
			if !ok || !sameValue(v, want) {
				return mismatch("%s%s header value %q does not match the argument", HeaderParamStart, ph.header, got[0])
			}
		}
	}
	return nil
}

// paramHeader is an argument a tool mirrors into a header.
type paramHeader struct {
	header string
	path   []string
}

// paramHeaders lists the x-mcp-header annotations of a schema reachable through
// "properties" alone, as the revision allows.
func paramHeaders(schema json.RawMessage) []paramHeader {
	var out []paramHeader
	var walk func(s json.RawMessage, path []string)
	walk = func(s json.RawMessage, path []string) {
		props, ok := rawjson.Member(s, "properties")
		if !ok {
			return
		}
		rawjson.Members(props, func(name rawjson.Name, sub []byte) {
			p := append(append([]string(nil), path...), name.String())
			if raw, ok := rawjson.Member(sub, "x-mcp-header"); ok {
				var name string
				if json.Unmarshal(raw, &name) == nil && name != "" {
					out = append(out, paramHeader{header: name, path: p})
				}
			}
			if len(p) < 8 {
				walk(sub, p)
			}
		})
	}
	walk(schema, nil)
	return out
}

// argAt returns the argument at path, unless it is absent or null.
func argAt(args json.RawMessage, path []string) (json.RawMessage, bool) {
	v := args
	for _, k := range path {
		next, ok := rawjson.Member(v, k)
		if !ok {
			return nil, false
		}
		v = next
	}
	return v, string(v) != "null"
}

// sameValue compares a header value with a JSON argument: strings as they are, integers
// numerically, booleans as true/false.
func sameValue(header string, arg json.RawMessage) bool {
	var s string
	if json.Unmarshal(arg, &s) == nil {
		return header == s
	}
	if a, err := strconv.ParseFloat(string(arg), 64); err == nil {
		b, err := strconv.ParseFloat(header, 64)
		return err == nil && a == b
	}
	return header == string(arg)
}

// listen serves subscriptions/listen: an event stream that stays open and carries the
// notifications the client asked for, each tagged with the id of its listen request.
func (h *Handler) listen(r *http.Request, st *stream, msg *rpc.Message, req *node.Request, v *front.Stateless) {
	l, ack, err := h.srv.Listen(r.Context(), v, msg.ID, req, st.send)
	if err != nil {
		writeMessage(st.w, http.StatusOK, nil, rpc.Failure(msg.ID, err))
		return
	}
	defer l.Close()
	_ = st.send(r.Context(), ack)
	t := time.NewTicker(h.opts.KeepAlive)
	defer t.Stop()
	closed := st.out.Closed()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-h.stop:
			// A graceful end: the listen request's own answer.
			_ = st.finish(http.StatusOK, rpc.Result(msg.ID, l.EndResult()))
			return
		case <-closed:
			return
		case <-t.C:
			_ = st.out.Send([]byte(":\n\n"))
		case <-st.out.Wake():
		}
		if _, err := st.out.WriteQueued(); err != nil {
			return
		}
	}
}
