package cluster

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"go.uber.org/goleak"

	"github.com/toolnode/toolnode/runtime/internal/cluster/natstest"
	"github.com/toolnode/toolnode/runtime/internal/node"
	"github.com/toolnode/toolnode/runtime/internal/testbundle"
)

func TestMain(m *testing.M) {
	testbundle.RunIfChild()
	goleak.VerifyTestMain(m)
}

// A message larger than the server's max payload crosses in parts and comes out whole;
// a part that goes missing is noticed, not papered over.
func TestLargeMessagesCrossInParts(t *testing.T) {
	srv := natstest.Start(t, "max_payload: 65536")
	nc, err := nats.Connect(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	var asm assembler
	got := make(chan []byte, 4)
	parts := 0
	sub, err := nc.Subscribe("big", func(m *nats.Msg) {
		parts++
		if data, ok, err := asm.add(m); err != nil {
			t.Error(err)
		} else if ok {
			got <- data
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	for _, size := range []int{10, 65536 - headroom, 1 << 20} {
		want := make([]byte, size)
		_, _ = rand.Read(want)
		parts = 0
		if err := publish(nc, "big", "", nats.Header{hKey: {"k"}}, want); err != nil {
			t.Fatal(err)
		}
		select {
		case data := <-got:
			if !bytes.Equal(data, want) {
				t.Fatalf("%d bytes sent, %d different bytes came", size, len(data))
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%d bytes sent in parts never came whole", size)
		}
	}
	if parts < (1<<20)/(65536) {
		t.Errorf("1 MiB came in %d messages through a server that takes 64 KiB at most", parts)
	}

	for _, tc := range []struct {
		name  string
		parts []string // "part:last"
		err   string
	}{
		{"a part lost", []string{"0:", "2:1"}, "part 2 of a message came where part 1 was due"},
		{"the first part lost", []string{"1:1"}, "part 1 of a message came where part 0 was due"},
		{"whole", []string{"0:", "1:", "2:1"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var a assembler
			var err error
			var whole bool
			for _, p := range tc.parts {
				num, last, _ := strings.Cut(p, ":")
				h := nats.Header{}
				h.Set(hMsg, "m")
				h.Set(hPart, num)
				if last != "" {
					h.Set(hLast, last)
				}
				var data []byte
				data, whole, err = a.add(&nats.Msg{Header: h, Data: []byte(num)})
				if err != nil {
					break
				}
				if whole && string(data) != "012" {
					t.Errorf("put together as %q", data)
				}
			}
			switch {
			case tc.err == "" && (err != nil || !whole):
				t.Errorf("whole %v, error %v", whole, err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("error %v, want %q", err, tc.err)
			}
		})
	}
}

// session records what a node sends a client.
type session struct {
	mu  sync.Mutex
	got []string
}

func (s *session) Notify(_ context.Context, method string, params any) error {
	b, _ := json.Marshal(params)
	s.mu.Lock()
	s.got = append(s.got, method+" "+string(b))
	s.mu.Unlock()
	return nil
}

func (s *session) Request(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return nil, fmt.Errorf("no requests")
}

func (s *session) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.got, "\n")
}

// startNode runs a node of the bundles names (test bundles) in the cluster at url.
func startNode(t *testing.T, url, id string, names ...string) (*node.Node, *Cluster) {
	t.Helper()
	dir := t.TempDir()
	for _, name := range names {
		testbundle.Write(t, dir, name)
	}
	ms := testbundle.Manifests(t, dir, names...)
	n := node.New(node.Config{Manifests: ms})
	n.Start()
	<-n.Ready()
	c, err := Join(Config{URL: url, NodeID: id, Heartbeat: 100 * time.Millisecond, Silence: 500 * time.Millisecond}, n, ms)
	if err != nil {
		t.Fatal(err)
	}
	n.SetClusterReport(c.Report)
	t.Cleanup(func() {
		c.Leave()
		n.Close(context.Background())
		c.Close()
	})
	return n, c
}

// A call of a client of node a reaches the bundle of node b, and the bundle's log message
// and progress about it come back to that client under its own token; b's goodbye takes
// its bundle out of a's list.
func TestCallsCrossBetweenNodes(t *testing.T) {
	srv := natstest.Start(t)
	a, _ := startNode(t, srv.URL, "a")
	_, cb := startNode(t, srv.URL, "b", "tb")
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, ok := a.Catalog().Lookup("tb.talk"); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("node a never listed tb.talk of node b")
		}
		time.Sleep(20 * time.Millisecond)
	}
	s := &session{}
	res, err := a.Call(context.Background(), s, json.RawMessage(`{"name":"tb.talk","arguments":{"text":"hi"},"_meta":{"progressToken":"mine"}}`))
	if err != nil || !strings.Contains(string(res), `"tb:hi"`) {
		t.Fatalf("tb.talk answered %s, %v", res, err)
	}
	got := s.String()
	for _, want := range []string{`notifications/message {"level":"info","logger":"tb","data":"hi"`, `notifications/progress {"progress":1,"progressToken":"mine"}`} {
		if !strings.Contains(got, want) {
			t.Errorf("the client got\n%s\nwithout %s", got, want)
		}
	}
	st, _ := a.Call(context.Background(), s, json.RawMessage(`{"name":"toolnode.status"}`))
	if !strings.Contains(string(st), `node b: tb (2 tools); round trip`) {
		t.Errorf("a's status does not show b serving tb:\n%s", st)
	}

	cb.Leave()
	deadline = time.Now().Add(5 * time.Second)
	for {
		if _, ok := a.Catalog().Lookup("tb.talk"); !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("node a still lists tb.talk after node b said goodbye")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
