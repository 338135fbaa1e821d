package cluster

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/nats-io/nats.go"
	"go.uber.org/goleak"

	"github.com/toolnode/toolnode/runtime/internal/clock"
	"github.com/toolnode/toolnode/runtime/internal/cluster/natstest"
	"github.com/toolnode/toolnode/runtime/internal/manifest"
	"github.com/toolnode/toolnode/runtime/internal/node"
	"github.com/toolnode/toolnode/runtime/internal/testkit"
)

func TestMain(m *testing.M) {
	testkit.RunIfChild()
	runNodeIfChild()
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
	out := newStream(&keyring{}, nc)
	asm := assembler{max: 2 << 20, open: 4, gap: time.Minute}
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
		if err := publish(out, "big", "", nats.Header{hKey: {"k"}}, want); err != nil {
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
			a := assembler{max: 1 << 10, open: 4, gap: time.Minute}
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

// nodeOptions say how startNode runs a node.
type nodeOptions struct {
	bundles []string // test bundles the node runs
	broken  []string // bundles whose program is missing: they fail to start
	key     string   // the cluster key's file
	logs    *testkit.SyncBuffer
	bounds  Bounds
	clock   clock.Clock // the time its heartbeats and silences go by; nil: the system's
}

// startNode runs a node in the cluster at url.
func startNode(t *testing.T, url, id string, o nodeOptions) (*node.Node, *Cluster) {
	t.Helper()
	dir := t.TempDir()
	for _, name := range o.bundles {
		testkit.Write(t, dir, testkit.Fake{Name: name})
	}
	ms := testkit.Manifests(t, dir, o.bundles...)
	for _, name := range o.broken {
		m, err := manifest.Parse([]byte(`{"name":"`+name+`","command":["./missing"]}`), dir)
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	log := hclog.NewNullLogger()
	if o.logs != nil {
		log = hclog.New(&hclog.LoggerOptions{Output: o.logs, Level: hclog.Info})
	}
	n := node.New(node.Config{Manifests: ms, Logger: log, Supervision: node.Supervision{Backoff: 10 * time.Millisecond}})
	n.Start()
	<-n.Ready()
	c, err := Join(Config{URL: url, NodeID: id, KeyFile: o.key, Bounds: o.bounds, Logger: log, Heartbeat: 100 * time.Millisecond, Silence: 500 * time.Millisecond, Clock: o.clock}, n, ms)
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

// waitListed waits until n lists the tool name.
func waitListed(t *testing.T, n *node.Node, name string) {
	t.Helper()
	testkit.Eventually(t, 10*time.Second, func() string {
		if _, ok := n.Catalog().Lookup(name); !ok {
			return name + " was never listed"
		}
		return ""
	})
}

// writeKey writes a cluster key file only its owner may read.
func writeKey(t *testing.T, key string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cluster.key")
	if err := os.WriteFile(path, []byte(key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// A node is withdrawn once it has gone unheard for longer than Config.Silence, and not
// before: the silence is counted on a clock the test moves.
func TestASilentNodeIsWithdrawnPastItsSilence(t *testing.T) {
	srv := natstest.Start(t)
	clk := clock.NewFake(time.Now())
	logs := &testkit.SyncBuffer{}
	a, ca := startNode(t, srv.URL, "a", nodeOptions{clock: clk, logs: logs})
	// b's clock never moves: it sends the heartbeat it starts with, and no other.
	startNode(t, srv.URL, "b", nodeOptions{bundles: []string{"tb"}, clock: clock.NewFake(time.Now())})
	waitListed(t, a, "tb.talk")
	clk.Advance(500 * time.Millisecond) // b's silence, exactly
	ca.withdrawSilent()
	if _, ok := a.Catalog().Lookup("tb.talk"); !ok || strings.Contains(logs.String(), "withdrawn") {
		t.Fatalf("node b was withdrawn at its silence, not past it:\n%s", logs)
	}
	clk.Advance(time.Nanosecond)
	ca.withdrawSilent()
	logs.WaitFor(t, 10*time.Second, "node withdrawn from the cluster: node=b")
	testkit.Eventually(t, 10*time.Second, func() string {
		if _, ok := a.Catalog().Lookup("tb.talk"); ok {
			return "node a still lists tb.talk of the withdrawn node b"
		}
		return ""
	})
}

// A call of a client of node a reaches the bundle of node b, and the bundle's log message
// and progress about it come back to that client under its own token; b's goodbye takes
// its bundle out of a's list.
func TestCallsCrossBetweenNodes(t *testing.T) {
	srv := natstest.Start(t)
	a, _ := startNode(t, srv.URL, "a", nodeOptions{})
	_, cb := startNode(t, srv.URL, "b", nodeOptions{bundles: []string{"tb"}})
	waitListed(t, a, "tb.talk")
	s := &testkit.Session{}
	res, err := a.Call(context.Background(), s, json.RawMessage(`{"name":"tb.talk","arguments":{"text":"hi"},"_meta":{"progressToken":"mine"}}`))
	if err != nil || !strings.Contains(string(res), `"tb:hi"`) {
		t.Fatalf("tb.talk answered %s, %v", res, err)
	}
	got := s.Messages()
	for _, want := range []string{`notifications/message {"level":"info","logger":"tb","data":"hi"`, `notifications/progress {"progressToken":"mine","progress":1}`} {
		if !strings.Contains(got, want) {
			t.Errorf("the client got\n%s\nwithout %s", got, want)
		}
	}
	st, err := a.Call(context.Background(), s, json.RawMessage(`{"name":"toolnode.status"}`))
	if err != nil {
		t.Fatalf("toolnode.status: %v", err)
	}
	if !regexp.MustCompile(`node b: tb \([0-9]+ tools\); round trip`).Match(st) {
		t.Errorf("a's status does not show b serving tb:\n%s", st)
	}

	cb.Leave()
	testkit.Eventually(t, 5*time.Second, func() string {
		if _, ok := a.Catalog().Lookup("tb.talk"); ok {
			return "node a still lists tb.talk after node b said goodbye"
		}
		return ""
	})
}

// Replicas (nodes serving the same bundles) without a cluster key say plainly, in the log
// and in toolnode.status, that input_required retries reaching another replica fail;
// with a key, or serving different bundles, they say nothing of it.
func TestReplicasWithoutAKeySayWhatFails(t *testing.T) {
	srv := natstest.Start(t)
	logs := &testkit.SyncBuffer{}
	a, _ := startNode(t, srv.URL, "a", nodeOptions{bundles: []string{"same"}, logs: logs})
	startNode(t, srv.URL, "b", nodeOptions{bundles: []string{"same"}})
	startNode(t, srv.URL, "c", nodeOptions{bundles: []string{"other"}})
	waitListed(t, a, "other.talk") // a has heard c, and b before it
	status := func(n *node.Node) string {
		res, err := n.Call(context.Background(), &testkit.Session{}, json.RawMessage(`{"name":"toolnode.status"}`))
		if err != nil {
			t.Fatal(err)
		}
		return string(res)
	}
	testkit.Eventually(t, 10*time.Second, func() string {
		if got := status(a); !strings.Contains(got, "WARNING: this node and node(s) b serve the same bundles (same) without a cluster key") ||
			!strings.Contains(got, "input_required retry") {
			return "node a's status says nothing of its replica b without a key: " + got
		}
		if !strings.Contains(logs.String(), "without a cluster key: behind a balancer") {
			return "node a's log says nothing of it: " + logs.String()
		}
		return ""
	})

	key := writeKey(t, "a key the replicas share, long enough to sign with")
	d, _ := startNode(t, srv.URL, "d", nodeOptions{bundles: []string{"same"}, key: key})
	startNode(t, srv.URL, "e", nodeOptions{bundles: []string{"same"}, key: key})
	testkit.Eventually(t, 10*time.Second, func() string {
		if got := status(d); !strings.Contains(got, "node e") {
			return "node d has not heard e: " + got
		}
		return ""
	})
	if got := status(d); strings.Contains(got, "WARNING") {
		t.Errorf("replicas with a key warn: %s", got)
	}
}
