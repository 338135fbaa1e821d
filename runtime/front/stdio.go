package front

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"
	"github.com/sourcegraph/jsonrpc2"

	"github.com/toolnode/toolnode/runtime/jsonl"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// ServeStdio serves one client over newline-delimited JSON-RPC on in and out until in ends
// or ctx is cancelled. Lines that are not JSON-RPC requests are answered with a parse or
// invalid-request error and the session goes on.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	var stream *jsonl.Stream
	stream = jsonl.New(in, out, nil, jsonl.Options{
		Splice: []string{"params"},
		OnJunk: func(line []byte, err error) {
			s.opts.Logger.Warn("client sent a line that is not a JSON-RPC message", "error", err)
			if b, encErr := json.Marshal(junkAnswer(line, err)); encErr == nil {
				_ = stream.WriteLine(b)
			}
		},
	})
	h := &stdioHandler{srv: s, ready: make(chan struct{})}
	stream.SetIntercept(h.intercept)
	h.stream = stream
	conn := jsonrpc2.NewConn(ctx, stream, h,
		jsonrpc2.SetLogger(s.opts.Logger.StandardLogger(&hclog.StandardLoggerOptions{InferLevels: true})))
	h.sess = s.NewSession(connOutbound{conn: conn, ids: new(atomic.Uint64)})
	close(h.ready)
	defer h.sess.Close()
	select {
	case <-conn.DisconnectNotify():
	case <-ctx.Done():
		conn.Close()
	}
	return nil
}

// junkAnswer is the error response to a line that could not be taken as a message: -32700
// when it is not JSON, -32600 when it is JSON but not a request, with the id when one can
// be found.
func junkAnswer(line []byte, err error) map[string]any {
	resp := map[string]any{"jsonrpc": "2.0", "id": nil}
	var probe struct {
		ID json.RawMessage `json:"id"`
	}
	switch {
	case jsonl.IsLineTooLong(err):
		resp["error"] = map[string]any{"code": mcp.CodeInvalidRequest, "message": fmt.Sprintf("message too large: %v", err)}
	case !json.Valid(line):
		resp["error"] = map[string]any{"code": mcp.CodeParseError, "message": "parse error: not valid JSON"}
	default:
		if len(line) > 0 && line[0] == '[' {
			resp["error"] = map[string]any{"code": mcp.CodeInvalidRequest, "message": "JSON-RPC batches are not supported over stdio"}
			break
		}
		if json.Unmarshal(line, &probe) == nil && len(probe.ID) > 0 {
			resp["id"] = probe.ID
		}
		resp["error"] = map[string]any{"code": mcp.CodeInvalidRequest, "message": fmt.Sprintf("invalid request: %v", err)}
	}
	return resp
}

type connOutbound struct {
	conn *jsonrpc2.Conn
	ids  *atomic.Uint64
}

func (o connOutbound) Notify(ctx context.Context, method string, params any) error {
	return o.conn.Notify(ctx, method, params)
}

func (o connOutbound) Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	// Ids of our own, apart from the client's numbering, so that a cancellation can name it.
	id := jsonrpc2.ID{Str: "toolnode-" + strconv.FormatUint(o.ids.Add(1), 10), IsString: true}
	var res json.RawMessage
	err := o.conn.Call(ctx, method, params, &res, jsonrpc2.PickID(id))
	if err != nil && ctx.Err() != nil {
		_ = o.conn.Notify(context.WithoutCancel(ctx), mcp.NotifyCancelled,
			mcp.CancelledParams{RequestID: json.RawMessage(strconv.Quote(id.Str)), Reason: "the bundle no longer needs the answer"})
	}
	if err != nil {
		return nil, err
	}
	return res, nil
}

// stdioHandler runs on jsonrpc2's reading goroutine: it registers each request before
// reading the next message (so a cancellation that follows finds it) and serves it on a
// goroutine of its own (so calls run concurrently).
type stdioHandler struct {
	srv    *Server
	stream *jsonl.Stream
	sess   *Session
	ready  chan struct{} // closed once sess is set
}

func (h *stdioHandler) Handle(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) {
	<-h.ready
	var params json.RawMessage
	if req.Params != nil {
		params = h.stream.Take(*req.Params)
	}
	if req.Notif {
		h.sess.HandleNotification(req.Method, params)
		return
	}
	call := h.sess.Begin(ctx, req.ID)
	reply := func(res any, rpcErr *jsonrpc2.Error) {
		switch {
		case call.Cancelled() && req.Method != mcp.MethodInitialize:
			// The spec asks receivers not to answer a cancelled request.
		case rpcErr != nil:
			_ = conn.ReplyWithError(context.Background(), req.ID, rpcErr)
		default:
			h.reply(req.ID, res)
		}
	}
	// A tools/call is routed right here, on the goroutine reading the client: it never
	// waits (the write to the bundle goes aside when its pipe is full), and a goroutine
	// hand-off would cost more than the routing. Anything else may wait, so it gets a
	// goroutine of its own.
	if req.Method == mcp.MethodToolsCall {
		call.HandleAsync(req.Method, params, reply)
		return
	}
	go call.HandleAsync(req.Method, params, reply)
}

// intercept takes tools/call requests past jsonrpc2, whose decoding of a request (into a
// map, then back to JSON) costs more than the rest of routing it. Everything else, and
// anything odd about a tools/call, is left to jsonrpc2.
func (h *stdioHandler) intercept(line []byte) bool {
	var id, method, params []byte
	var other bool
	jsonl.Members(line, func(key string, value []byte) {
		switch key {
		case "id":
			id = value
		case "method":
			method = value
		case "params":
			params = value
		case "jsonrpc":
		default:
			other = true
		}
	})
	if other || id == nil || params == nil || string(method) != `"tools/call"` || !json.Valid(line) {
		return false
	}
	var rid jsonrpc2.ID
	if rid.UnmarshalJSON(id) != nil {
		return false
	}
	<-h.ready
	params = bytes.Clone(params)
	call := h.sess.Begin(context.Background(), rid)
	call.HandleAsync(mcp.MethodToolsCall, params, func(res any, rpcErr *jsonrpc2.Error) {
		switch {
		case call.Cancelled():
		case rpcErr != nil:
			b, _ := json.Marshal(struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Error   *jsonrpc2.Error `json:"error"`
			}{"2.0", id, rpcErr})
			_ = h.stream.WriteLine(b)
		default:
			h.reply(rid, res)
		}
	})
	return true
}

// reply writes a result; one that is already JSON goes out as it is, in one write.
func (h *stdioHandler) reply(id jsonrpc2.ID, res any) {
	raw, ok := res.(json.RawMessage)
	if !ok {
		raw, _ = json.Marshal(res)
	}
	idJSON, _ := id.MarshalJSON()
	line := make([]byte, 0, len(raw)+len(idJSON)+40)
	line = append(append(line, `{"jsonrpc":"2.0","id":`...), idJSON...)
	line = append(append(append(line, `,"result":`...), raw...), '}')
	_ = h.stream.WriteLine(line)
}
