package rpc

import (
	"bytes"
	"errors"
	"os"
	"testing"
	"time"
)

// TestABurstLeavesInOneWrite sends a burst of three requests to a Conn whose handler
// passes each on through another Conn sharing its Batch: nothing is written while the
// burst is handled, and then all three leave together.
func TestABurstLeavesInOneWrite(t *testing.T) {
	var batch Batch
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	// b only writes: its input is a pipe nobody writes to.
	bIn, bInW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	b := NewConn(bIn, outW, closers{bIn, bInW, outW}, ConnOptions{Batch: &batch, Handle: func(*Message) {}})
	defer b.Close()

	handled := make(chan error, 3)
	a := NewConn(inR, os.Stdout, closers{inR}, ConnOptions{Batch: &batch, Handle: func(m *Message) {
		if err := b.Notify("passed/"+m.Method, nil); err != nil {
			handled <- err
			return
		}
		// While the burst lasts, what b was given waits.
		_ = outR.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
		n, err := outR.Read(make([]byte, 1))
		switch {
		case n > 0:
			handled <- errors.New("a message of the burst was written before the burst ended")
		case !errors.Is(err, os.ErrDeadlineExceeded):
			handled <- err
		default:
			handled <- nil
		}
	}})
	defer a.Close()

	burst := `{"jsonrpc":"2.0","method":"one"}` + "\n" + `{"jsonrpc":"2.0","method":"two"}` + "\n" + `{"jsonrpc":"2.0","method":"three"}` + "\n"
	if _, err := inW.WriteString(burst); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := <-handled; err != nil {
			t.Fatal(err)
		}
	}
	_ = outR.SetReadDeadline(time.Now().Add(5 * time.Second))
	got := make([]byte, 4096)
	n, err := outR.Read(got)
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
	inW.Close()
	<-a.Done()
}

// TestALoneMessageIsWrittenAtOnce: with nothing more to read, a Conn holds nothing back.
func TestALoneMessageIsWrittenAtOnce(t *testing.T) {
	var batch Batch
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	bIn, bInW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	b := NewConn(bIn, outW, closers{bIn, bInW, outW}, ConnOptions{Batch: &batch, Handle: func(*Message) {}})
	defer b.Close()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	written := make(chan error, 1)
	a := NewConn(inR, os.Stdout, closers{inR}, ConnOptions{Batch: &batch, Handle: func(m *Message) {
		if err := b.Notify("passed", nil); err != nil {
			written <- err
			return
		}
		_ = outR.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, err := outR.Read(make([]byte, 4096))
		if n == 0 {
			written <- err
			return
		}
		written <- nil
	}})
	defer a.Close()
	if _, err := inW.WriteString(`{"jsonrpc":"2.0","method":"alone"}` + "\n"); err != nil {
		t.Fatal(err)
	}
	if err := <-written; err != nil {
		t.Fatalf("a lone message was not written while it was handled: %v", err)
	}
	inW.Close()
	<-a.Done()
}

// TestALongBurstDoesNotHoldWritesToTheEnd: a peer that keeps sending cannot keep what its
// messages cause (or a ping to another peer) from being written.
func TestALongBurstDoesNotHoldWritesToTheEnd(t *testing.T) {
	var batch Batch
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	bIn, bInW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	b := NewConn(bIn, outW, closers{bIn, bInW, outW}, ConnOptions{Batch: &batch, Handle: func(*Message) {}})
	defer b.Close()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	const burst = 4 * maxHeld
	seen := make(chan error, 1)
	n := 0
	a := NewConn(inR, os.Stdout, closers{inR}, ConnOptions{Batch: &batch, Handle: func(m *Message) {
		n++
		switch n {
		case 1:
			if err := b.Notify("first", nil); err != nil {
				seen <- err
			}
		case 2 * maxHeld:
			_ = outR.SetReadDeadline(time.Now().Add(5 * time.Second))
			got, err := outR.Read(make([]byte, 4096))
			if got == 0 {
				seen <- errors.Join(errors.New("still held after twice maxHeld messages"), err)
				return
			}
			seen <- nil
		}
	}})
	defer a.Close()
	var lines bytes.Buffer
	for range burst {
		lines.WriteString(`{"jsonrpc":"2.0","method":"more"}` + "\n")
	}
	if _, err := inW.Write(lines.Bytes()); err != nil {
		t.Fatal(err)
	}
	if err := <-seen; err != nil {
		t.Fatal(err)
	}
	inW.Close()
	<-a.Done()
}
