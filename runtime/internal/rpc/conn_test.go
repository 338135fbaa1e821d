package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/toolnode/toolnode/runtime/internal/testkit"
	"github.com/toolnode/toolnode/sdk-go/rawjson"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// pipePeer is the far side of a Conn under test: it reads what the Conn writes, line by
// line, and writes raw lines to it.
type pipePeer struct {
	conn  *Conn
	lines chan []byte
	w     *os.File // the Conn's input
	r     *os.File // the Conn's output
}

func newPipePeer(t *testing.T, opts ConnOptions) *pipePeer {
	t.Helper()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	if opts.Handle == nil {
		opts.Handle = func(*Message) {}
	}
	p := &pipePeer{lines: make(chan []byte, 100), w: inW, r: outR}
	p.conn = NewConn(inR, outW, Closers{inR, outW}, opts)
	go func() {
		defer close(p.lines)
		buf := make([]byte, 0, 1<<20)
		chunk := make([]byte, 64<<10)
		for {
			n, err := outR.Read(chunk)
			buf = append(buf, chunk[:n]...)
			for {
				i := bytes.IndexByte(buf, '\n')
				if i < 0 {
					break
				}
				p.lines <- bytes.Clone(buf[:i])
				buf = buf[i+1:]
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		p.conn.Close()
		inW.Close()
		<-p.conn.Done()
		outR.Close()
		for range p.lines {
		}
	})
	return p
}

func (p *pipePeer) write(t *testing.T, line string) {
	t.Helper()
	if _, err := p.w.WriteString(line + "\n"); err != nil {
		t.Fatal(err)
	}
}

func (p *pipePeer) next(t *testing.T) Message {
	t.Helper()
	select {
	case line := <-p.lines:
		m, err := Parse(line, Limits{})
		if err != nil {
			t.Fatalf("the conn wrote an invalid message %q: %v", line, err)
		}
		return m
	case <-time.After(10 * time.Second):
		t.Fatal("no message from the conn")
	}
	return Message{}
}

type outcome struct {
	res json.RawMessage
	err error
}

func waitOutcome(t *testing.T, ch <-chan outcome) outcome {
	t.Helper()
	select {
	case o := <-ch:
		return o
	case <-time.After(10 * time.Second):
		t.Fatal("the call never ended")
	}
	return outcome{}
}

func call(t *testing.T, c *Conn, method string) (ID, <-chan outcome) {
	t.Helper()
	ch := make(chan outcome, 2)
	id, err := c.Call(method, json.RawMessage(`{}`), func(res json.RawMessage, err error) { ch <- outcome{res, err} })
	if err != nil {
		t.Fatal(err)
	}
	return id, ch
}

func TestCallsAreAnsweredOnceAndStrayAnswersDropped(t *testing.T) {
	var unmatched testkit.Inbox
	p := newPipePeer(t, ConnOptions{OnUnmatched: func(m *Message) { unmatched.Add(m.ID.String()) }})
	id, ch := call(t, p.conn, "tools/call")
	req := p.next(t)
	if req.ID != id || req.Method != "tools/call" {
		t.Fatalf("sent %+v", req)
	}
	answer := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"n":1}}`, id)
	p.write(t, answer)
	p.write(t, answer)                                                        // a second answer
	p.write(t, `{"jsonrpc":"2.0","id":99,"result":{"n":2}}`)                  // an id never sent
	p.write(t, `{"jsonrpc":"2.0","id":"x","error":{"code":1,"message":"m"}}`) // nor this one
	if o := waitOutcome(t, ch); o.err != nil || string(o.res) != `{"n":1}` {
		t.Fatalf("outcome %s %v", o.res, o.err)
	}
	unmatched.Wait(t, 10*time.Second, 3, nil)
	if got := unmatched.Items(); len(got) != 3 {
		t.Errorf("unmatched answers %v, want the three stray ones", got)
	}
	select {
	case o := <-ch:
		t.Fatalf("done ran twice: %+v", o)
	default:
	}
	if p.conn.Waiting() != 0 {
		t.Errorf("%d calls still waiting", p.conn.Waiting())
	}
}

func TestAnErrorAnswerIsAnErrorComparedByCode(t *testing.T) {
	p := newPipePeer(t, ConnOptions{})
	id, ch := call(t, p.conn, "x")
	p.next(t)
	p.write(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32602,"message":"unknown tool"}}`, id))
	o := waitOutcome(t, ch)
	if !errors.Is(o.err, ErrInvalidParams) || errors.Is(o.err, ErrInternal) {
		t.Fatalf("error %v is not -32602 by errors.Is", o.err)
	}
}

func TestANullIDErrorEndsTheOnlyCallWaiting(t *testing.T) {
	p := newPipePeer(t, ConnOptions{})
	_, ch := call(t, p.conn, "x")
	p.next(t)
	p.write(t, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`)
	if o := waitOutcome(t, ch); !errors.Is(o.err, ErrParse) {
		t.Fatalf("outcome %v, want the peer's parse error", o.err)
	}
}

func TestAnAnswerOverTheLimitFailsItsCall(t *testing.T) {
	for _, where := range []string{"head", "tail"} {
		t.Run(where, func(t *testing.T) {
			p := newPipePeer(t, ConnOptions{MaxLine: 64 << 10})
			id, ch := call(t, p.conn, "big")
			p.next(t)
			big := strings.Repeat("x", 200<<10)
			line := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"text":%q}}`, id, big)
			if where == "tail" {
				line = fmt.Sprintf(`{"jsonrpc":"2.0","result":{"text":%q},"id":%s}`, big, id)
			}
			go p.w.WriteString(line + "\n") // larger than the pipe: written while the conn reads
			o := waitOutcome(t, ch)
			if !errors.Is(o.err, ErrBadAnswer) || !strings.Contains(o.err.Error(), "over the limit") {
				t.Fatalf("outcome %v, want an error saying the answer is over the limit", o.err)
			}
			// The connection goes on.
			id2, ch2 := call(t, p.conn, "small")
			p.next(t)
			p.write(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{}}`, id2))
			if o := waitOutcome(t, ch2); o.err != nil {
				t.Fatal(o.err)
			}
		})
	}
}

func TestAnInvalidAnswerFailsItsCallAndAnInvalidRequestIsReported(t *testing.T) {
	got := make(chan string, 1)
	p := newPipePeer(t, ConnOptions{OnInvalid: func(_ []byte, m *Message, err *Error) {
		got <- fmt.Sprintf("%s %d", m.ID, err.Code)
	}})
	id, ch := call(t, p.conn, "x")
	p.next(t)
	p.write(t, fmt.Sprintf("{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"a\":\"\xff\"}}", id))
	if o := waitOutcome(t, ch); !errors.Is(o.err, ErrBadAnswer) || !strings.Contains(o.err.Error(), "UTF-8") {
		t.Fatalf("outcome %v, want a bad answer saying why", o.err)
	}
	p.write(t, `{"jsonrpc":"2.0","id":"r1","method":"x","params":{"a":1,"a":2}}`)
	select {
	case s := <-got:
		if s != `"r1" -32600` {
			t.Errorf("OnInvalid got %s", s)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("OnInvalid not called")
	}
}

func TestCallsWaitingFailWhenThePeerGoes(t *testing.T) {
	p := newPipePeer(t, ConnOptions{})
	_, ch := call(t, p.conn, "x")
	p.next(t)
	p.w.Close()
	if o := waitOutcome(t, ch); !errors.Is(o.err, ErrClosed) {
		t.Fatalf("outcome %v, want ErrClosed", o.err)
	}
	if _, err := p.conn.Call("y", nil, func(json.RawMessage, error) {}); !errors.Is(err, ErrClosed) {
		t.Errorf("a call after the end: %v", err)
	}
}

func TestRequestsAreHandedOnInOrder(t *testing.T) {
	got := make(chan string, 10)
	p := newPipePeer(t, ConnOptions{Handle: func(m *Message) { got <- m.Method + " " + m.ID.String() }})
	for i := range 5 {
		p.write(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"m%d"}`, i, i))
	}
	p.write(t, `{"jsonrpc":"2.0","method":"n"}`)
	for i := range 5 {
		if s := <-got; s != fmt.Sprintf("m%d %d", i, i) {
			t.Fatalf("got %s", s)
		}
	}
	if s := <-got; s != "n " {
		t.Fatalf("got %q", s)
	}
}

// A peer that reads nothing: sends go on being accepted up to the bound, then are refused,
// and none of them waits.
func TestAPeerThatDoesNotReadIsRefusedPastTheBound(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	o := NewOutbox(w, OutboxOptions{MaxQueue: 1 << 20})
	go o.Run()
	chunk := bytes.Repeat([]byte("x"), 256<<10)
	done := make(chan error, 1)
	go func() {
		for {
			if err := o.Send(chunk); err != nil {
				done <- err
				return
			}
		}
	}()
	select {
	case err := <-done:
		if !errors.Is(err, ErrNotReading) {
			t.Fatalf("refused with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Send waited for a peer that does not read")
	}
	if q := o.Queued(); q > 1<<20+len(chunk) {
		t.Errorf("%d bytes queued past the bound", q)
	}
	o.Close()
	w.Close() // unblocks the writer
	<-o.Done()
}

func TestOutboxWritesEverythingInOrder(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	o := NewOutbox(w, OutboxOptions{})
	go o.Run()
	var want bytes.Buffer
	var wg sync.WaitGroup
	read := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(r)
		read <- b
	}()
	for i := range 2000 {
		line := fmt.Sprintf("%d %s\n", i, strings.Repeat("y", i%700))
		want.WriteString(line)
		if err := o.Send([]byte(line)); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	o.Close()
	<-o.Done()
	w.Close()
	if got := <-read; !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("wrote %d bytes, want %d in order", len(got), want.Len())
	}
}

func TestCallWaitForgetsACallWhoseContextEnds(t *testing.T) {
	p := newPipePeer(t, ConnOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	told := make(chan ID, 1)
	errc := make(chan error, 1)
	go func() {
		_, err := CallWait(ctx, p.conn, "slow", nil, func(id ID) { told <- id })
		errc <- err
	}()
	req := p.next(t)
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("CallWait: %v", err)
	}
	if id := <-told; id != req.ID {
		t.Errorf("told %s, want %s", id, req.ID)
	}
	if p.conn.Waiting() != 0 {
		t.Errorf("the call is still waiting")
	}
}

// FuzzConnLines feeds a Conn arbitrary bytes as its peer's stream: it never panics, hands
// on only messages that pass Parse, and ends when the stream does.
func FuzzConnLines(f *testing.F) {
	for _, s := range []string{
		"{\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n",
		"junk\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"y\",\"params\":{}}\r\n\n",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}",
		strings.Repeat("[", 300) + "\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, stream []byte) {
		r, w, err := os.Pipe()
		if err != nil {
			t.Skip("no pipe:", err)
		}
		var handled []*Message
		c := NewConn(bytes.NewReader(stream), w, Closers{r, w}, ConnOptions{MaxLine: 1 << 10, Limits: Limits{MaxDepth: 16},
			Handle: func(m *Message) { handled = append(handled, m) }})
		<-c.Done()
		c.Close()
		for _, m := range handled {
			if _, err := Parse(m.Append(nil), Limits{MaxDepth: 16}); err != nil {
				t.Fatalf("handed on a message that fails Parse: %v", err)
			}
		}
	})
}

// A pipe made by os.Pipe is non-blocking, and a Conn reads it with system calls of its
// own (see rawio); a line written in pieces, with pauses, comes whole, and the writer's
// close ends the reading.
func TestAConnReadsANonBlockingPipeInPieces(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	if pollableReader(r) == nil {
		t.Fatal("os.Pipe's read end is not read by the poller")
	}
	got := make(chan *Message, 1)
	c := NewConn(r, io.Discard, r, ConnOptions{Handle: func(m *Message) { got <- m }})
	defer c.Close()
	line := `{"jsonrpc":"2.0","method":"notifications/message","params":{"text":"` + strings.Repeat("y", 100<<10) + `"}}` + "\n"
	for i := 0; i < len(line); i += 7000 {
		if _, err := w.WriteString(line[i:min(i+7000, len(line))]); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond) // a pause between the pieces: what is tested
	}
	select {
	case m := <-got:
		if m.Method != "notifications/message" || len(m.Params) < 100<<10 {
			t.Fatalf("read %q with %d bytes of params", m.Method, len(m.Params))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the line never came")
	}
	w.Close()
	select {
	case <-c.Done():
		if !errors.Is(c.Err(), io.EOF) {
			t.Fatalf("reading ended with %v, want EOF", c.Err())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the end of the pipe was not seen")
	}
}

// Closed and Done are made when first asked for; whatever the order of Close, Run and the
// asking, each is closed when it should be, and Run ends after Close.
func TestOutboxClosedAndDoneWhateverTheOrder(t *testing.T) {
	for _, tc := range []struct {
		name              string
		askFirst, runLate bool
	}{
		{"asked before Close, Run before", true, false},
		{"asked after Close, Run before", false, false},
		{"asked before Close, Run after", true, true},
		{"asked after Close, Run after", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			o := NewOutbox(&buf, OutboxOptions{})
			var closed <-chan struct{}
			if tc.askFirst {
				closed = o.Closed()
				select {
				case <-closed:
					t.Fatal("Closed is closed before Close")
				default:
				}
			}
			ran := make(chan struct{})
			run := func() { o.Run(); close(ran) }
			if !tc.runLate {
				go run()
			}
			if err := o.Send([]byte("a\n")); err != nil {
				t.Fatal(err)
			}
			o.Close()
			if tc.runLate {
				go run()
			}
			if closed == nil {
				closed = o.Closed()
			}
			for what, ch := range map[string]<-chan struct{}{"Closed": closed, "Done": o.Done(), "Run": ran} {
				select {
				case <-ch:
				case <-time.After(10 * time.Second):
					t.Fatalf("%s not closed after Close", what)
				}
			}
			if err := o.Send([]byte("b\n")); err == nil {
				t.Error("a send after Close was taken")
			}
			if buf.String() != "a\n" {
				t.Errorf("wrote %q, want what was queued before Close", buf.String())
			}
		})
	}
}

func TestARequestIsEditedInTheLineItGoesOutIn(t *testing.T) {
	p := newPipePeer(t, ConnOptions{})
	edits := []rawjson.Edit{{Key: "_meta", Value: []byte(`{"progressToken":"tn-1"}`)}, {Key: "name", Value: []byte(`"echo"`)}}
	for _, tt := range []struct{ params, want string }{
		{`{"name":"a.echo","arguments":{"text":"s"}}`, `{"_meta":{"progressToken":"tn-1"},"name":"echo","arguments":{"text":"s"}}`},
		{`[1,2]`, `[1,2]`}, // not an object: as it came
	} {
		id, _ := p.conn.Expect(func(json.RawMessage, error) {})
		if err := p.conn.RequestEdited(id, "tools/call", json.RawMessage(tt.params), edits...); err != nil {
			t.Fatal(err)
		}
		m := p.next(t)
		if m.ID != id || m.Method != "tools/call" || string(m.Params) != tt.want {
			t.Errorf("RequestEdited(%s) wrote id %s, method %q, params %s; want id %s, params %s", tt.params, m.ID, m.Method, m.Params, id, tt.want)
		}
		p.conn.Forget(id)
	}
}

// TestLentMessages: with Lend, each message is handed whole in the Conn's own Message,
// requests and notifications alike, and what the handler kept of its fields stays right
// after the next one is read.
func TestLentMessages(t *testing.T) {
	type seen struct {
		id, method, params string
		m                  *Message
	}
	got := make(chan seen, 3)
	p := newPipePeer(t, ConnOptions{Lend: true, Handle: func(m *Message) {
		got <- seen{m.ID.String(), m.Method, string(m.Params), m}
	}})
	p.write(t, `{"jsonrpc":"2.0","id":1,"method":"a","params":{"x":1}}`)
	p.write(t, `{"jsonrpc":"2.0","method":"b"}`)
	p.write(t, `{"jsonrpc":"2.0","id":"q","method":"c","params":[2]}`)
	want := []seen{{"1", "a", `{"x":1}`, nil}, {"", "b", "", nil}, {`"q"`, "c", `[2]`, nil}}
	var lent *Message
	for i, w := range want {
		select {
		case g := <-got:
			if g.id != w.id || g.method != w.method || g.params != w.params {
				t.Errorf("message %d: got %s %s %s, want %s %s %s", i, g.id, g.method, g.params, w.id, w.method, w.params)
			}
			if lent != nil && g.m != lent {
				t.Errorf("message %d came in a Message of its own", i)
			}
			lent = g.m
		case <-time.After(5 * time.Second):
			t.Fatalf("message %d never handled", i)
		}
	}
}

// TestKeptLinesStayWhole: what a handler keeps of the lines it is handed (params, here)
// stays as it came while later lines are read, short lines and long ones mixed, and
// appending to a kept value writes over no other.
func TestKeptLinesStayWhole(t *testing.T) {
	const n = 3000
	kept := make(chan []byte, n)
	p := newPipePeer(t, ConnOptions{Handle: func(m *Message) { kept <- m.Params }})
	want := make([]string, n)
	for i := range n {
		want[i] = fmt.Sprintf(`{"i":%d,"pad":"%s"}`, i, strings.Repeat("x", (i*37)%700))
		p.write(t, `{"jsonrpc":"2.0","method":"m","params":`+want[i]+`}`)
	}
	got := make([][]byte, n)
	for i := range n {
		select {
		case got[i] = <-kept:
		case <-time.After(10 * time.Second):
			t.Fatalf("line %d never handled", i)
		}
	}
	for i := range n {
		_ = append(got[i], strings.Repeat("y", 200)...) // past the next line's start, were there room
	}
	for i := range n {
		if string(got[i]) != want[i] {
			t.Fatalf("params of line %d: %.60q, want %.60q", i, got[i], want[i])
		}
	}
}
