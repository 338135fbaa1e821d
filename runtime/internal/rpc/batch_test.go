package rpc

import (
	"bytes"
	"errors"
	"os"
	"testing"
	"time"
)

// batchPair is a Conn b that only writes (to out) and the write end of the input of a
// Conn the test makes with handle, both sharing one Batch.
type batchPair struct {
	batch Batch
	b     *Conn
	out   *os.File // what b writes, for the test to read
	in    *os.File // the input of the test's Conn
}

func newBatchPair(t *testing.T) (*batchPair, func(handle func(*Message)) *Conn) {
	t.Helper()
	p := &batchPair{}
	var pipes [3][2]*os.File
	for i := range pipes {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		pipes[i] = [2]*os.File{r, w}
	}
	outR, outW := pipes[0][0], pipes[0][1]
	bIn, bInW := pipes[1][0], pipes[1][1] // nobody writes to b
	inR, inW := pipes[2][0], pipes[2][1]
	p.out, p.in = outR, inW
	p.b = NewConn(bIn, outW, Closers{bIn, bInW, outW}, ConnOptions{Batch: &p.batch, Handle: func(*Message) {}})
	t.Cleanup(func() { p.b.Close() })
	return p, func(handle func(*Message)) *Conn {
		a := NewConn(inR, os.Stdout, Closers{inR}, ConnOptions{Batch: &p.batch, Handle: handle})
		t.Cleanup(func() { a.Close() })
		return a
	}
}

// TestABurstLeavesInOneWrite sends a burst of three requests to a Conn whose handler
// passes each on through another Conn sharing its Batch: nothing is written while the
// burst is handled, and then all three leave together.
func TestABurstLeavesInOneWrite(t *testing.T) {
	p, conn := newBatchPair(t)
	handled := make(chan error, 3)
	a := conn(func(m *Message) {
		if err := p.b.Notify("passed/"+m.Method, nil); err != nil {
			handled <- err
			return
		}
		// While the burst lasts, what b was given waits.
		_ = p.out.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
		n, err := p.out.Read(make([]byte, 1))
		switch {
		case n > 0:
			handled <- errors.New("a message of the burst was written before the burst ended")
		case !errors.Is(err, os.ErrDeadlineExceeded):
			handled <- err
		default:
			handled <- nil
		}
	})
	burst := `{"jsonrpc":"2.0","method":"one"}` + "\n" + `{"jsonrpc":"2.0","method":"two"}` + "\n" + `{"jsonrpc":"2.0","method":"three"}` + "\n"
	if _, err := p.in.WriteString(burst); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := <-handled; err != nil {
			t.Fatal(err)
		}
	}
	_ = p.out.SetReadDeadline(time.Now().Add(5 * time.Second))
	got := make([]byte, 4096)
	n, err := p.out.Read(got)
	if err != nil {
		t.Fatal(err)
	}
	if lines := bytes.Count(got[:n], []byte("\n")); lines != 3 {
		t.Fatalf("one read after the burst got %d messages, want all 3: %q", lines, got[:n])
	}
	for _, m := range []string{"passed/one", "passed/two", "passed/three"} {
		if !bytes.Contains(got[:n], []byte(m)) {
			t.Errorf("%s missing from %q", m, got[:n])
		}
	}
	p.in.Close()
	<-a.Done()
}

// TestALoneMessageIsWrittenAtOnce: with nothing more to read, a Conn holds nothing back.
func TestALoneMessageIsWrittenAtOnce(t *testing.T) {
	p, conn := newBatchPair(t)
	written := make(chan error, 1)
	a := conn(func(m *Message) {
		if err := p.b.Notify("passed", nil); err != nil {
			written <- err
			return
		}
		_ = p.out.SetReadDeadline(time.Now().Add(5 * time.Second))
		if n, err := p.out.Read(make([]byte, 4096)); n == 0 {
			written <- err
			return
		}
		written <- nil
	})
	if _, err := p.in.WriteString(`{"jsonrpc":"2.0","method":"alone"}` + "\n"); err != nil {
		t.Fatal(err)
	}
	if err := <-written; err != nil {
		t.Fatalf("a lone message was not written while it was handled: %v", err)
	}
	p.in.Close()
	<-a.Done()
}

// TestALongBurstDoesNotHoldWritesToTheEnd: a peer that keeps sending cannot keep what its
// messages cause (or a ping to another peer) from being written.
func TestALongBurstDoesNotHoldWritesToTheEnd(t *testing.T) {
	p, conn := newBatchPair(t)
	const burst = 4 * maxHeld
	seen := make(chan error, 1)
	n := 0
	a := conn(func(m *Message) {
		n++
		switch n {
		case 1:
			if err := p.b.Notify("first", nil); err != nil {
				seen <- err
			}
		case 2 * maxHeld:
			_ = p.out.SetReadDeadline(time.Now().Add(5 * time.Second))
			got, err := p.out.Read(make([]byte, 4096))
			if got == 0 {
				seen <- errors.Join(errors.New("still held after twice maxHeld messages"), err)
				return
			}
			seen <- nil
		}
	})
	var lines bytes.Buffer
	for range burst {
		lines.WriteString(`{"jsonrpc":"2.0","method":"more"}` + "\n")
	}
	if _, err := p.in.Write(lines.Bytes()); err != nil {
		t.Fatal(err)
	}
	if err := <-seen; err != nil {
		t.Fatal(err)
	}
	p.in.Close()
	<-a.Done()
}
