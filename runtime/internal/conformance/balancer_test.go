package conformance_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/testkit/nodekit"
)

// fromAddress is an HTTP client whose connections come from the loopback address ip, as
// a client on another machine would come from its own.
func fromAddress(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 10 * time.Second}
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}}
}

// Behind HAProxy, as docs/snippets/haproxy.cfg sets it up (send-proxy-v2) and with the node
// trusting it (--trusted-proxy), each client is counted by its own address: one client at
// its session bound leaves another client served.
func TestOneClientAtItsSessionBoundBehindTheBalancerLeavesAnotherServed(t *testing.T) {
	url, _ := startNodeProcess(t, buildNode(t), "--bundles", nodekit.Conformance(t, "go"), "--trusted-proxy", "127.0.0.1", "--max-client-sessions", "2")
	front, _ := startHAProxy(t, []*replica{{name: "r1", url: url}})
	initialize := func(c *http.Client) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, front, strings.NewReader(
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"balanced","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	a, b := fromAddress("127.0.0.2"), fromAddress("127.0.0.3")
	var got []string
	for range 3 {
		code, _ := initialize(a)
		got = append(got, fmt.Sprint(code))
	}
	if strings.Join(got, " ") != "200 200 503" {
		t.Errorf("client a's three sessions: %v, want 200 200 503 (its bound is 2)", got)
	}
	if code, body := initialize(b); code != http.StatusOK {
		t.Errorf("client b beside client a at its bound: %d %s, want 200", code, body)
	}
}
