package rpc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/toolnode/toolnode/sdk-go/mcp"
	"github.com/toolnode/toolnode/sdk-go/rawjson"
)

// DefaultMaxLine is the longest line a Conn reads by default. Tool results carry images and
// files, so this is far above bufio.Scanner's 64 KiB.
const DefaultMaxLine = 128 << 20

// ErrBadAnswer is wrapped by the errors of calls whose answer came but could not be taken:
// not a valid message, or over MaxLine. It is the peer's fault, not the caller's.
var ErrBadAnswer = errors.New("the answer is not a valid message")

// ConnOptions configures a Conn. Handle is required.
type ConnOptions struct {
	// MaxLine is the longest line read, in bytes. Default DefaultMaxLine.
	MaxLine int
	// MaxQueue bounds what is held for a peer that does not read. Default DefaultMaxQueue.
	MaxQueue int
	// Limits are the checks of Parse.
	Limits Limits
	// Handle receives each request and notification, in the order they arrive, on the
	// goroutine reading the peer. It must not block: a handler that waits hands the
	// message to a goroutine of its own.
	Handle func(m *Message)
	// Lend says Handle keeps nothing of m itself past its return (what it keeps of m's
	// fields, such as Params, is its own): each message is then handed in one Message of
	// the Conn's, spared the copy of its own that a handler may otherwise keep.
	Lend bool
	// OnInvalid is told of each line that is not a valid message, on the reading
	// goroutine: why, and what could be read of it (its id, to answer the error to). The
	// line is then skipped. Default: skipped silently.
	OnInvalid func(line []byte, m *Message, err *Error)
	// OnUnmatched is told of each response that no call waits for (an answer to a call
	// given up on, a second answer, an id never sent). It is dropped. Default: silently.
	OnUnmatched func(m *Message)
	// Batch, when set, is held while whole lines wait in the read buffer, and defers this
	// Conn's own writes while anyone holds it; see Batch.
	Batch *Batch
}

// Conn is a JSON-RPC connection over newline-delimited JSON, the MCP stdio transport: one
// goroutine reads and checks messages and hands them on, an Outbox writes. Safe for
// concurrent use.
type Conn struct {
	opts    ConnOptions
	r       *bufio.Reader
	out     *Outbox
	closer  io.Closer
	pending Pending

	done      chan struct{} // closed when reading has ended
	closeOnce sync.Once
	readErr   error // why reading ended; set before done closes

	// lines holds encoding buffers (*[]byte) for Send: the outbox copies what it keeps,
	// so a line's buffer serves the next one.
	lines sync.Pool

	lent Message // what Handle is handed, with opts.Lend; the reading goroutine's
	slab []byte  // where short lines are copied (see copyLine); the reading goroutine's
}

// Short lines are copied into slabs of slabSize shared by the lines that follow, one
// allocation for many lines instead of one each: a relayed call is two short lines, and
// their copies were about 3% of the node's CPU per call over stdio. A line kept long (a
// cached answer) keeps its slab alive, at most slabSize bytes; a line over shortLine gets
// an allocation of its own.
const (
	slabSize  = 4 << 10
	shortLine = 512
)

// copyLine returns a copy of b that no later read overwrites, with no room to append into
// (an append copies, rather than writing over the next line).
func (c *Conn) copyLine(b []byte) []byte {
	if len(b) > shortLine {
		return bytes.Clone(b)
	}
	if len(c.slab)+len(b) > cap(c.slab) {
		c.slab = make([]byte, 0, slabSize)
	}
	start := len(c.slab)
	c.slab = append(c.slab, b...)
	return c.slab[start:len(c.slab):len(c.slab)]
}

// keptLine bounds the buffers kept for encoding: one after a large result goes to the
// garbage collector.
const keptLine = 64 << 10

// Closers closes each of its members, for a connection over several streams (a process's
// stdin and stdout, a pair of pipes): the closer given to NewConn.
type Closers []io.Closer

// Close closes every member, even after one fails, and returns their errors joined.
func (cs Closers) Close() error {
	var errs []error
	for _, c := range cs {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

// NewConn starts a connection reading r and writing w. Close closes closer (which may be
// nil), which should end both.
func NewConn(r io.Reader, w io.Writer, closer io.Closer, opts ConnOptions) *Conn {
	if opts.MaxLine <= 0 {
		opts.MaxLine = DefaultMaxLine
	}
	if pr := pollableReader(r); pr != nil {
		r = pr
	}
	c := &Conn{
		opts:   opts,
		r:      bufio.NewReaderSize(r, 64<<10),
		out:    NewOutbox(w, OutboxOptions{MaxQueue: opts.MaxQueue, Batch: opts.Batch}),
		closer: closer,
		done:   make(chan struct{}),
	}
	go c.out.Run()
	go c.read()
	return c
}

// Call sends a request and registers done for its outcome; see Done. It returns the id the
// request went under, or an error when it could not be sent (done is then not called).
func (c *Conn) Call(method string, params json.RawMessage, done Done) (ID, error) {
	id, err := c.Expect(done)
	if err != nil {
		return ID{}, err
	}
	return id, c.Request(id, method, params)
}

// Expect registers done for the outcome of a request to be sent with Request, and returns
// the id to send it under: the caller can relate to it what the peer says about the call
// before the peer can say anything. An error when the connection has ended.
func (c *Conn) Expect(done Done) (ID, error) { return c.pending.Add(done) }

// ExpectTo is Expect with the outcome given to a (see Answerer).
func (c *Conn) ExpectTo(a Answerer) (ID, error) { return c.pending.AddTo(a) }

// Request sends the request id got from Expect. When it cannot be sent the call is taken
// back (done is not called) and the error says why.
func (c *Conn) Request(id ID, method string, params json.RawMessage) error {
	return c.RequestEdited(id, method, params)
}

// RequestEdited is Request with params edited on the way as rawjson.PutMembers edits them,
// in the one copy that writes the line (params that are not an object go as they are):
// a relay renames a tool and puts its progress token without a copy of the arguments of
// its own. The edits are done with when it returns.
func (c *Conn) RequestEdited(id ID, method string, params json.RawMessage, edits ...rawjson.Edit) error {
	m := Message{ID: id, Method: method, Params: params}
	if err := c.send(&m, edits); err != nil {
		if c.pending.Take(id) == nil {
			return nil // ended meanwhile (the connection closed): done has run
		}
		return err
	}
	return nil
}

// Forget gives up on call id and reports whether it was still waiting: whoever gets true
// owns the call's end, and its answer, if it comes, is dropped.
func (c *Conn) Forget(id ID) bool { return c.pending.Take(id) != nil }

// Send writes m, never waiting for the peer (see Outbox).
func (c *Conn) Send(m *Message) error { return c.send(m, nil) }

// send writes m, its params edited as edits say (see Message.appendEdited).
func (c *Conn) send(m *Message, edits []rawjson.Edit) error {
	buf, _ := c.lines.Get().(*[]byte)
	if buf == nil {
		buf = new([]byte)
	}
	line := append(m.appendEdited((*buf)[:0], edits), '\n')
	err := c.out.Send(line)
	if cap(line) <= keptLine {
		*buf = line
		c.lines.Put(buf)
	}
	return err
}

// Notify sends a notification.
func (c *Conn) Notify(method string, params json.RawMessage) error {
	return c.Send(Notification(method, params))
}

// Reply answers request id with result.
func (c *Conn) Reply(id ID, result json.RawMessage) error { return c.Send(Result(id, result)) }

// ReplyError answers request id with err (see AsError).
func (c *Conn) ReplyError(id ID, err error) error { return c.Send(Failure(id, err)) }

// Waiting is how many calls wait for answers.
func (c *Conn) Waiting() int { return c.pending.Len() }

// Queued is how many bytes wait for the peer to read them.
func (c *Conn) Queued() int { return c.out.Queued() }

// Done is closed when reading has ended (the peer closed its side, or Close); every call
// waiting then has ended with an error wrapping ErrClosed.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err is why reading ended (io.EOF when the peer closed its side), valid after Done.
func (c *Conn) Err() error { return c.readErr }

// Flush stops taking messages and waits until what was sent has been written, or until
// stop is closed.
func (c *Conn) Flush(stop <-chan struct{}) {
	c.out.Close()
	select {
	case <-c.out.Done():
	case <-stop:
	}
}

// Close ends the connection: the closer is closed, which unblocks the reader and a writer
// stuck on the peer. Safe to call many times.
func (c *Conn) Close() error {
	var err error
	c.closeOnce.Do(func() {
		c.out.Close()
		if c.closer != nil {
			err = c.closer.Close()
		}
	})
	return err
}

func (c *Conn) read() {
	var err error
	holding, held := false, 0
	defer func() {
		if holding {
			c.opts.Batch.release()
		}
		c.readErr = err
		c.pending.Close(fmt.Errorf("%w: %v", ErrClosed, err))
		close(c.done)
	}()
	for {
		var line []byte
		var over *overLong
		if holding && (held >= maxHeld || !c.lineBuffered()) {
			// The burst is handled, or has held writes long enough (a peer that never
			// stops sending must not keep a ping from going out): what it caused is
			// written before going on.
			holding, held = false, 0
			c.opts.Batch.release()
		}
		line, over, err = c.readLine()
		if c.opts.Batch != nil && !holding && c.lineBuffered() {
			// More messages came in the same read: what they cause is written together.
			holding = true
			c.opts.Batch.hold()
		}
		if holding {
			held++
		}
		if over != nil {
			c.tooLong(over)
			continue
		}
		if err != nil {
			return
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		m, perr := Parse(line, c.opts.Limits)
		// What is handed on gets a copy of its own, which the handler may keep: an
		// answer, the message of every call, is taken where it is.
		switch {
		case perr != nil:
			bad := m
			c.invalid(line, &bad, perr)
		case m.IsResponse():
			c.deliver(&m)
		case c.opts.Lend:
			c.lent = m
			c.opts.Handle(&c.lent)
			c.lent = Message{} // holds nothing of the line once handled
		default:
			req := m
			c.opts.Handle(&req)
		}
	}
}

// maxHeld is how many messages a Conn handles while holding its Batch before it lets the
// writes go: enough to gather a burst, few enough that no write waits long.
const maxHeld = 32

// lineBuffered reports whether a whole line waits in the read buffer, so that reading it
// will not wait for the peer.
func (c *Conn) lineBuffered() bool {
	n := c.r.Buffered()
	if n == 0 {
		return false
	}
	b, _ := c.r.Peek(n)
	return bytes.IndexByte(b, '\n') >= 0
}

// deliver hands a response to the call it answers. An error answered with a null id (the
// peer could not read a request) ends the one call waiting, when only one is.
func (c *Conn) deliver(m *Message) {
	if m.ID.IsNull() {
		if id, ok := c.pending.Only(); ok && m.Error != nil {
			m.ID = id
		}
	}
	if !c.pending.Deliver(m) && c.opts.OnUnmatched != nil {
		stray := *m
		c.opts.OnUnmatched(&stray)
	}
}

// invalid handles a line that failed the checks: an answer to a call waiting ends that
// call with the reason; anything else goes to OnInvalid.
func (c *Conn) invalid(line []byte, m *Message, err *Error) {
	if m.Method == "" && !m.ID.IsZero() {
		if done := c.pending.Take(m.ID); done != nil {
			done.Answer(nil, fmt.Errorf("%w: %s", ErrBadAnswer, err.Message))
			return
		}
	}
	if c.opts.OnInvalid != nil {
		c.opts.OnInvalid(line, m, err)
	}
}

// overLong is what is kept of a line over MaxLine: its first and last bytes, where its id
// and method are found.
type overLong struct {
	head, tail []byte
	size       int
}

const (
	keepHead = 4 << 10
	keepTail = 256
)

// readLine returns the next line without its newline, in a buffer of its own. A line over
// MaxLine is consumed to its end and returned as an overLong. A last line without a newline
// is returned before io.EOF.
func (c *Conn) readLine() ([]byte, *overLong, error) {
	frag, err := c.r.ReadSlice('\n')
	if err == nil && len(frag) <= c.opts.MaxLine+1 {
		return c.copyLine(frag[:len(frag)-1]), nil, nil
	}
	var buf []byte
	var over *overLong
	for {
		if over == nil {
			buf = append(buf, frag...)
			if len(buf) > c.opts.MaxLine+1 {
				over = &overLong{
					head: bytes.Clone(buf[:min(len(buf), keepHead)]),
					tail: bytes.Clone(buf[max(0, len(buf)-keepTail):]),
					size: len(buf),
				}
				buf = nil
			}
		} else {
			over.size += len(frag)
			over.tail = lastBytes(append(over.tail, frag...), keepTail)
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			break
		}
		frag, err = c.r.ReadSlice('\n')
	}
	if over != nil {
		over.tail = bytes.TrimRight(over.tail, "\r\n")
		if err == nil || errors.Is(err, io.EOF) {
			return nil, over, nil
		}
		return nil, over, err
	}
	if err == nil {
		return buf[:len(buf)-1], nil, nil
	}
	if len(buf) > 0 && errors.Is(err, io.EOF) {
		return buf, nil, nil
	}
	return nil, nil, err
}

func lastBytes(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	return append(b[:0:0], b[len(b)-n:]...)
}

// tooLong handles a line over the limit: an answer to a call waiting ends that call with
// the reason; a request is reported to OnInvalid with its id, so that it can be answered.
func (c *Conn) tooLong(o *overLong) {
	err := Errorf(mcp.CodeInvalidRequest, "message of %d bytes is over the limit of %d bytes", o.size, c.opts.MaxLine)
	m := Message{}
	id, method := headMembers(o.head)
	if id == nil {
		id = tailID(o.tail)
	}
	if id != nil {
		m.ID, _ = parseID(id)
	}
	if method {
		m.Method = "?"
	}
	c.invalid(o.head, &m, err)
}

// headMembers reads the id of a message cut short, and whether it has a method, from the
// members that stand whole before the cut.
func headMembers(head []byte) (id []byte, method bool) {
	rawjson.Members(head, func(name rawjson.Name, value []byte) {
		switch {
		case name.Is("id"):
			id = value
		case name.Is("method"):
			method = true
		}
	})
	return id, method
}

// tailID reads an id written as the last member of a message: `,"id":7}`.
func tailID(tail []byte) []byte {
	t := bytes.TrimRight(tail, " \t\r\n")
	if len(t) == 0 || t[len(t)-1] != '}' {
		return nil
	}
	t = bytes.TrimRight(t[:len(t)-1], " \t")
	i := bytes.LastIndex(t, []byte(`"id"`))
	if i < 0 {
		return nil
	}
	v := bytes.TrimSpace(t[i+4:])
	if len(v) == 0 || v[0] != ':' {
		return nil
	}
	v = bytes.TrimSpace(v[1:])
	if _, err := parseID(v); err != nil {
		return nil
	}
	return v
}

// Peer is a side that requests can be sent to, with the table of calls waiting for its
// answers. Conn is one; the HTTP front's sessions are others.
type Peer interface {
	Expect(done Done) (ID, error)
	Request(id ID, method string, params json.RawMessage) error
	Forget(id ID) bool
}

// CallWait sends a request to p and waits for its outcome. When ctx ends first, the call is
// forgotten (a late answer is dropped), cancelled is told its id, so that the peer can be
// told, and ctx's cause is returned.
func CallWait(ctx context.Context, p Peer, method string, params json.RawMessage, cancelled func(ID)) (json.RawMessage, error) {
	ch := make(chan Done, 1)
	res, err := Await(func(done Done) {
		id, err := p.Expect(done)
		if err == nil {
			err = p.Request(id, method, params)
		}
		if err != nil {
			done(nil, err)
			return
		}
		go func() {
			select {
			case <-ctx.Done():
				if p.Forget(id) {
					if cancelled != nil {
						cancelled(id)
					}
					done(nil, context.Cause(ctx))
				}
			case <-ch:
			}
		}()
	})
	close(ch)
	return res, err
}
