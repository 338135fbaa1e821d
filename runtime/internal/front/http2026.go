package front

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

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

// stateless serves a request of a 2026-07-28 client: no session, every request checked and
// answered on its own, on the POST that carries it.
func (h *HTTPHandler) stateless(w http.ResponseWriter, r *http.Request, msg *rpc.Message, f *fields) {
	fail := func(status int, err *rpc.Error) { writeMessage(w, status, "", rpc.Failure(msg.ID, err)) }
	switch {
	case msg.IsNotification():
		w.WriteHeader(http.StatusAccepted) // the revision defines none over HTTP; nothing to do
		return
	case msg.IsResponse():
		fail(http.StatusBadRequest, rpc.Errorf(mcp.CodeInvalidRequest, "invalid request: a client without a session sends no responses"))
		return
	}
	if removedIn2026(msg.Method) {
		// Before any other check: a 2025-era call (logging/setLevel from a client library
		// that still sends it) learns plainly that the method is gone.
		fail(http.StatusNotFound, rpc.Errorf(mcp.CodeMethodNotFound, "method %q not found: protocol version %s has no %s", msg.Method, mcp.Version20260728, msg.Method))
		return
	}
	if err := h.checkHeaders(r, msg, f); err != nil {
		fail(http.StatusBadRequest, err)
		return
	}
	meta, err := h.srv.metas.read(f)
	if err != nil {
		fail(http.StatusBadRequest, err)
		return
	}
	if msg.Method == mcp.MethodSubscriptionsListen {
		st := h.newStream(w, "", nil)
		defer st.close()
		h.listen(r, st, msg)
		return
	}
	// The call's context is the request's: a client that leaves cancels it. A request that
	// may have messages before its answer gets an event stream, which its context carries
	// for them; any other is answered as plain JSON, with no stream to set up.
	ctx := r.Context()
	var st *stream
	if meta.streams() {
		st = h.newStream(w, "", nil)
		defer st.close()
		ctx = context.WithValue(ctx, streamKey{}, st)
	}
	call, berr := h.views.get(h.srv, streamOutbound{}, meta, clientOf(r), "tcp").Begin(ctx, msg.ID)
	if berr != nil {
		fail(http.StatusBadRequest, rpc.AsError(berr))
		return
	}
	call.fields = *f
	if st != nil {
		h.streamCall(r, st, call, msg, statelessStatus)
		return
	}
	res, rpcErr := call.Handle(msg.Method, msg.Params)
	if rpcErr != nil {
		fail(statelessStatus(rpcErr), rpcErr)
		return
	}
	writeMessage(w, http.StatusOK, "", rpc.Result(msg.ID, res))
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

// checkHeaders checks that the headers mirroring the body say what the body says: the
// protocol version, the method, the name of a tool, prompt or resource, and the tool
// arguments a tool marks with x-mcp-header. A mismatch is -32020. f holds the members of
// the request's params.
func (h *HTTPHandler) checkHeaders(r *http.Request, msg *rpc.Message, f *fields) *rpc.Error {
	mismatch := func(format string, args ...any) *rpc.Error {
		return rpc.Errorf(mcp.CodeHeaderMismatch, "header mismatch: "+format, args...)
	}
	if raw := f.version; raw != nil {
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
	case got != msg.Method:
		return mismatch("%s header %q does not match the body's method %q", HeaderMethod, got, msg.Method)
	}
	if _, ok := mrtrMethod(msg.Method); ok {
		raw := f.target(msg.Method)
		got, present := r.Header[http.CanonicalHeaderKey(HeaderName)]
		if !present {
			return mismatch("missing %s header", HeaderName)
		}
		if v, ok := headerValue(got[0]); !ok || !rawjson.StringIs(raw, v) {
			want, _ := rawjson.String(raw)
			return mismatch("%s header value %q does not match body value %q", HeaderName, got[0], want)
		}
	}
	if msg.Method == mcp.MethodToolsCall {
		return h.checkParamHeaders(r, msg.Params, f.name, mismatch)
	}
	return nil
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
// it. rawName is the tool's name as params has it.
func (h *HTTPHandler) checkParamHeaders(r *http.Request, params, rawName json.RawMessage, mismatch func(string, ...any) *rpc.Error) *rpc.Error {
	cat := h.srv.node.Catalog()
	if !cat.Mirrors() {
		return nil // the usual case: no tool has arguments to check
	}
	name, ok := rawjson.String(rawName)
	if !ok {
		return nil // the call itself reports bad params
	}
	e, ok := cat.Lookup(name)
	if !ok || !e.Mirrors {
		return nil // most tools mirror nothing: no need to walk the schema
	}
	schema, _ := rawjson.Member(e.JSON, "inputSchema")
	arguments, _ := rawjson.Member(params, "arguments")
	for _, ph := range paramHeaders(schema) {
		want, present := argAt(arguments, ph.path)
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
func (h *HTTPHandler) listen(r *http.Request, st *stream, msg *rpc.Message) {
	l, ack, err := h.srv.newListener(r.Context(), msg, st.send)
	if err != nil {
		writeMessage(st.w, http.StatusOK, "", rpc.Failure(msg.ID, err))
		return
	}
	defer l.close()
	_ = st.send(r.Context(), ack)
	t := time.NewTicker(h.opts.KeepAlive)
	defer t.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-h.stop:
			// A graceful end: the listen request's own answer.
			_ = st.finish(http.StatusOK, rpc.Result(msg.ID, l.endResult()))
			return
		case <-st.closed:
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
