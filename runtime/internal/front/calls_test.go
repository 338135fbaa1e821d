//lint:file-ignore SA1019 sampling, roots and logging are part of protocol 2025-11-25, which the node serves; they are deprecated only from 2026-07-28 on.

package front_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnode/toolnode/runtime/internal/front"
	"github.com/toolnode/toolnode/runtime/internal/front/httpfront"
	"github.com/toolnode/toolnode/runtime/internal/node"
	"github.com/toolnode/toolnode/runtime/internal/reload"
	"github.com/toolnode/toolnode/runtime/internal/serve"
	"github.com/toolnode/toolnode/runtime/internal/testkit"
	"github.com/toolnode/toolnode/runtime/internal/testkit/nodekit"
	"github.com/toolnode/toolnode/runtime/internal/upstream/upstreamtest"
)

// Calls and lists as a client sees them through the fronts, the official Go SDK client
// speaking to a node in process.

func TestNamesAndPassThrough(t *testing.T) {
	n := nodekit.StartFakes(t, serve.Config{Stdio: true}, testkit.Fake{Name: "alpha", Seats: []string{"node-lamp"}})
	s := n.Client(t, "", nil)
	tools := nodekit.Tools(t, s)
	for _, want := range []string{"node-lamp.on", "alpha.echo", "alpha.big", "alpha.sleep"} {
		if tools[want] == nil {
			t.Errorf("tool %q missing; have %v", want, nodekit.Names(tools))
		}
	}
	if tools["alpha.bad name!"] != nil || tools["bad name!"] != nil {
		t.Errorf("a tool breaking the naming rule was listed")
	}
	if !strings.Contains(n.Logs.String(), `tool "bad name!" of bundle "alpha" left out`) {
		t.Errorf("the refused name was not logged")
	}
	echo := tools["alpha.echo"]
	if echo.Title != "T echo" || echo.Annotations == nil || !echo.Annotations.ReadOnlyHint {
		t.Errorf("title or annotations changed: %+v", echo)
	}
	schema, _ := json.Marshal(echo.InputSchema)
	if string(schema) != `{"properties":{"text":{"type":"string"}},"type":"object"}` {
		t.Errorf("input schema changed: %s", schema)
	}
	_, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "nope.nothing"})
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams || !strings.Contains(rpcErr.Message, `"nope.nothing"`) {
		t.Errorf("unknown tool: got %v, want JSON-RPC -32602 naming the tool", err)
	}
}

func TestTenMiBResultPasses(t *testing.T) {
	s := nodekit.StartFakes(t, serve.Config{Stdio: true}, testkit.Fake{Name: "big"}).Client(t, "", nil)
	const n = 10 << 20
	got, isErr := nodekit.CallText(t, s, "big.big", map[string]any{"bytes": n})
	if isErr || len(got) != n || strings.Trim(got, "x") != "" {
		t.Fatalf("got %d bytes (isError %v), want %d x's", len(got), isErr, n)
	}
}

func TestNamesForStrictClients(t *testing.T) {
	lamp := testkit.Memory{Name: "alpha", Session: true, Manifest: `"seats":["node-lamp"]`}
	strict := regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	check := func(t *testing.T, s *mcp.ClientSession) {
		tools := nodekit.Tools(t, s)
		for name := range tools {
			if !strict.MatchString(name) {
				t.Errorf("tool %q breaks ^[a-zA-Z0-9_-]{1,64}$", name)
			}
		}
		if tools["node-lamp_on"] == nil || tools["alpha_echo"] == nil {
			t.Fatalf("want node-lamp_on and alpha_echo; have %v", nodekit.Names(tools))
		}
		if got, _ := nodekit.CallText(t, s, "alpha_echo", map[string]any{"text": "x"}); got != "alpha:x" {
			t.Errorf("alpha_echo answered %q", got)
		}
		// toolnode.search names tools in the client's form, and toolnode.execute takes it.
		if got, _ := nodekit.CallText(t, s, "toolnode_search", map[string]any{"query": "alpha_echo", "limit": 1}); !strings.Contains(got, `"name":"alpha_echo"`) {
			t.Errorf("toolnode_search for alpha_echo answered %s", got)
		}
		if got, _ := nodekit.CallText(t, s, "toolnode_execute", map[string]any{"name": "alpha_echo", "arguments": map[string]any{"text": "y"}}); got != "alpha:y" {
			t.Errorf("toolnode_execute of alpha_echo answered %q", got)
		}
	}
	t.Run("names underscore", func(t *testing.T) {
		check(t, nodekit.StartMemory(t, serve.Config{Stdio: true, Front: front.Options{Names: front.NamesStrict}}, lamp).Client(t, "", nil))
	})
	auto := serve.Config{Stdio: true, Front: front.Options{Names: front.NamesAuto}}
	t.Run("names auto, any client", func(t *testing.T) {
		n := nodekit.StartMemory(t, auto, lamp)
		client := mcp.NewClient(&mcp.Implementation{Name: "GitHub Copilot CLI", Version: "1"}, nil)
		check(t, nodekit.Join(t, client, n.Stdio(t), ""))
	})
	t.Run("names auto, a client known to take dots", func(t *testing.T) {
		n := nodekit.StartMemory(t, auto, lamp)
		client := mcp.NewClient(&mcp.Implementation{Name: "claude-code", Version: "1"}, nil)
		if nodekit.Tools(t, nodekit.Join(t, client, n.Stdio(t), ""))["alpha.echo"] == nil {
			t.Error("alpha.echo missing")
		}
	})
}

// A bundle stops reading its stdin while a large call is being written to it. Another
// bundle keeps answering the same client, a cancellation still gets through, the calls to
// the stuck bundle fail within their timeout naming it, and the missed ping restarts it.
func TestAStuckBundleStallsNobodyElse(t *testing.T) {
	for _, over := range []string{"stdio", "http"} {
		t.Run(over, func(t *testing.T) {
			cfg := serve.Config{Stdio: over == "stdio",
				Node: node.Config{Supervision: node.Supervision{PingEvery: 700 * time.Millisecond, PingTimeout: 700 * time.Millisecond}}}
			if over == "http" {
				cfg.HTTP = nodekit.Loopback
			}
			n := nodekit.StartFakes(t, cfg, testkit.Fake{Name: "stuck", Extra: `"timeouts": {"call": "2s", "call_max": "3s"}`}, testkit.Fake{Name: "ok"})
			var sess *mcp.ClientSession
			if over == "stdio" {
				sess = n.Client(t, "", nil)
			} else {
				sess = nodekit.Connect(t, n.URL, "", nil)
			}
			first, _ := nodekit.CallText(t, sess, "stuck.pid", nil)

			frozen := make(chan struct{})
			go func() {
				defer close(frozen)
				nodekit.CallWithin(t, sess, 30*time.Second, "stuck.freeze", nil)
			}()
			defer func() { <-frozen }()
			n.Logs.WaitFor(t, 10*time.Second, "fake bundle stuck: frozen") // it reads freeze, then nothing more
			bigDone := make(chan *mcp.CallToolResult, 1)
			go func() {
				res, err := nodekit.CallWithin(t, sess, 60*time.Second, "stuck.echo", map[string]any{"text": strings.Repeat("s", 4<<20)})
				if err != nil {
					res = &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "error: " + err.Error()}}}
				}
				bigDone <- res
			}()

			// A call given up on by the client: its cancellation must get through.
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			_, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "stuck.pid"})
			cancel()
			if err == nil {
				t.Fatal("a call to the stuck bundle was answered")
			}
			for i := range 10 {
				res, err := nodekit.CallWithin(t, sess, 10*time.Second, "ok.echo", map[string]any{"text": fmt.Sprint(i)})
				if err != nil || nodekit.ResultText(res) != fmt.Sprintf("ok:%d", i) {
					t.Fatalf("the other bundle's call %d: %v %v", i, err, res)
				}
			}
			res := <-bigDone
			if !res.IsError || !strings.Contains(nodekit.ResultText(res), `"stuck"`) {
				t.Errorf("the large call to the stuck bundle ended with %q, want an error naming the bundle", nodekit.ResultText(res))
			}
			testkit.Eventually(t, 20*time.Second, func() string {
				if !strings.Contains(n.Logs.String(), "did not answer a ping") {
					return "no ping missed yet"
				}
				res, err := nodekit.CallWithin(t, sess, 10*time.Second, "stuck.pid", nil)
				if err != nil || res.IsError || nodekit.ResultText(res) == first {
					return "still the stuck process"
				}
				return ""
			})
		})
	}
}

// A 2025 bundle that asks for roots without params during a 2026 client's call (as
// server-everything does): the client is asked through input_required, with params it can
// decode, and the call completes with its roots. Over stdio and HTTP.
func TestA2026ClientGivesItsRootsToA2025Bundle(t *testing.T) {
	client := func() *mcp.Client {
		c := nodekit.NewClient(nil)
		c.AddRoots(&mcp.Root{URI: "file:///work/project", Name: "project"})
		return c
	}
	call := func(t *testing.T, s *mcp.ClientSession) {
		if v := s.InitializeResult().ProtocolVersion; v != "2026-07-28" {
			t.Fatalf("the client speaks %s", v)
		}
		res, err := nodekit.CallWithin(t, s, 20*time.Second, "ask.roots", map[string]any{})
		if err != nil {
			t.Fatal(err)
		}
		if got := nodekit.ResultText(res); got != "roots: file:///work/project" {
			t.Errorf("the bundle got %q", got)
		}
	}
	ask := testkit.Fake{Name: "ask"}
	t.Run("stdio", func(t *testing.T) {
		n := nodekit.StartFakes(t, serve.Config{Stdio: true}, ask)
		call(t, nodekit.Join(t, client(), n.Stdio(t), ""))
	})
	t.Run("http", func(t *testing.T) {
		n := nodekit.StartFakes(t, serve.Config{HTTP: nodekit.Loopback}, ask)
		call(t, nodekit.Join(t, client(), &mcp.StreamableClientTransport{Endpoint: n.URL}, ""))
	})
}

// TestInputAskedByA2026BundleReachesClientsOfBothEras: a bundle built with the official Go
// SDK, spoken to statelessly, asks for input with an input_required result. Through the
// node's HTTP front, a client of either era gets the question (the 2026 one as the
// bundle's result, the 2025 one as an elicitation request) and its answer reaches the
// bundle, which greets it; through toolnode.execute too.
func TestInputAskedByA2026BundleReachesClientsOfBothEras(t *testing.T) {
	dir := t.TempDir()
	upstreamtest.Write(t, dir, "gosdk")
	n := nodekit.Start(t, serve.Config{Source: reload.Source{Dirs: []string{dir}}, HTTP: nodekit.Loopback})
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(version, func(t *testing.T) {
			var asked atomic.Int64
			sess := nodekit.Connect(t, n.URL, version, &mcp.ClientOptions{
				ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					asked.Add(1)
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada " + version}}, nil
				}})
			// Called directly, and through toolnode.execute, whose retries carry the bundle's
			// state to it: each call asks once.
			for i, c := range []struct {
				tool string
				args map[string]any
			}{{"gosdk.ask", nil}, {"toolnode.execute", map[string]any{"name": "gosdk.ask"}}} {
				res, err := nodekit.CallWithin(t, sess, 30*time.Second, c.tool, c.args)
				if err != nil || res.IsError || len(res.Content) == 0 {
					t.Fatalf("%s: %v %+v", c.tool, err, res)
				}
				if got := nodekit.ResultText(res); got != "hello Ada "+version || asked.Load() != int64(i+1) {
					t.Errorf("%s: answer %q after %d questions, want %q after %d", c.tool, got, asked.Load(), "hello Ada "+version, i+1)
				}
			}
		})
	}
	if !strings.Contains(n.Logs.String(), "bundle speaks MCP without sessions") {
		t.Error("the bundle was not spoken to statelessly")
	}
}

// A call its client cancels, and over HTTP the calls of a session its client ends, are
// cancelled at their bundle: the session's calls tell their relays themselves (Call.Watch),
// and no end of a call may miss the bundle.
func TestACancelledCallIsCancelledAtItsBundle(t *testing.T) {
	for _, over := range []string{"stdio", "http"} {
		t.Run(over, func(t *testing.T) {
			cfg := serve.Config{Stdio: over == "stdio"}
			if over == "http" {
				cfg.HTTP = nodekit.Loopback
			}
			received := &testkit.SyncBuffer{}
			n := nodekit.StartMemory(t, cfg, testkit.Memory{Name: "slow", Session: true, Received: received})
			started := make(chan struct{}, 4)
			opts := &mcp.ClientOptions{ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
				started <- struct{}{}
			}}
			connect := func() *mcp.ClientSession {
				if over == "stdio" {
					return n.Client(t, "2025-11-25", opts)
				}
				return nodekit.Connect(t, n.URL, "2025-11-25", opts)
			}
			// sleep reports progress when it begins: the call has reached the bundle.
			call := func(ctx context.Context, sess *mcp.ClientSession, token string) chan error {
				ended := make(chan error, 1)
				go func() {
					_, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "slow.sleep", Arguments: map[string]any{"ms": 60000},
						Meta: mcp.Meta{"progressToken": token}})
					ended <- err
				}()
				select {
				case <-started:
				case err := <-ended:
					t.Fatalf("the call ended before it reached the bundle: %v", err)
				case <-time.After(10 * time.Second):
					t.Fatal("the call did not reach the bundle")
				}
				return ended
			}

			sess := connect()
			ctx, cancel := context.WithCancel(context.Background())
			ended := call(ctx, sess, "by-client")
			cancel()
			if err := <-ended; err == nil {
				t.Fatal("a cancelled call was answered")
			}
			received.WaitFor(t, 10*time.Second, `"notifications/cancelled"`)
			if over == "stdio" {
				return
			}

			before := strings.Count(received.String(), `"notifications/cancelled"`)
			other := connect()
			call(context.Background(), other, "by-close")
			end, err := http.NewRequest(http.MethodDelete, n.URL, nil)
			if err != nil {
				t.Fatal(err)
			}
			end.Header.Set(httpfront.HeaderSessionID, other.ID())
			resp, err := http.DefaultClient.Do(end)
			if err != nil {
				t.Fatalf("end the session: %v", err)
			}
			resp.Body.Close()
			if resp.StatusCode/100 != 2 {
				t.Fatalf("end the session: %s", resp.Status)
			}
			testkit.Eventually(t, 10*time.Second, func() string {
				if strings.Count(received.String(), `"notifications/cancelled"`) == before {
					return "the bundle was not told to cancel the call of the ended session"
				}
				return ""
			})
		})
	}
}
