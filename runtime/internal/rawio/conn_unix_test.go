//go:build unix

package rawio

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// pair returns both ends of a loopback TCP connection, the server's accepted through
// Listener.
func pair(t *testing.T) (server *conn, client net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c, err := Listener(ln).Accept()
	if err != nil {
		t.Fatal(err)
	}
	server, ok := c.(*conn)
	if !ok {
		t.Fatalf("Accept gave a %T, not a raw connection", c)
	}
	t.Cleanup(func() { server.Close(); client.Close() })
	return server, client
}

// pattern is n bytes that differ from any shift of themselves, so that a lost or doubled
// chunk shows.
func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i/251)
	}
	return b
}

// TestConnCarriesBytesBothWays writes more than the socket buffers hold each way at once,
// so that writes find no room and wait in the poller, and reads find nothing and wait.
func TestConnCarriesBytesBothWays(t *testing.T) {
	server, client := pair(t)
	want := pattern(8 << 20)
	for _, dir := range []struct {
		name string
		w, r net.Conn
	}{{"server to client", server, client}, {"client to server", client, server}} {
		t.Run(dir.name, func(t *testing.T) {
			errc := make(chan error, 1)
			go func() {
				_, err := dir.w.Write(want)
				errc <- err
			}()
			_ = dir.r.SetReadDeadline(time.Now().Add(30 * time.Second)) // a lost write fails, not hangs
			got := make([]byte, 0, len(want))
			buf := make([]byte, 1000) // small reads: many of them find nothing yet
			for len(got) < len(want) {
				n, err := dir.r.Read(buf)
				if err != nil {
					t.Fatalf("read after %d bytes: %v", len(got), err)
				}
				got = append(got, buf[:n]...)
			}
			if err := <-errc; err != nil {
				t.Fatalf("write: %v", err)
			}
			if !bytes.Equal(got, want) {
				t.Fatal("the bytes read are not those written")
			}
		})
	}
}

// TestConnDeadlines: a read or a write past its deadline fails as a TCPConn's does, a
// timeout naming the operation; the connection then serves again once the deadline moves.
func TestConnDeadlines(t *testing.T) {
	server, client := pair(t)
	_ = server.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	_, err := server.Read(make([]byte, 10))
	checkTimeout(t, "read", err)

	_ = server.SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
	chunk, written := pattern(1<<20), 0
	for { // the client reads nothing: the socket's buffers fill, then the deadline passes
		n, err := server.Write(chunk)
		written += n
		if err != nil {
			checkTimeout(t, "write", err)
			break
		}
		if n != len(chunk) {
			t.Fatalf("a write wrote %d of %d bytes without an error", n, len(chunk))
		}
	}
	if written == 0 {
		t.Error("nothing was written before the deadline")
	}

	_ = server.SetReadDeadline(time.Time{})
	if _, err := client.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 1)
	if _, err := io.ReadFull(server, b); err != nil || b[0] != 'x' {
		t.Fatalf("read after the deadline moved: %q %v", b, err)
	}
}

func checkTimeout(t *testing.T, op string, err error) {
	t.Helper()
	var oe *net.OpError
	if !errors.As(err, &oe) || oe.Op != op || !oe.Timeout() || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("%s past its deadline: %v (%T), want a timeout *net.OpError naming %s", op, err, err, op)
	}
}

// TestConnEndings: the peer's close is io.EOF; a Close while a read waits ends the read
// with net.ErrClosed; a write to a connection the peer reset fails as an OpError.
func TestConnEndings(t *testing.T) {
	server, client := pair(t)
	client.Close()
	if _, err := server.Read(make([]byte, 10)); err != io.EOF {
		t.Errorf("read after the peer closed: %v, want io.EOF", err)
	}

	server, _ = pair(t)
	errc := make(chan error, 1)
	go func() {
		_, err := server.Read(make([]byte, 10))
		errc <- err
	}()
	time.Sleep(20 * time.Millisecond) // let the read wait in the poller
	server.Close()
	if err := <-errc; !errors.Is(err, net.ErrClosed) {
		t.Errorf("read ended by Close: %v, want net.ErrClosed", err)
	}

	server, client = pair(t)
	client.(*net.TCPConn).SetLinger(0)
	client.Close()
	var err error
	for range 100 { // the reset may take a write or two to be seen
		if _, err = server.Write(pattern(1 << 16)); err != nil {
			break
		}
	}
	if _, ok := errors.AsType[*net.OpError](err); !ok || !strings.Contains(err.Error(), "write") {
		t.Errorf("write to a reset connection: %v (%T)", err, err)
	}
}

// TestConnServesHTTP: net/http over the listener answers requests on a kept-alive
// connection, and sees a client leave in the middle of one (its background read, ended by
// a deadline in the past, is what tells it).
func TestConnServesHTTP(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	left := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Write(append([]byte("echo: "), b...))
	})
	mux.HandleFunc("/wait", func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
		close(left)
	})
	srv := &http.Server{Handler: mux, ReadTimeout: time.Minute, IdleTimeout: time.Minute}
	go srv.Serve(Listener(ln))
	t.Cleanup(func() { srv.Close() })
	url := "http://" + ln.Addr().String()

	for i := range 50 {
		body := strings.Repeat("b", i*1000)
		resp, err := http.Post(url+"/echo", "text/plain", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(got) != "echo: "+body {
			t.Fatalf("request %d: answer of %d bytes, want %d", i, len(got), len(body)+6)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/wait", nil)
	go func() {
		time.Sleep(50 * time.Millisecond)
		cancel()
	}()
	if _, err := http.DefaultClient.Do(req); err == nil {
		t.Fatal("the request the client gave up on was answered")
	}
	select {
	case <-left:
	case <-time.After(10 * time.Second):
		t.Fatal("the handler never saw its client leave")
	}
}

// TestOtherConnectionsComeAsTheyAre: a listener of other than TCP is served unchanged.
func TestOtherConnectionsComeAsTheyAre(t *testing.T) {
	ln, err := net.Listen("unix", filepath.Join(t.TempDir(), "s"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if c, err := net.Dial("unix", ln.Addr().String()); err == nil {
			defer c.Close()
			time.Sleep(100 * time.Millisecond)
		}
	}()
	c, err := Listener(ln).Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, ok := c.(*net.UnixConn); !ok {
		t.Errorf("a unix connection came as a %T", c)
	}
}
