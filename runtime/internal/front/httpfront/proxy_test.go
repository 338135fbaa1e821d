package httpfront_test

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/front/httpfront"
	"github.com/toolnode/toolnode/runtime/internal/serve"
	"github.com/toolnode/toolnode/runtime/internal/testkit"
)

// Only a trusted proxy says who a client is: X-Forwarded-For from 127.0.0.1 (trusted)
// counts each forwarded client apart, the same header from 127.0.0.2 is ignored, and a
// PROXY protocol header from 127.0.0.2 refuses its connection.
func TestOnlyATrustedProxySaysWhoTheClientIs(t *testing.T) {
	url := httpNode(t, serve.Config{HTTPOptions: httpfront.Options{MaxClientSessions: 1,
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}}, testkit.Fake{Name: "p"}).URL
	initialize := func(from, forwarded string) int {
		t.Helper()
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 10 * time.Second}
		c := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}}
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"p","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if forwarded != "" {
			req.Header.Set("X-Forwarded-For", forwarded)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, step := range []struct {
		from, forwarded string
		want            int
	}{
		{"127.0.0.1", "10.0.0.1", 200},
		{"127.0.0.1", "10.0.0.2", 200},                 // another client behind the proxy
		{"127.0.0.1", "10.0.0.1", 503},                 // the first, at its bound of 1
		{"127.0.0.1", "10.0.0.9, 127.0.0.1", 200},      // a trusted hop is skipped
		{"127.0.0.1", "10.0.0.2, 10.0.0.3", 200},       // the last untrusted hop is the client
		{"127.0.0.2", "10.0.0.4", 200},                 // not a proxy: counted by its own address
		{"127.0.0.2", "10.0.0.5", 503},                 // whatever it claims
		{"127.0.0.1", "not-an-address, 10.0.0.6", 200}, // the client right of the garbage
	} {
		if got := initialize(step.from, step.forwarded); got != step.want {
			t.Errorf("initialize from %s forwarded for %q: %d, want %d", step.from, step.forwarded, got, step.want)
		}
	}

	conn, err := (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}).Dial("tcp", strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/mcp"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(conn, "PROXY TCP4 10.0.0.7 127.0.0.1 1234 80\r\nPOST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n")
	if resp, err := http.ReadResponse(bufio.NewReader(conn), nil); err == nil {
		resp.Body.Close()
		t.Errorf("a PROXY header from an untrusted address was served: %s", resp.Status)
	}
}
