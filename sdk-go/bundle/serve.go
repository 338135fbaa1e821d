package bundle

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/toolnode/toolnode/sdk-go/mcp"
	"github.com/toolnode/toolnode/sdk-go/rawjson"
)

// nullID answers messages whose id could not be read, as JSON-RPC says.
const nullID = "null"

// Serve speaks MCP with one client: requests are read from in, one JSON message per line,
// and answers and notifications are written to out the same way. Lines may be of any
// length.
//
// Serve returns nil when in ends, once the calls in flight have answered (their requests to
// the client fail, as no answer can come any more). When ctx is done or out fails, it
// cancels the calls in flight, waits for their handlers and returns the cause; a read
// already blocked on in is left behind and ends when in is closed.
func (s *Server) Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	ss := &session{
		s:         s,
		ctx:       ctx,
		cancel:    cancel,
		log:       s.opts.Logger,
		out:       bufio.NewWriterSize(out, 64<<10),
		inflight:  map[string]*inflight{},
		pending:   map[string]chan reply{},
		subs:      map[string]bool{},
		listens:   map[string]*listen{},
		inputDone: make(chan struct{}),
		readTurn:  make(chan struct{}),
	}
	s.mu.Lock()
	s.sessions[ss] = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.sessions, ss)
		s.mu.Unlock()
	}()

	ended := make(chan error, 1)
	go ss.read(bufio.NewReaderSize(in, 64<<10), ended)
	var err error
	select {
	case err = <-ended:
	case <-ctx.Done():
		err = context.Cause(ctx)
	}
	close(ss.inputDone)
	if err != nil {
		cancel(err)
	}

	ss.mu.Lock()
	ss.closed = true
	ss.mu.Unlock()
	if err != nil {
		// Stopped while the client may still read: its subscriptions end gracefully. At
		// the end of the input nobody is left to tell.
		ss.endListens()
	}
	ss.calls.Wait()
	if ferr := ss.finish(); err == nil {
		err = ferr
	}
	return err
}

// session is the state of one Serve.
type session struct {
	s      *Server
	ctx    context.Context
	cancel context.CancelCauseFunc
	log    *slog.Logger

	minLevel atomic.Int32 // rank of the least severe log level the client wants

	mu       sync.Mutex
	closed   bool                 // no new calls once Serve is ending
	inflight map[string]*inflight // by request id as sent
	calls    sync.WaitGroup
	subs     map[string]bool    // resource URIs the client subscribed to
	listens  map[string]*listen // open subscriptions/listen, by request id as sent

	// Requests to the client wait in pending, by the id given them, for their answer.
	lastID    atomic.Int64
	pending   map[string]chan reply
	inputDone chan struct{} // closed when no answer can come any more
	readTurn  chan struct{} // hands the input to a goroutine whose call is done

	// Answers are written whole under outMu. waiting counts the writers queued for outMu:
	// while there are some, the buffer is left for the last of them to flush, which batches
	// writes under load and never delays a lone answer.
	waiting atomic.Int32
	outMu   sync.Mutex
	out     *bufio.Writer
	outErr  error
	outDone bool
}

type inflight struct {
	cancel    context.CancelFunc
	cancelled bool // by the client: the answer is dropped
}

// reply is the client's answer to a request of ours.
type reply struct {
	result json.RawMessage
	err    *RPCError
}

// request is any incoming JSON-RPC message.
type request struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *RPCError       `json:"error,omitempty"`
}

// notification is a notification, or a request of ours when ID is set.
type notification struct {
	JSONRPC string `json:"jsonrpc"`
	ID      int64  `json:"id,omitempty"`
	Method  string `json:"method"`
	Params  any    `json:"params"`
}

type initializeResult struct {
	ProtocolVersion string             `json:"protocolVersion"`
	Capabilities    any                `json:"capabilities"`
	ServerInfo      mcp.Implementation `json:"serverInfo"`
	Instructions    string             `json:"instructions,omitempty"`
}

// read handles the input line by line. A line that starts a call hands the input over to
// another goroutine and runs the call on this one: the answer then does not wait for another
// goroutine to be woken, which over pipes costs more than a small call itself (a lone
// greet call answers about 1.5 times as fast). A goroutine whose call is done waits to be
// handed the input again rather than ending: a new one would grow its stack anew while
// decoding the next line, which costs as much as the decoding. One goroutine reads at a
// time; the one that meets the end of the input reports it on ended.
func (ss *session) read(r *bufio.Reader, ended chan<- error) {
	for {
		// ReadBytes grows as needed: a line is as long as its message.
		line, err := r.ReadBytes('\n')
		var call func()
		if len(bytes.TrimSpace(line)) > 0 && ss.ctx.Err() == nil {
			call = ss.handle(line)
		}
		switch {
		case err == io.EOF:
			ended <- nil
		case err != nil:
			ended <- fmt.Errorf("bundle: reading requests: %w", err)
		case call != nil:
			select {
			case ss.readTurn <- struct{}{}: // a goroutine waiting for its turn reads on
			default:
				go ss.read(r, ended)
			}
		}
		if call == nil {
			if err != nil {
				return
			}
			continue
		}
		call()
		if err != nil {
			return
		}
		select {
		case <-ss.readTurn:
		case <-ss.inputDone:
			return
		case <-ss.ctx.Done():
			return
		}
	}
}

// maxDepth bounds how deeply a message may nest; deeper ones are refused unread, as the
// other SDKs do, whose parsers recurse.
const maxDepth = 1000

// handle answers one line, or returns the call it starts.
func (ss *session) handle(line []byte) func() {
	if !utf8.Valid(line) {
		ss.answer(json.RawMessage(nullID), nil, errorf(mcp.CodeParseError, "parse error: the line is not valid UTF-8"))
		return nil
	}
	valid := rawjson.Valid(line, maxDepth)
	if !valid && rawjson.TooDeep(line, maxDepth) {
		ss.answer(json.RawMessage(nullID), nil, errorf(mcp.CodeParseError, "parse error: nested deeper than %d levels", maxDepth))
		return nil
	}
	req, err := readRequest(line, valid)
	if err != nil {
		if _, ok := errors.AsType[*json.SyntaxError](err); ok {
			ss.log.Warn("input line is not JSON", "err", err)
			ss.answer(json.RawMessage(nullID), nil, errorf(mcp.CodeParseError, "parse error: %v", err))
			return nil
		}
		// A field of the wrong type: the id may still be good.
		ss.answer(idOrNull(req.ID), nil, errorf(mcp.CodeInvalidRequest, "invalid request: %v", err))
		return nil
	}
	switch {
	case req.JSONRPC != "2.0":
		ss.answer(idOrNull(req.ID), nil, errorf(mcp.CodeInvalidRequest, `invalid request: jsonrpc must be "2.0"`))
	case req.Method == "" && (req.Result != nil || req.Error != nil):
		ss.replied(req)
	case req.Method == "":
		ss.answer(idOrNull(req.ID), nil, errorf(mcp.CodeInvalidRequest, "invalid request: no method"))
	case req.ID == nil:
		ss.notified(req.Method, req.Params)
	case !validID(req.ID):
		ss.answer(json.RawMessage(nullID), nil, errorf(mcp.CodeInvalidRequest, "invalid request: id must be a string or a number"))
	default:
		return ss.request(req.ID, req.Method, req.Params)
	}
	return nil
}

// request answers a request, or returns the call it starts for the methods that run a
// handler of the bundle.
func (ss *session) request(id json.RawMessage, method string, params json.RawMessage) func() {
	if method == mcp.MethodToolsCall {
		return ss.toolsCall(id, params)
	}
	e, rerr := ss.eraOf(params)
	if rerr != nil {
		ss.answer(id, nil, rerr)
		return nil
	}
	var run func(context.Context) (any, *RPCError)
	switch {
	case method == mcp.MethodSubscriptionsListen && e.stateless:
		ss.listen(id, params)
		return nil
	case method == mcp.MethodPromptsGet:
		run = func(ctx context.Context) (any, *RPCError) { return ss.getPrompt(ctx, id, params, e) }
	case method == mcp.MethodResourcesRead:
		run = func(ctx context.Context) (any, *RPCError) { return ss.readResource(ctx, id, params, e) }
	case method == mcp.MethodComplete && ss.s.hasCompleters():
		run = func(ctx context.Context) (any, *RPCError) { return ss.complete(ctx, params) }
	default:
		result, rerr := ss.quick(method, params)
		if e.stateless {
			result, rerr = ss.statelessAnswer(method, result, rerr)
		}
		ss.answer(id, result, rerr)
		return nil
	}
	return ss.start(id, ss.inEra(e, method, run))
}

// inEra makes run answer as a request of era e does.
func (ss *session) inEra(e era, method string, run func(context.Context) (any, *RPCError)) func(context.Context) (any, *RPCError) {
	if !e.stateless {
		return run
	}
	return func(ctx context.Context) (any, *RPCError) {
		res, rerr := run(ctx)
		return ss.statelessAnswer(method, res, rerr)
	}
}

// toolCallParams is all of a tools/call's params the server reads, decoded at once: calls
// are the requests that matter for speed.
type toolCallParams struct {
	Name      string             `json:"name"`
	Arguments json.RawMessage    `json:"arguments,omitempty"`
	Meta      *mcp.StatelessMeta `json:"_meta,omitempty"`
	rounds
}

// toolsCall is request for tools/call. Params that do not decode leave the call in the
// session, where they are refused as invalid.
func (ss *session) toolsCall(id json.RawMessage, params json.RawMessage) func() {
	var p toolCallParams
	perr := readCallParams(params, &p)
	var e era
	if perr == nil {
		var rerr *RPCError
		if e, rerr = eraFrom(p.Meta); rerr != nil {
			ss.answer(id, nil, rerr)
			return nil
		}
	}
	return ss.start(id, ss.inEra(e, mcp.MethodToolsCall, func(ctx context.Context) (any, *RPCError) {
		if perr != nil {
			return nil, perr
		}
		return ss.callTool(ctx, id, &p, e)
	}))
}

// quick answers the methods that run no handler of the bundle, on the reading goroutine.
func (ss *session) quick(method string, params json.RawMessage) (any, *RPCError) {
	switch method {
	case mcp.MethodDiscover:
		return ss.discover(), nil
	case mcp.MethodInitialize:
		var p mcp.InitializeParams
		if err := decodeParams(params, &p); err != nil {
			return nil, err
		}
		o := ss.s.opts
		return initializeResult{
			ProtocolVersion: mcp.NegotiateVersion(p.ProtocolVersion),
			Capabilities:    ss.s.capabilities(),
			ServerInfo:      mcp.Implementation{Name: o.Name, Title: o.Title, Version: o.Version},
			Instructions:    o.Instructions,
		}, nil
	case mcp.MethodPing:
		return struct{}{}, nil
	case mcp.MethodToolsList:
		return ss.list(listTools, params)
	case mcp.MethodPromptsList:
		return ss.list(listPrompts, params)
	case mcp.MethodResourcesList:
		return ss.list(listResources, params)
	case mcp.MethodResourceTemplates:
		return ss.list(listTemplates, params)
	case mcp.MethodSkillsList:
		return ss.list(listSkills, params)
	case mcp.MethodSkillsGet:
		return ss.s.getSkill(params)
	case mcp.MethodResourcesSub, mcp.MethodResourcesUnsub:
		return ss.subscribe(params, method == mcp.MethodResourcesSub)
	case mcp.MethodLoggingSetLevel:
		var p mcp.SetLevelParams
		if err := decodeParams(params, &p); err != nil {
			return nil, err
		}
		rank, ok := mcp.LogLevelRank(p.Level)
		if !ok {
			return nil, errorf(mcp.CodeInvalidParams, "unknown log level %q", p.Level)
		}
		ss.minLevel.Store(int32(rank))
		return struct{}{}, nil
	}
	return nil, errorf(mcp.CodeMethodNotFound, "method not found: %s", method)
}

func (ss *session) notified(method string, params json.RawMessage) {
	if method != mcp.NotifyCancelled {
		return // notifications/initialized and the rest need nothing from us
	}
	var p mcp.CancelledParams
	if err := json.Unmarshal(params, &p); err != nil {
		ss.log.Warn("unreadable notifications/cancelled", "err", err)
		return
	}
	if ss.unlisten(p.RequestID) {
		return
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	// A call that has already answered is no longer here: the spec lets that race be.
	if f := ss.inflight[string(p.RequestID)]; f != nil {
		f.cancelled = true
		f.cancel()
	}
}

// list answers one page of a */list request.
func (ss *session) list(kind listKind, params json.RawMessage) (any, *RPCError) {
	var p mcp.PaginatedParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	offset := 0
	if p.Cursor != "" {
		offset = decodeCursor(p.Cursor)
	}
	defs, next, ok := ss.s.page(kind, offset)
	if !ok {
		return nil, errorf(mcp.CodeInvalidParams, "invalid cursor %q", p.Cursor)
	}
	res := map[string]any{listKey[kind]: defs}
	if next > 0 {
		res["nextCursor"] = encodeCursor(next)
	}
	return res, nil
}

// start registers request id as in flight and returns what runs it and answers, or nil
// when the request was answered at once.
func (ss *session) start(id json.RawMessage, run func(context.Context) (any, *RPCError)) func() {
	ctx, cancel := context.WithCancel(ss.ctx)
	f := &inflight{cancel: cancel}
	ss.mu.Lock()
	_, dup := ss.inflight[string(id)]
	if ss.closed || dup {
		ss.mu.Unlock()
		cancel()
		if dup {
			ss.answer(id, nil, errorf(mcp.CodeInvalidRequest, "invalid request: id %s is already in use", id))
		}
		return nil
	}
	ss.inflight[string(id)] = f
	ss.calls.Add(1)
	ss.mu.Unlock()

	return func() {
		defer ss.calls.Done()
		res, rerr := run(ctx)
		ss.mu.Lock()
		delete(ss.inflight, string(id))
		dropped := f.cancelled
		ss.mu.Unlock()
		cancel()
		if !dropped {
			ss.answer(id, res, rerr)
		}
	}
}

// callTool answers tools/call: unknown tools are errors, the rest a tool's result.
func (ss *session) callTool(ctx context.Context, id json.RawMessage, p *toolCallParams, e era) (any, *RPCError) {
	if p.Name == "" {
		return nil, errorf(mcp.CodeInvalidParams, "invalid params: tools/call needs a string name")
	}
	t := ss.s.tool(p.Name)
	if t == nil {
		return nil, errorf(mcp.CodeInvalidParams, "unknown tool %q", p.Name)
	}
	c := &Call{Name: p.Name, Arguments: p.Arguments}
	if len(c.Arguments) == 0 || string(c.Arguments) == "null" {
		c.Arguments = json.RawMessage("{}")
	}
	if p.Meta != nil {
		c.trace = traceContextOf(p.Meta.Traceparent, p.Meta.Tracestate)
	}
	if p.Meta != nil && len(p.Meta.ProgressToken) > 0 && string(p.Meta.ProgressToken) != "null" {
		c.progressToken = p.Meta.ProgressToken
	}
	in, rerr := ss.newInput(id, e, p.rounds, mcp.MethodToolsCall, p.Name, c.Arguments)
	if rerr != nil {
		return nil, rerr
	}
	c.Input = in
	res, rerr := t.run(ctx, c)
	if rerr != nil {
		return in.finish(nil, rerr)
	}
	return in.finish(res, nil)
}

// send sends the client a request and waits for its answer. meta relates the
// notifications/cancelled sent when ctx ends first.
func (ss *session) send(ctx context.Context, method string, params json.RawMessage, meta map[string]json.RawMessage) (json.RawMessage, error) {
	id := ss.lastID.Add(1)
	key := strconv.FormatInt(id, 10)
	ch := make(chan reply, 1)
	ss.mu.Lock()
	ss.pending[key] = ch
	ss.mu.Unlock()
	defer func() {
		ss.mu.Lock()
		delete(ss.pending, key)
		ss.mu.Unlock()
	}()

	b, err := json.Marshal(notification{JSONRPC: "2.0", ID: id, Method: method, Params: params})
	if err != nil {
		return nil, fmt.Errorf("bundle: %s: %w", method, err)
	}
	if err := ss.write(b); err != nil {
		return nil, err
	}
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, r.err
		}
		return r.result, nil
	case <-ctx.Done():
		_ = ss.notify(mcp.NotifyCancelled, struct {
			mcp.CancelledParams
			Meta map[string]json.RawMessage `json:"_meta"`
		}{mcp.CancelledParams{RequestID: json.RawMessage(key), Reason: context.Cause(ctx).Error()}, meta})
		return nil, context.Cause(ctx)
	case <-ss.ctx.Done():
		return nil, context.Cause(ss.ctx)
	case <-ss.inputDone:
		return nil, fmt.Errorf("bundle: %s: the client's input ended before it answered", method)
	}
}

// replied hands the client's answer to the request waiting for it.
func (ss *session) replied(resp request) {
	r := reply{result: resp.Result}
	if resp.Error != nil {
		r.err = &RPCError{}
		if err := json.Unmarshal(resp.Error, r.err); err != nil {
			r.err = errorf(mcp.CodeInternalError, "unreadable error from the client: %s", resp.Error)
		}
	}
	ss.mu.Lock()
	ch := ss.pending[string(resp.ID)]
	delete(ss.pending, string(resp.ID))
	ss.mu.Unlock()
	if ch == nil {
		ss.log.Warn("answer to no request of ours", "id", string(resp.ID))
		return
	}
	ch <- r
}

// answer writes the response to request id: result, or rerr when it is not nil.
func (ss *session) answer(id json.RawMessage, result any, rerr *RPCError) {
	if rerr == nil && result != nil {
		// The envelope is written by hand around the result, so that a result encoded
		// already (a 2026-07-28 one) is not checked and copied once more.
		body, err := encodeResult(result)
		if err == nil {
			msg := make([]byte, 0, len(body)+len(id)+36)
			msg = append(msg, `{"jsonrpc":"2.0","id":`...)
			msg = append(msg, id...)
			msg = append(msg, `,"result":`...)
			msg = append(msg, body...)
			ss.write(append(msg, '}'))
			return
		}
		// Only a handler's raw JSON can fail here.
		ss.log.Error("answer is not valid JSON", "id", string(id), "err", err)
		rerr = errorf(mcp.CodeInternalError, "internal error: the answer is not valid JSON: %v", err)
	}
	b, _ := json.Marshal(response{JSONRPC: "2.0", ID: id, Result: result, Error: rerr})
	ss.write(b)
}

// encoded is a result this package has encoded itself: valid, compact JSON.
type encoded []byte

// MarshalJSON returns e as it is.
func (e encoded) MarshalJSON() ([]byte, error) { return e, nil }

func encodeResult(result any) ([]byte, error) {
	if e, ok := result.(encoded); ok {
		return e, nil
	}
	return json.Marshal(result)
}

func (ss *session) notify(method string, params any) error {
	b, err := json.Marshal(notification{JSONRPC: "2.0", Method: method, Params: params})
	if err != nil {
		return fmt.Errorf("bundle: %s: %w", method, err)
	}
	return ss.write(b)
}

// write sends one message as one line. A failure ends the session: the client is gone.
func (ss *session) write(msg []byte) error {
	msg = append(msg, '\n')
	ss.waiting.Add(1)
	ss.outMu.Lock()
	defer ss.outMu.Unlock()
	ss.waiting.Add(-1)
	if ss.outErr != nil {
		return ss.outErr
	}
	if ss.outDone {
		return errors.New("bundle: session is over")
	}
	_, err := ss.out.Write(msg)
	if err == nil && ss.waiting.Load() == 0 {
		err = ss.out.Flush()
	}
	if err != nil {
		ss.outErr = fmt.Errorf("bundle: writing to the client: %w", err)
		ss.log.Error("cannot write to the client", "err", err)
		ss.cancel(ss.outErr)
	}
	return ss.outErr
}

// finish flushes what is left and refuses writes from then on. It returns the first write
// failure of the session.
func (ss *session) finish() error {
	ss.outMu.Lock()
	defer ss.outMu.Unlock()
	ss.outDone = true
	if ss.outErr == nil {
		if err := ss.out.Flush(); err != nil {
			ss.outErr = fmt.Errorf("bundle: writing to the client: %w", err)
		}
	}
	return ss.outErr
}

// decodeParams decodes a request's params into p; absent params leave p zero.
func decodeParams(params json.RawMessage, p any) *RPCError {
	if len(params) == 0 || string(params) == "null" {
		return nil
	}
	if err := json.Unmarshal(params, p); err != nil {
		return errorf(mcp.CodeInvalidParams, "invalid params: %v", err)
	}
	return nil
}

// validID reports whether id is a string or a number: MCP forbids null ids.
func validID(id json.RawMessage) bool {
	if len(id) == 0 {
		return false
	}
	c := id[0]
	return c == '"' || c == '-' || (c >= '0' && c <= '9')
}

func idOrNull(id json.RawMessage) json.RawMessage {
	if validID(id) {
		return id
	}
	return json.RawMessage(nullID)
}

// Cursors are opaque to clients; the encoding only keeps them from looking like numbers
// worth computing with.
func encodeCursor(offset int) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.Itoa(offset)))
}

// decodeCursor returns the offset a cursor stands for, or -1 when it is not one of ours.
func decodeCursor(c string) int {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return -1
	}
	n, err := strconv.Atoi(string(b))
	if err != nil || n <= 0 {
		return -1
	}
	return n
}
