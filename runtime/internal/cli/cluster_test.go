//lint:file-ignore SA1019 sampling, roots and logging are part of protocol 2025-11-25, which the node serves; they are deprecated only from 2026-07-28 on.

package cli_test

import (
	"github.com/toolnode/toolnode/runtime/internal/testkit"
	"github.com/toolnode/toolnode/runtime/internal/testkit/nodekit"

	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnode/toolnode/runtime/internal/cluster/natstest"
)

// startClusterNode runs a node of the bundles in dir, serving HTTP, in the cluster at nats.
func startClusterNode(t *testing.T, dir, nats, id string) *nodekit.Child {
	t.Helper()
	return nodekit.ChildHTTP(t, toolnode(t, "serve", "--names", "canonical", "--http", "127.0.0.1:0", "--bundles", dir, "--cluster", nats, "--cluster-node", id))
}

// waitCallable waits until each tool of names (echo tools) answers a call.
func waitCallable(t *testing.T, s *mcp.ClientSession, within time.Duration, names ...string) {
	t.Helper()
	for _, name := range names {
		testkit.Eventually(t, within, func() string {
			res, err := nodekit.CallWithin(t, s, within, name, map[string]any{"text": "?"})
			if err != nil || res.IsError {
				return fmt.Sprintf("%s does not answer: %v %v", name, err, res)
			}
			return ""
		})
	}
}

// waitTools waits until s lists every tool of want and none of gone.
func waitTools(t *testing.T, s *mcp.ClientSession, within time.Duration, want, gone []string) map[string]*mcp.Tool {
	t.Helper()
	var have map[string]*mcp.Tool
	testkit.Eventually(t, within, func() string {
		have = nodekit.Tools(t, s)
		for _, w := range want {
			if have[w] == nil {
				return fmt.Sprintf("the list is %v; want %v listed and %v gone", nodekit.Names(have), want, gone)
			}
		}
		for _, g := range gone {
			if have[g] != nil {
				return fmt.Sprintf("the list is %v; want %v listed and %v gone", nodekit.Names(have), want, gone)
			}
		}
		return ""
	})
	return have
}

// A client of node A, which runs no bundle, lists and calls the bundles of nodes B and C
// over HTTP and stdio, in both eras, with what each call carries crossing the hop; the
// bundle both B and C serve shares their calls.
func TestClusterNodeFrontsTheBundlesOfEveryNode(t *testing.T) {
	nats := natstest.Start(t).URL
	dirA, dirB, dirC := t.TempDir(), t.TempDir(), t.TempDir()
	// bee and sea both implement node-lamp.on: the merge rules pick one, the same on
	// every node.
	testkit.Write(t, dirB, testkit.Fake{Name: "bee", Seats: []string{"node-lamp"}})
	testkit.Write(t, dirB, testkit.Fake{Name: "shared", Env: map[string]string{"FAKE_NAME": "shared-on-b"}})
	testkit.Write(t, dirC, testkit.Fake{Name: "sea", Seats: []string{"node-lamp"}, Env: map[string]string{"FAKE_SURFACE": "1"}})
	testkit.Write(t, dirC, testkit.Fake{Name: "shared", Env: map[string]string{"FAKE_NAME": "shared-on-c"}})
	b := startClusterNode(t, dirB, nats, "b")
	c := startClusterNode(t, dirC, nats, "c")
	a := startClusterNode(t, dirA, nats, "a")

	var asked atomic.Int32
	elicit := func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked.Add(1)
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "blue"}}, nil
	}
	var progress, logged testkit.Inbox
	opts := func() *mcp.ClientOptions {
		return &mcp.ClientOptions{
			ElicitationHandler: elicit,
			CreateMessageHandler: func(_ context.Context, r *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
				if _, leaked := r.Params.Meta["io.toolnode/request"]; leaked {
					return nil, errors.New("the node's routing key reached the client")
				}
				prompt := r.Params.Messages[0].Content.(*mcp.TextContent).Text
				return &mcp.CreateMessageResult{Model: "test", Role: "assistant", Content: &mcp.TextContent{Text: "4 is " + prompt}}, nil
			},
			ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
				progress.Add(fmt.Sprint(r.Params.ProgressToken))
			},
			LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
				logged.Add(fmt.Sprintf("%v from %s", r.Params.Data, r.Params.Logger))
			},
		}
	}
	stdio := func(version, id string) *mcp.ClientSession {
		s, _ := nodekit.ChildStdio(t, toolnode(t, "serve", "--names", "canonical", "--bundles", dirA, "--cluster", nats, "--cluster-node", id), version, opts())
		return s
	}
	clients := map[string]*mcp.ClientSession{
		"http 2025-11-25":  nodekit.Connect(t, a.URL, "2025-11-25", opts()),
		"http 2026-07-28":  nodekit.Connect(t, a.URL, "2026-07-28", opts()),
		"stdio 2025-11-25": stdio("2025-11-25", "a-stdio-old"),
		"stdio 2026-07-28": stdio("2026-07-28", "a-stdio-new"),
	}
	ctx := context.Background()
	for what, s := range clients {
		t.Run(what, func(t *testing.T) {
			if strings.Contains(what, "2026") {
				// A 2026 client keeps a list for its ttlMs: list once the node has it.
				waitCallable(t, s, 15*time.Second, "bee.echo", "sea.echo", "shared.echo")
			}
			waitTools(t, s, 15*time.Second, []string{"bee.echo", "sea.echo", "shared.echo", "node-lamp.on", "sea.node-lamp.on"}, nil)
			if got, _ := nodekit.CallText(t, s, "node-lamp.on", nil); got != "lamp on by bee" {
				t.Errorf("node-lamp.on answered %q; bee sorts first", got)
			}
			for _, bundle := range []string{"bee", "sea"} {
				if got, isErr := nodekit.CallText(t, s, bundle+".echo", map[string]any{"text": "hi"}); got != bundle+":hi" || isErr {
					t.Errorf("%s.echo answered %q (error %v)", bundle, got, isErr)
				}
			}
			// The bundle asks its user a question during the call, the 2025 way; the
			// question crosses to the client and the answer back, whatever the client's era.
			before := asked.Load()
			if got, _ := nodekit.CallText(t, s, "bee.elicit", map[string]any{"question": "colour?"}); got != "accept: blue" {
				t.Errorf("bee.elicit answered %q", got)
			}
			if asked.Load() != before+1 {
				t.Errorf("the client was asked %d times, want once", asked.Load()-before)
			}
			if got, _ := nodekit.CallText(t, s, "sea.sample", map[string]any{"prompt": "2+2?"}); got != "model said: 4 is 2+2?" {
				t.Errorf("sea.sample answered %q", got)
			}
			// Progress of the bundle on B reaches the client of A under its own token.
			token := "tick-" + what
			params := &mcp.CallToolParams{Name: "sea.ticker", Arguments: map[string]any{"ms": 200, "every": 40}}
			params.SetProgressToken(token)
			if res, err := s.CallTool(ctx, params); err != nil || res.IsError {
				t.Fatalf("sea.ticker: %v %+v", err, res)
			}
			// The bundle sent 5; they may come after the answer.
			progress.Wait(t, 5*time.Second, 5, func(tok string) bool { return tok == token })
		})
	}

	s := clients["http 2025-11-25"]
	t.Run("same names on every node", func(t *testing.T) {
		want := slices.Sorted(maps.Keys(nodekit.Tools(t, s)))
		for _, n := range []*nodekit.Child{b, c} {
			other := nodekit.Connect(t, n.URL, "2025-11-25", nil)
			waitTools(t, other, 15*time.Second, want, nil)
			if got := slices.Sorted(maps.Keys(nodekit.Tools(t, other))); !slices.Equal(got, want) {
				t.Errorf("a node lists\n%v\nwhere node a lists\n%v", got, want)
			}
		}
	})
	t.Run("log messages", func(t *testing.T) {
		if err := s.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
			t.Fatal(err)
		}
		nodekit.CallText(t, s, "bee.chatty", map[string]any{"tag": "across"})
		logged.Wait(t, 5*time.Second, 1, func(m string) bool { return m == "across from bee" })
	})
	t.Run("prompts and resources", func(t *testing.T) {
		var prompts []string
		for p, err := range s.Prompts(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			prompts = append(prompts, p.Name)
		}
		if !slices.Contains(prompts, "sea.greet") {
			t.Errorf("prompts listed: %v; want sea.greet of node c", prompts)
		}
		var uris []string
		for r, err := range s.Resources(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			uris = append(uris, r.URI)
		}
		if !slices.Contains(uris, "fake://sea/readme") {
			t.Fatalf("resources listed: %v; want fake://sea/readme of node c", uris)
		}
		res, err := s.ReadResource(ctx, &mcp.ReadResourceParams{URI: "fake://sea/items/7"})
		if err != nil || len(res.Contents) != 1 || res.Contents[0].Text != "read by sea" {
			t.Errorf("reading a resource of node c's template: %v %+v", err, res)
		}
	})
	t.Run("20 MiB result", func(t *testing.T) {
		// It crosses the hop whole, reaches the client cut to --max-result-bytes (100KiB
		// by default), and is read back whole in ranges through another node of the
		// cluster, which carries the reads to node A, which keeps it.
		const size = 20 << 20
		s := clients["http 2026-07-28"]
		res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "bee.big", Arguments: map[string]any{"bytes": size}})
		if err != nil || res.IsError || len(res.Content) != 2 {
			t.Fatalf("bee.big: %v, %d content items; want the cut text and a note", err, len(res.Content))
		}
		kept, note := res.Content[0].(*mcp.TextContent).Text, res.Content[1].(*mcp.TextContent).Text
		if len(kept)+len(note) > 100<<10 || strings.Trim(kept, "x") != "" {
			t.Fatalf("the client got %d bytes of x's and a note of %d", len(kept), len(note))
		}
		m := regexp.MustCompile(`toolnode://result/\S+/content/0`).FindString(note)
		if m == "" {
			t.Fatalf("the note names no URI: %s", note)
		}
		other := nodekit.Connect(t, b.URL, "2026-07-28", nil)
		read := 0
		for read < size {
			r, err := other.ReadResource(ctx, &mcp.ReadResourceParams{URI: fmt.Sprintf("%s?offset=%d&length=%d", m, read, 4<<20)})
			if err != nil || len(r.Contents) != 1 || r.Contents[0].Text == "" || strings.Trim(r.Contents[0].Text, "x") != "" {
				t.Fatalf("reading from %d through node B: %v", read, err)
			}
			read += len(r.Contents[0].Text)
		}
		if read != size {
			t.Errorf("read back %d bytes, want %d", read, size)
		}
	})
	t.Run("cancellation", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		errc := make(chan error, 1)
		go func() {
			params := &mcp.CallToolParams{Name: "bee.sleep", Arguments: map[string]any{"ms": 60000}}
			params.SetProgressToken("to cancel") // the bundle reports progress once it has the call
			_, err := s.CallTool(cctx, params)
			errc <- err
		}()
		progress.Wait(t, 10*time.Second, 1, func(tok string) bool { return tok == "to cancel" })
		cancel()
		if err := <-errc; err == nil {
			t.Fatal("the cancelled call succeeded")
		}
		// The bundle on node b is told that the client on node a cancelled its call.
		b.Logs.WaitFor(t, 5*time.Second, "fake bundle bee: cancelled")
	})
	t.Run("one bundle on two nodes shares the calls", func(t *testing.T) {
		var onB, onC atomic.Int32
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := range 10 {
					got, isErr := nodekit.CallText(t, s, "shared.echo", map[string]any{"text": fmt.Sprint(i, j)})
					switch {
					case isErr:
						t.Errorf("shared.echo: %s", got)
					case strings.HasPrefix(got, "shared-on-b:"):
						onB.Add(1)
					case strings.HasPrefix(got, "shared-on-c:"):
						onC.Add(1)
					default:
						t.Errorf("shared.echo answered %q", got)
					}
				}
			}()
		}
		wg.Wait()
		if onB.Load() == 0 || onC.Load() == 0 {
			t.Errorf("of 80 calls, node b served %d and node c %d: want both to serve some", onB.Load(), onC.Load())
		}
	})
	t.Run("status", func(t *testing.T) {
		got, _ := nodekit.CallText(t, s, "toolnode.status", nil)
		for _, want := range []string{"cluster toolnode", "node a (this node)", "node b: bee (", "node c: sea (", "round trip"} {
			if !strings.Contains(got, want) {
				t.Errorf("status lacks %q:\n%s", want, got)
			}
		}
		out, err := toolnode(t, "status", "--url", a.URL).CombinedOutput()
		if err != nil {
			t.Fatalf("toolnode status: %v\n%s", err, out)
		}
		rows := map[string]string{}
		for _, line := range strings.Split(string(out), "\n") {
			if f := strings.Fields(line); len(f) >= 4 {
				rows[f[0]] = line
			}
		}
		for node, want := range map[string]string{"a": "(this node)", "b": "bee,shared", "c": "sea,shared"} {
			if !strings.Contains(rows[node], want) || (node != "a" && !strings.HasSuffix(rows[node], "ms")) {
				t.Errorf("toolnode status shows node %s as %q; want %q and a round trip:\n%s", node, rows[node], want, out)
			}
		}
	})
}

// Node B is killed with SIGKILL while a client of node A calls it and the bundle B shares
// with C: every call is answered, the ones B held with an error naming it, long before
// they would have ended; B's own bundle leaves A's list within 5 s, with list_changed; B
// restarted is listed again.
func TestClusterNodeKilledUnderLoad(t *testing.T) {
	nats := natstest.Start(t).URL
	dirA, dirB, dirC := t.TempDir(), t.TempDir(), t.TempDir()
	testkit.Write(t, dirB, testkit.Fake{Name: "bee"})
	testkit.Write(t, dirB, testkit.Fake{Name: "shared"})
	testkit.Write(t, dirC, testkit.Fake{Name: "shared"})
	b := startClusterNode(t, dirB, nats, "b")
	startClusterNode(t, dirC, nats, "c")
	a := startClusterNode(t, dirA, nats, "a")
	changed := make(chan struct{}, 64)
	var progress testkit.Inbox
	s := nodekit.Connect(t, a.URL, "2025-11-25", &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			progress.Add(fmt.Sprint(r.Params.ProgressToken))
		},
	})
	waitTools(t, s, 15*time.Second, []string{"bee.sleep", "shared.echo"}, nil)
	for len(changed) > 0 {
		<-changed
	}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var answered, failedNamingB atomic.Int32
	call := func(name string, args map[string]any) {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			// A call left unanswered would hold this goroutine past the test's bound.
			cctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			res, err := s.CallTool(cctx, &mcp.CallToolParams{Name: name, Arguments: args})
			cancel()
			var text string
			switch {
			case errors.Is(err, context.DeadlineExceeded):
				t.Errorf("a call to %s was left unanswered for 20s", name)
				return
			case err != nil:
				text = err.Error()
			case res.IsError:
				text = nodekit.ResultText(res)
			default:
				answered.Add(1)
				continue
			}
			// Calls made while b's bundle leaves the list find it gone, at once; one sent to b
			// just before A withdrew it is told no node serves it (NATS's 503).
			gone := strings.Contains(text, "unknown tool") || strings.Contains(text, `bundle "bee" is not running`) ||
				strings.Contains(text, `serves bundle "bee" now`)
			if strings.Contains(text, `node "b"`) {
				failedNamingB.Add(1)
			} else if !gone {
				t.Errorf("%s failed without naming node b: %s", name, text)
			}
		}
	}
	for range 4 {
		wg.Add(2)
		go call("shared.sleep", map[string]any{"ms": 20})
		go call("bee.sleep", map[string]any{"ms": 20})
	}
	// Calls B would hold for a minute: they must fail once B is gone, not then.
	long := make(chan error, 2)
	for i := range 2 {
		go func() {
			params := &mcp.CallToolParams{Name: "bee.sleep", Arguments: map[string]any{"ms": 60000}}
			params.SetProgressToken(fmt.Sprintf("long-%d", i)) // the bundle reports progress once it has the call
			res, err := s.CallTool(context.Background(), params)
			if err == nil && !res.IsError {
				err = errors.New("answered " + nodekit.ResultText(res))
			} else if err == nil {
				err = errors.New(nodekit.ResultText(res))
			}
			long <- err
		}()
	}
	// B is killed once it holds both long calls, the load running.
	progress.Wait(t, 10*time.Second, 2, func(tok string) bool { return strings.HasPrefix(tok, "long-") })
	if err := testkit.Kill(b.Pid()); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	waitTools(t, s, 5*time.Second, []string{"shared.echo"}, []string{"bee.sleep"})
	withdrawn := time.Since(killed)
	select {
	case <-changed:
	case <-time.After(time.Second):
		t.Error("no notifications/tools/list_changed reached the client when node b's bundle left")
	}
	for range 2 {
		select {
		case err := <-long:
			if !strings.Contains(err.Error(), `node "b"`) {
				t.Errorf("a call held by node b ended with %q, which does not name it", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a call held by node b was still unanswered 10s after b was withdrawn")
		}
	}
	time.Sleep(500 * time.Millisecond) // the load goes on after B is gone: part of what is tested
	close(stop)
	wg.Wait()
	t.Logf("node b withdrawn %s after SIGKILL; %d calls answered, %d failed naming node b", withdrawn.Round(time.Millisecond), answered.Load(), failedNamingB.Load())
	if answered.Load() == 0 {
		t.Error("no call succeeded")
	}
	got, isErr := nodekit.CallText(t, s, "shared.echo", map[string]any{"text": "still"})
	if isErr || got != "shared:still" {
		t.Errorf("after b's death shared.echo answered %q (error %v); c serves it", got, isErr)
	}

	startClusterNode(t, dirB, nats, "b")
	waitTools(t, s, 15*time.Second, []string{"bee.sleep"}, nil)
	if got, isErr := nodekit.CallText(t, s, "bee.echo", map[string]any{"text": "back"}); isErr || got != "bee:back" {
		t.Errorf("bee.echo after b's return answered %q", got)
	}
}

// The cluster flags are checked before anything starts.
func TestClusterFlagsChecked(t *testing.T) {
	short := t.TempDir() + "/short.key"
	if err := os.WriteFile(short, []byte("too short\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--bundles", ".", "--cluster-name", "x", "--cluster-creds", "f"}, "--cluster-* flags go with --cluster URL"},
		{[]string{"--cluster", "127.0.0.1:4222"}, "want nats://HOST:PORT"},
		{[]string{"--cluster", "nats://127.0.0.1:1", "--cluster-tls-cert", "c.pem"}, "go together"},
		{[]string{"--bundles", ".", "--cluster-key", short}, "--cluster-* flags go with --cluster URL"},
		{[]string{"--cluster", "nats://127.0.0.1:1", "--cluster-key", short}, "9 bytes, want at least 32"},
	} {
		out, err := toolnode(t, append([]string{"serve"}, tc.args...)...).CombinedOutput()
		if err == nil || !strings.Contains(string(out), tc.want) {
			t.Errorf("serve %v: %v, %s; want an error saying %q", tc.args, err, out, tc.want)
		}
	}
}

// Node b loses its NATS server: it goes on serving its own bundle to its own client, node
// a's list loses b's bundle, and once the server is back b rejoins and a lists it again.
func TestClusterNodeRejoinsAfterLosingTheServer(t *testing.T) {
	srv := natstest.Start(t)
	dirA, dirB := t.TempDir(), t.TempDir()
	testkit.Write(t, dirB, testkit.Fake{Name: "bee"})
	b := startClusterNode(t, dirB, srv.URL, "b")
	a := startClusterNode(t, dirA, srv.URL, "a")
	sa := nodekit.Connect(t, a.URL, "2025-11-25", nil)
	sb := nodekit.Connect(t, b.URL, "2025-11-25", nil)
	waitTools(t, sa, 15*time.Second, []string{"bee.echo"}, nil)

	srv.Stop()
	if got, isErr := nodekit.CallText(t, sb, "bee.echo", map[string]any{"text": "alone"}); isErr || got != "bee:alone" {
		t.Errorf("without its NATS server, node b's own client got %q", got)
	}
	waitTools(t, sa, 10*time.Second, nil, []string{"bee.echo"})

	srv.Restart(t)
	waitTools(t, sa, 15*time.Second, []string{"bee.echo"}, nil)
	if got, isErr := nodekit.CallText(t, sa, "bee.echo", map[string]any{"text": "again"}); isErr || got != "bee:again" {
		t.Errorf("after b rejoined, a's client got %q", got)
	}
}

// A bundle added to node b's folder while it runs is listed on node a; removed, it leaves
// a's list, and a bundle of the same name added to a itself then serves a's calls.
func TestClusterFollowsBundlesAddedAndRemoved(t *testing.T) {
	nats := natstest.Start(t).URL
	dirA, dirB := t.TempDir(), t.TempDir()
	testkit.Write(t, dirB, testkit.Fake{Name: "bee"})
	startClusterNode(t, dirB, nats, "b")
	a := startClusterNode(t, dirA, nats, "a")
	s := nodekit.Connect(t, a.URL, "2025-11-25", nil)
	waitTools(t, s, 15*time.Second, []string{"bee.echo"}, nil)

	testkit.Write(t, dirB, testkit.Fake{Name: "wasp"})
	waitTools(t, s, 15*time.Second, []string{"wasp.echo"}, nil)
	if err := os.RemoveAll(dirB + "/wasp"); err != nil {
		t.Fatal(err)
	}
	waitTools(t, s, 15*time.Second, nil, []string{"wasp.echo"})

	// The same name on a: a's own bundle serves a's calls.
	testkit.Write(t, dirA, testkit.Fake{Name: "bee", Env: map[string]string{"FAKE_NAME": "bee-on-a"}})
	testkit.Eventually(t, 15*time.Second, func() string {
		if got, _ := nodekit.CallText(t, s, "bee.echo", map[string]any{"text": "x"}); got != "bee-on-a:x" {
			return "node a's own bee never took its calls from node b's: " + got
		}
		return ""
	})
}
