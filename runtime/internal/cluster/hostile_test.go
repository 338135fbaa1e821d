package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/toolnode/toolnode/runtime/internal/cluster/natstest"
	"github.com/toolnode/toolnode/runtime/internal/node"
	"github.com/toolnode/toolnode/runtime/internal/testkit"
)

// chunk is the most a part may carry through a server of the default max payload (1 MiB).
const chunk = 1<<20 - headroom

// Parts that never end, sent by a peer to a node's own subject about calls it does not
// serve, and to the answer of a call it made, leave its memory within the bounds: nothing
// of the first is held, and at most Bounds.Message bytes of the second, given back when
// the call ends.
func TestPartsFromPeersAreBounded(t *testing.T) {
	srv := natstest.Start(t)
	const message = 8 << 20
	v := startNodeProc(t, childConfig{URL: srv.URL, ID: "victim", MaxMessage: message})
	p := newPeer(t, srv.URL)
	const flood = 160 << 20

	before := testkit.RSSKiB(t, v.pid)
	p.flood("mallory", p.prefix+"node.victim", flood, chunk, nats.Header{hKey: {"no-such-call"}, hFrom: {"mallory"}})
	if err := p.ping("victim"); err != nil {
		t.Fatalf("the node did not answer a ping after the parts: %v", err)
	}
	inbox := testkit.RSSKiB(t, v.pid) - before

	calls := make(chan request, 64)
	p.serve("mallory", nil, func(r request) bool { calls <- r; return true })
	p.announce("mallory", []Announcement{{Name: "trap", Prefix: true, Tools: 1, Digest: "d"}})
	next := func() request {
		t.Helper()
		select {
		case r := <-calls:
			return r
		case <-time.After(20 * time.Second):
			t.Fatalf("the node never called bundle trap of the peer\n%s", v.logs)
			return request{}
		}
	}
	r := next()
	before = testkit.RSSKiB(t, v.pid)
	p.flood("mallory", r.msg.Reply, flood, chunk, nil)
	// The node takes what comes on a call's subject in order: its next call to the bundle
	// comes once it has read every part before this answer.
	p.answer("mallory", r.msg.Reply, r.id, map[string]any{})
	next()
	answers := testkit.RSSKiB(t, v.pid) - before
	t.Logf("%d MiB of parts grew the node by %d KiB on its own subject, by %d KiB on a call's answer", flood>>20, inbox, answers)
	// Pending messages (at most Bounds.Message and 8 MiB more per subscription), the parts
	// of one call (Bounds.Message) and the garbage of copies the collector has not met yet.
	const bound = 64 << 10
	if !testkit.MemoryChecked(t) {
		return
	}
	if inbox > bound {
		t.Errorf("%d MiB of parts about no call grew the node by %d KiB, over %d KiB", flood>>20, inbox, bound)
	}
	if answers > bound {
		t.Errorf("%d MiB of parts on a call's answer grew the node by %d KiB, over %d KiB", flood>>20, answers, bound)
	}
}

// Heartbeats over the bounds are refused before they cost the node its memory: one of
// 15,000 bundles, and 300 nodes of 8 bundles each, of which the node lists Bounds.Nodes
// and Bounds.RemoteBundles.
func TestAnnouncesFromPeersAreBounded(t *testing.T) {
	srv := natstest.Start(t, "max_payload: 8388608")
	nodes, bounds := 300, Bounds{}
	if testkit.RaceDetector {
		// Each heartbeat that changes the list costs the node many times more.
		nodes, bounds = 40, Bounds{Nodes: 16, RemoteBundles: 64}
	}
	v := startNodeProc(t, childConfig{URL: srv.URL, ID: "victim", Bounds: bounds})
	p := newPeer(t, srv.URL)
	bundles := func(node string, n int) []Announcement {
		out := make([]Announcement, n)
		for i := range out {
			out[i] = Announcement{Name: fmt.Sprintf("%s-%05d", node, i), Prefix: true, Tools: 1, Digest: "d"}
		}
		return out
	}
	// The node reads heartbeats in order: once it lists node sync with k bundles, it has
	// read every heartbeat sent before.
	synced := func(k int) childStatus {
		t.Helper()
		var st childStatus
		testkit.Eventually(t, 60*time.Second, func() string {
			p.announce("sync", bundles("sync", k))
			if st = v.status(t); st.Members["sync"] != k {
				return fmt.Sprintf("node sync was never listed with %d bundles\n%s", k, v.logs)
			}
			return ""
		})
		return st
	}
	synced(1)
	before, cpu := testkit.RSSKiB(t, v.pid), v.cpu(t)
	p.announce("crowd", bundles("crowd", 15000))
	p.announce("many", bundles("m", 300))
	st := synced(2)
	for _, id := range []string{"crowd", "many"} {
		if n, ok := st.Members[id]; ok {
			t.Errorf("a heartbeat over the bounds was taken: node %s is listed with %d bundles", id, n)
		}
	}
	t.Logf("a heartbeat of 15,000 bundles: %d KiB, %s of processor time", testkit.RSSKiB(t, v.pid)-before, v.cpu(t)-cpu)

	b := bounds.withDefaults(0)
	for i := range nodes {
		p.announce(fmt.Sprintf("n%03d", i), bundles(fmt.Sprintf("n%03d", i), 8))
	}
	st = synced(3)
	if len(st.Members) > b.Nodes {
		t.Errorf("the node lists %d other nodes, over the bound of %d", len(st.Members), b.Nodes)
	}
	// Every remote bundle is listed, or has failed to start, once the tools of the last
	// listed one are there: its node does not answer, so none is.
	grew := testkit.RSSKiB(t, v.pid) - before
	t.Logf("%d nodes of 8 bundles: %d nodes listed, the node grew by %d KiB, %s of processor time in all",
		nodes, len(st.Members), grew, v.cpu(t)-cpu)
	// At most Bounds.RemoteBundles bundles, none of which starts.
	if testkit.MemoryChecked(t) && grew > 96<<10 {
		t.Errorf("heartbeats grew the node by %d KiB, over 96 MiB", grew)
	}
	if !strings.Contains(v.logs.String(), "bytes, over the bound of 262144") {
		t.Errorf("the node's log does not say why the heartbeat of 15,000 bundles was refused:\n%s", v.logs)
	}
}

// A peer's bundle is named as a node's own must be: "pub.x" cannot put "pub.x.steal" under
// bundle pub, nor can "", "x*", "y>" or "a b" be a bundle; and a bundle without prefix
// cannot take the names of this node's bundle gone, which failed to start.
func TestPeerBundleNamesAreChecked(t *testing.T) {
	srv := natstest.Start(t)
	n, _ := startNode(t, srv.URL, "victim", nodeOptions{bundles: []string{"pub"}, broken: []string{"gone"}})
	p := newPeer(t, srv.URL)
	p.serve("mallory", map[string][]any{
		"pub.x": {"steal"}, "": {"w"}, "x*": {"w"}, "y>": {"w"}, "a b": {"w"},
		"thief": {"pub.secret", "gone.secret"}, "fine": {"ok"},
	}, nil)
	var ann []Announcement
	for _, name := range []string{"pub.x", "", "x*", "y>", "a b", "thief", "fine"} {
		ann = append(ann, Announcement{Name: name, Prefix: name != "thief", Tools: 1, Digest: "d"})
	}
	// Once the node lists fine's tools and has given up on gone, and its other bundles have
	// started or given up too, the names are what they will stay.
	settled := func() bool {
		for _, b := range n.Status() {
			if b.State != node.StateReady && b.State != node.StateCrashLoop {
				return false
			}
		}
		return true
	}
	testkit.Eventually(t, 20*time.Second, func() string {
		p.announce("mallory", ann)
		if _, listed := n.Catalog().Lookup("fine.ok"); !listed || !settled() {
			return fmt.Sprintf("the node never settled: %+v", n.Status())
		}
		return ""
	})
	var names []string
	for _, e := range n.Catalog().Entries() {
		names = append(names, e.Name)
	}
	for _, want := range []string{"pub.echo", "fine.ok", "thief.pub.secret", "thief.gone.secret"} {
		if !slices.Contains(names, want) {
			t.Errorf("%s is not listed: %v", want, names)
		}
	}
	for _, name := range names {
		if strings.HasPrefix(name, "pub.x") || name == "pub.secret" || name == "gone.secret" || strings.HasSuffix(name, ".w") || name == "w" {
			t.Errorf("%s is listed: %v", name, names)
		}
	}
	for _, b := range n.Status() {
		if !manifestName(b.Name) {
			t.Errorf("the node runs a bundle named %q", b.Name)
		}
	}
}

func manifestName(s string) bool {
	return s != "" && !strings.ContainsAny(s, ".*> ")
}

// Without the cluster key, a publisher on the cluster's subjects can neither say goodbye
// for a node nor announce as one; a node whose key differs is not a member either. With it,
// nodes list and call each other as before.
func TestForgedNodeMessagesAreRefused(t *testing.T) {
	srv := natstest.Start(t)
	key := writeKey(t, "the cluster's own key, 32 bytes or more")
	logs := &testkit.SyncBuffer{}
	a, ca := startNode(t, srv.URL, "a", nodeOptions{key: key, logs: logs})
	startNode(t, srv.URL, "b", nodeOptions{key: key, bundles: []string{"tb"}})
	startNode(t, srv.URL, "c", nodeOptions{key: writeKey(t, "another key, also 32 bytes or more"), bundles: []string{"sea"}})
	waitListed(t, a, "tb.talk")
	res, err := a.Call(t.Context(), &testkit.Session{}, json.RawMessage(`{"name":"tb.echo","arguments":{"text":"signed"}}`))
	if err != nil || !strings.Contains(string(res), `"tb:signed"`) {
		t.Fatalf("tb.echo across signed nodes answered %s, %v", res, err)
	}

	p := newPeer(t, srv.URL)
	p.serve("b", map[string][]any{"evil": {"steal"}}, nil)
	for end := time.Now().Add(1500 * time.Millisecond); time.Now().Before(end); {
		p.bye("b")
		p.announce("b", []Announcement{{Name: "evil", Prefix: true, Tools: 1, Digest: "d"}})
		if _, ok := a.Catalog().Lookup("tb.talk"); !ok {
			t.Fatal("a forged goodbye or heartbeat of node b took tb.talk off node a's list")
		}
		time.Sleep(10 * time.Millisecond) // the forgeries keep coming for a while: part of what is tested
	}
	for _, e := range a.Catalog().Entries() {
		if strings.HasPrefix(e.Name, "evil.") || strings.HasPrefix(e.Name, "sea.") {
			t.Errorf("node a lists %s", e.Name)
		}
	}
	st := ca.Status(t.Context())
	if len(st.Nodes) != 2 || st.Nodes[1].ID != "b" || st.Nodes[1].Error != "" {
		t.Errorf("node a knows %+v; want itself and b, answering pings", st.Nodes)
	}
	if i := slices.IndexFunc(a.Bounds(), func(b node.Bound) bool { return b.Name == "cluster.nodes" }); i < 0 {
		t.Errorf("toolnode.status shows no cluster.nodes among %+v", a.Bounds())
	} else if b := a.Bounds()[i]; b.Used != 1 || b.Limit != 128 {
		t.Errorf("toolnode.status shows %+v; want 1 of 128 other nodes", b)
	}
	for _, want := range []string{"withdrawn", "message from the cluster refused"} {
		has := strings.Contains(logs.String(), want)
		if has != (want != "withdrawn") {
			t.Errorf("node a's log (has %q: %v):\n%s", want, has, logs)
		}
	}
}

// Under the permissions docs/cluster.md gives (docs/snippets/nats-cluster.conf), nodes a
// and b list and call each other's bundles; whatever holds the cluster key but connects
// as user a can neither say goodbye nor announce as node b: the server refuses both.
func TestDocumentedPermissionsTieNodesToTheirUsers(t *testing.T) {
	conf, err := os.ReadFile("../../../docs/snippets/nats-cluster.conf")
	if err != nil {
		t.Fatal(err)
	}
	srv := natstest.Start(t, string(conf))
	as := func(user string) string {
		return strings.Replace(srv.URL, "nats://", "nats://"+user+":"+user+"-secret@", 1)
	}
	keyFile := writeKey(t, "the cluster's own key, 32 bytes or more")
	logs := &testkit.SyncBuffer{}
	a, _ := startNode(t, as("a"), "a", nodeOptions{key: keyFile, logs: logs})
	startNode(t, as("b"), "b", nodeOptions{key: keyFile, bundles: []string{"tb"}})
	waitListed(t, a, "tb.talk")
	s := &testkit.Session{}
	res, err := a.Call(t.Context(), s, json.RawMessage(`{"name":"tb.talk","arguments":{"text":"allowed"},"_meta":{"progressToken":"p"}}`))
	if err != nil || !strings.Contains(string(res), `"tb:allowed"`) || !strings.Contains(s.Messages(), "notifications/progress") {
		t.Fatalf("tb.talk under the documented permissions answered %s, %v; the client got %s", res, err, s.Messages())
	}

	denied := make(chan string, 16)
	nc, err := nats.Connect(as("a"), nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		select {
		case denied <- err.Error():
		default:
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	key, err := ReadKey(keyFile, nil)
	if err != nil {
		t.Fatal(err)
	}
	mallory := newStream(&keyring{key: key, node: "b", window: DefaultSkew}, nc)
	body, _ := json.Marshal(member{ID: "b", Bundles: []Announcement{{Name: "evil", Prefix: true, Tools: 1, Digest: "d"}}})
	for end := time.Now().Add(time.Second); time.Now().Before(end); {
		_ = mallory.publish(&nats.Msg{Subject: "toolnode.toolnode.bye.b"})
		_ = mallory.publish(&nats.Msg{Subject: "toolnode.toolnode.announce.b", Data: body})
		if _, ok := a.Catalog().Lookup("tb.talk"); !ok {
			t.Fatal("a goodbye or heartbeat for node b, sent as user a, took tb.talk off node a's list")
		}
		time.Sleep(10 * time.Millisecond) // the forgeries keep coming for a while: part of what is tested
	}
	select {
	case why := <-denied:
		if !strings.Contains(why, "Permissions Violation for Publish") {
			t.Errorf("the server said %q", why)
		}
	case <-time.After(5 * time.Second):
		t.Error("the server did not refuse user a's goodbye for node b")
	}
	if strings.Contains(logs.String(), "withdrawn") {
		t.Errorf("node a withdrew a node:\n%s", logs)
	}
}

// The lists of a peer's bundles count against the node's bounds on entries and bytes, and
// come whole: a bundle whose list would pass a bound, or that pages its list, is not
// listed, and the node says why.
func TestPeerListsAreBounded(t *testing.T) {
	srv := natstest.Start(t)
	logs := &testkit.SyncBuffer{}
	n, _ := startNode(t, srv.URL, "victim", nodeOptions{logs: logs, bounds: Bounds{Tools: 6, Lists: 4 << 10}})
	p := newPeer(t, srv.URL)
	fat := map[string]any{"name": "fat", "description": strings.Repeat("f", 8<<10), "inputSchema": map[string]any{"type": "object"}}
	p.serve("mallory", map[string][]any{
		"small": {"a", "b", "c"}, "many": {"1", "2", "3", "4", "5", "6", "7"}, "fat": {fat},
	}, func(r request) bool {
		if r.bundle != "paged" || r.method != "tools/list" {
			return false
		}
		p.answer("mallory", r.msg.Reply, r.id, map[string]any{"tools": []any{map[string]any{"name": "p"}}, "nextCursor": "more"})
		return true
	})
	var ann []Announcement
	for _, name := range []string{"small", "many", "fat", "paged"} {
		ann = append(ann, Announcement{Name: name, Prefix: true, Tools: 1, Digest: "d"})
	}
	// Each refused list fails its bundle's start, which the node logs and tries again.
	whys := []string{"over this node's bound of 6", "over this node's bound of 4096", "nextCursor"}
	testkit.Eventually(t, 20*time.Second, func() string {
		p.announce("mallory", ann)
		_, listed := n.Catalog().Lookup("small.c")
		said := 0
		for _, why := range whys {
			if strings.Contains(logs.String(), why) {
				said++
			}
		}
		if !listed || said != len(whys) {
			return fmt.Sprintf("the node never listed small.c and said why it refused the others (%q):\n%s", whys, logs)
		}
		return ""
	})
	for _, e := range n.Catalog().Entries() {
		if b, _, _ := strings.Cut(e.Name, "."); b == "many" || b == "fat" || b == "paged" {
			t.Errorf("%s is listed", e.Name)
		}
	}
}

// mute is a client that never answers what a bundle asks it.
type mute struct{ testkit.Session }

func (*mute) Request(ctx context.Context, _ string, _ json.RawMessage) (json.RawMessage, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// A peer serving a call may ask the client during it, but no more than maxAsked questions
// wait for the client at once: the rest are answered at once with an error.
func TestPeerRequestsDuringACallAreBounded(t *testing.T) {
	srv := natstest.Start(t)
	n, _ := startNode(t, srv.URL, "victim", nodeOptions{})
	p := newPeer(t, srv.URL)
	inbox := nats.NewInbox()
	refused := make(chan string, 64)
	sub, err := p.nc.Subscribe(inbox, func(m *nats.Msg) { refused <- string(m.Data) })
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	const asked = maxAsked + 8
	p.serve("mallory", map[string][]any{"asker": {"ask"}}, func(r request) bool {
		if r.method != "tools/call" {
			return false
		}
		go func() {
			for i := range asked {
				body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"elicitation/create","params":{"message":"?","requestedSchema":{"type":"object"}}}`, i)
				m := &nats.Msg{Subject: r.msg.Reply, Reply: inbox, Header: nats.Header{}, Data: []byte(body)}
				m.Header.Set(hNode, "mallory")
				m.Header.Set(hKey, "k")
				p.publish(m)
			}
			var got []string
			for len(got) < asked-maxAsked {
				select {
				case a := <-refused:
					got = append(got, a)
				case <-time.After(10 * time.Second):
					t.Errorf("%d of %d questions past the bound were refused", len(got), asked-maxAsked)
					p.answer("mallory", r.msg.Reply, r.id, map[string]any{"content": []any{}})
					return
				}
			}
			if !strings.Contains(got[0], "more than 16 requests") {
				t.Errorf("a question past the bound was answered %s", got[0])
			}
			p.answer("mallory", r.msg.Reply, r.id, map[string]any{"content": []any{map[string]any{"type": "text", "text": "done"}}})
		}()
		return true
	})
	p.keepAnnouncing("mallory", []Announcement{{Name: "asker", Prefix: true, Tools: 1, Digest: "d"}})
	waitListed(t, n, "asker.ask")
	s := &mute{}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	res, err := n.Call(ctx, s, json.RawMessage(`{"name":"asker.ask","_meta":{"progressToken":"t"}}`))
	if err != nil || !strings.Contains(string(res), "done") {
		t.Errorf("asker.ask answered %s, %v", res, err)
	}
}
