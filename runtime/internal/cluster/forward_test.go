package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/toolnode/toolnode/runtime/internal/cluster/natstest"
	"github.com/toolnode/toolnode/runtime/internal/testkit"
)

// frontLog records the requests a node's front was forwarded.
type frontLog struct {
	mu   sync.Mutex
	reqs []*Forwarded
	done chan error // why each request's context ended, nil for its own end
}

func (s *frontLog) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.reqs)
}

// front answers a forwarded request as the HTTP front would: "stream" writes three events,
// flushing each, "hang" waits for the client to leave, anything else is echoed whole.
func (s *frontLog) front(w http.ResponseWriter, r *http.Request, f *Forwarded) {
	s.mu.Lock()
	s.reqs = append(s.reqs, f)
	s.mu.Unlock()
	body, _ := io.ReadAll(r.Body)
	switch string(body) {
	case "stream":
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		for i := range 3 {
			fmt.Fprintf(w, "data: %d\n\n", i)
			http.NewResponseController(w).Flush()
		}
	case "hang":
		<-r.Context().Done()
		s.done <- context.Cause(r.Context())
	default:
		w.Header().Set("X-Client", f.Client)
		w.WriteHeader(http.StatusTeapot)
		fmt.Fprintf(w, "%s %s %s", r.Method, r.Header.Get("Mcp-Session-Id"), body)
	}
}

// A request forwarded to another node is served there with the client it names, its
// answer coming back whole or streamed; a client that leaves ends it there; a node that is
// not a member is not forwarded to.
func TestForwardedRequestsReachTheirNode(t *testing.T) {
	srv := natstest.Start(t)
	key := writeKey(t, "the cluster's own key, 32 bytes or more")
	_, ca := startNode(t, srv.URL, "a", nodeOptions{key: key})
	_, cb := startNode(t, srv.URL, "b", nodeOptions{key: key})
	s := &frontLog{done: make(chan error, 1)}
	if err := cb.ServeFront(s.front); err != nil {
		t.Fatal(err)
	}
	waitMember(t, ca, "b")

	rec := httptest.NewRecorder()
	f := &Forwarded{Method: http.MethodPost, Header: http.Header{"Mcp-Session-Id": {"b.1"}}, Body: []byte("whole"), Client: "desk"}
	if err := ca.Forward(t.Context(), "b", f, rec); err != nil {
		t.Fatal(err)
	}
	if rec.Code != http.StatusTeapot || rec.Header().Get("X-Client") != "desk" || rec.Body.String() != "POST b.1 whole" {
		t.Errorf("the whole answer came back as %d %v %q", rec.Code, rec.Header(), rec.Body)
	}

	rec = httptest.NewRecorder()
	if err := ca.Forward(t.Context(), "b", &Forwarded{Method: http.MethodPost, Body: []byte("stream")}, rec); err != nil {
		t.Fatal(err)
	}
	if rec.Body.String() != "data: 0\n\ndata: 1\n\ndata: 2\n\n" || rec.Header().Get("Content-Type") != "text/event-stream" || !rec.Flushed {
		t.Errorf("the stream came back as %v %q (flushed %v)", rec.Header(), rec.Body, rec.Flushed)
	}

	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		errc <- ca.Forward(ctx, "b", &Forwarded{Method: http.MethodPost, Body: []byte("hang")}, httptest.NewRecorder())
	}()
	testkit.Eventually(t, 10*time.Second, func() string { // until b serves it
		if s.count() < 3 {
			return "node b does not serve the forward"
		}
		return ""
	})
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("the forward of a client that left ended with %v", err)
	}
	select {
	case why := <-s.done:
		if why == nil || !strings.Contains(why.Error(), `"a"`) {
			t.Errorf("node b's request ended saying %v; want the forwarding node named", why)
		}
	case <-time.After(10 * time.Second):
		t.Error("node b went on serving a request whose client left node a")
	}

	if err := ca.Forward(t.Context(), "nobody", f, httptest.NewRecorder()); !errors.Is(err, ErrUnknownNode) {
		t.Errorf("a forward to no member: %v", err)
	}
}

// A forwarded request not signed with the cluster key is dropped before it is served, and
// a node that leaves ends the forwards it was serving, naming it.
func TestForwardsOfStrangersAndTheGoneFail(t *testing.T) {
	srv := natstest.Start(t)
	key := writeKey(t, "the cluster's own key, 32 bytes or more")
	logs := &testkit.SyncBuffer{}
	_, ca := startNode(t, srv.URL, "a", nodeOptions{key: key})
	_, cb := startNode(t, srv.URL, "b", nodeOptions{key: key, logs: logs})
	s := &frontLog{done: make(chan error, 1)}
	if err := cb.ServeFront(s.front); err != nil {
		t.Fatal(err)
	}
	waitMember(t, ca, "b")

	p := newPeer(t, srv.URL)
	hdr := nats.Header{}
	hdr.Set(hKind, kindForward)
	hdr.Set(hKey, "k1")
	hdr.Set(hFrom, "a")
	p.publish(&nats.Msg{Subject: p.prefix + "front.b", Reply: p.prefix + "reply.a.x", Header: hdr,
		Data: []byte(`{"method":"POST","body":"d2hvbGU=","client":"admin"}`)})
	logs.WaitFor(t, 10*time.Second, "forwarded request") // node b's refusal
	if s.count() != 0 {
		t.Errorf("an unsigned forward: served %d, node b's log:\n%s", s.count(), logs)
	}

	errc := make(chan error, 1)
	go func() {
		errc <- ca.Forward(t.Context(), "b", &Forwarded{Method: http.MethodPost, Body: []byte("hang")}, httptest.NewRecorder())
	}()
	testkit.Eventually(t, 10*time.Second, func() string {
		if s.count() < 1 {
			return "node b does not serve the forward"
		}
		return ""
	})
	cb.Leave()
	select {
	case err := <-errc:
		if err == nil || !strings.Contains(err.Error(), `"b"`) || !strings.Contains(err.Error(), "leaving") && !strings.Contains(err.Error(), "left") {
			t.Errorf("a forward to a node that left ended with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("a forward to a node that left did not end")
	}
}

// waitMember waits until c has heard node id.
func waitMember(t *testing.T, c *Cluster, id string) {
	t.Helper()
	testkit.Eventually(t, 10*time.Second, func() string {
		if !c.Member(id) {
			return "node " + id + " never joined"
		}
		return ""
	})
}
