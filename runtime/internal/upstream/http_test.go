//lint:file-ignore SA1019 a 2025-11-25 server asking the client over its session is what one of these tests exercises

package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnode/toolnode/runtime/internal/rpc"
	"github.com/toolnode/toolnode/sdk-go/mcp"
	"github.com/toolnode/toolnode/sdk-go/rawjson"
)

// sampler answers the bundle's sampling requests, as a client behind the node would.
type sampler struct{ recorder }

func (s *sampler) Request(_ context.Context, _ *Client, method string, _ json.RawMessage) (json.RawMessage, error) {
	if method != "sampling/createMessage" {
		return nil, rpc.Errorf(mcp.CodeMethodNotFound, "no %s here", method)
	}
	return json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"forty-two"},"model":"m"}`), nil
}

func startRemote(t *testing.T, cfg Config) *Client {
	t.Helper()
	cfg.Name = "r"
	if cfg.Handler == nil {
		cfg.Handler = &recorder{}
	}
	c, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Initialize(ctx); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return c
}

// TestARemoteBundleInASessionAsksTheClient: a 2025-11-25 server over Streamable HTTP sends
// sampling/createMessage on the stream of the call it serves; the session hands it to the
// Handler and posts the answer back, and the call completes with it.
func TestARemoteBundleInASessionAsksTheClient(t *testing.T) {
	s := sdk.NewServer(&sdk.Implementation{Name: "asker", Version: "1"}, &sdk.ServerOptions{SupportedProtocolVersions: []string{"2025-11-25"}})
	sdk.AddTool(s, &sdk.Tool{Name: "ask", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *sdk.CallToolRequest, _ map[string]any) (*sdk.CallToolResult, any, error) {
			res, err := req.Session.CreateMessage(ctx, &sdk.CreateMessageParams{MaxTokens: 5,
				Messages: []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: "?"}}}})
			if err != nil {
				return nil, nil, err
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "model said " + res.Content.(*sdk.TextContent).Text}}}, nil, nil
		})
	srv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	t.Cleanup(srv.Close) // after the session has ended (cleanups run last to first): its GET stream holds the server
	c := startRemote(t, Config{URL: srv.URL, Handler: &sampler{}, Capabilities: json.RawMessage(`{"sampling":{}}`)})
	if c.Era() != EraSession {
		t.Fatalf("era %v", c.Era())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	raw, err := c.Call(ctx, mcp.MethodToolsCall, map[string]any{"name": "ask", "arguments": map[string]any{}})
	if err != nil || !strings.Contains(string(raw), "model said forty-two") {
		t.Fatalf("tools/call: %s %v", raw, err)
	}
}

// statelessStub is a hand-written 2026-07-28 server: it answers server/discover, and
// tools/call with what answer returns for the call's params.
func statelessStub(t *testing.T, tools string, answer func(w http.ResponseWriter, r *http.Request, id string, params json.RawMessage)) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		body, _ := io.ReadAll(r.Body)
		if json.Unmarshal(body, &m) != nil || r.Header.Get(headerMethod) != m.Method {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch m.Method {
		case mcp.MethodDiscover:
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"ttlMs":0,"cacheScope":"public"}}`, m.ID)
		case mcp.MethodToolsList:
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[%s]}}`, m.ID, tools)
		default:
			answer(w, r, string(m.ID), m.Params)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestInputRequiredPassesThrough: a stateless bundle's input_required result comes back
// as it was sent, and the retry's inputResponses and requestState reach the bundle.
func TestInputRequiredPassesThrough(t *testing.T) {
	const need = `{"resultType":"input_required","inputRequests":{"q":{"method":"elicitation/create","params":{"message":"name?","requestedSchema":{"type":"object"}}}},"requestState":"opaque-1"}`
	srv := statelessStub(t, "", func(w http.ResponseWriter, _ *http.Request, id string, params json.RawMessage) {
		if state, ok := rawjson.Member(params, "requestState"); ok {
			resp, _ := rawjson.Member(params, "inputResponses")
			text, _ := json.Marshal(fmt.Sprintf("state %s, responses %s", state, resp))
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":%s}]}}`, id, text)
			return
		}
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, id, need)
	})
	c := startRemote(t, Config{URL: srv.URL})
	if c.Era() != EraStateless {
		t.Fatalf("era %v", c.Era())
	}
	ctx := context.Background()
	raw, err := c.Call(ctx, mcp.MethodToolsCall, json.RawMessage(`{"name":"greet","arguments":{}}`))
	if err != nil || string(raw) != need {
		t.Fatalf("first call: %s %v; want the input_required result unchanged", raw, err)
	}
	raw, err = c.Call(ctx, mcp.MethodToolsCall, json.RawMessage(`{"name":"greet","arguments":{},"inputResponses":{"q":{"action":"accept","content":{"name":"Ada"}}},"requestState":"opaque-1"}`))
	if err != nil || !strings.Contains(string(raw), `state \"opaque-1\"`) || !strings.Contains(string(raw), "Ada") {
		t.Fatalf("retry: %s %v", raw, err)
	}
}

// TestRemoteFailures: what goes wrong with a remote bundle ends the call it concerns with
// an error saying what, and only a lost server ends the session.
func TestRemoteFailures(t *testing.T) {
	t.Run("an answer over the limit fails its call only", func(t *testing.T) {
		srv := statelessStub(t, "", func(w http.ResponseWriter, _ *http.Request, id string, _ json.RawMessage) {
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"%s"}]}}`, id, strings.Repeat("x", 4096))
		})
		c := startRemote(t, Config{URL: srv.URL, MaxLine: 2048})
		_, err := c.Call(context.Background(), mcp.MethodToolsCall, json.RawMessage(`{"name":"big"}`))
		if !errors.Is(err, rpc.ErrBadAnswer) || !strings.Contains(err.Error(), "over 2048 bytes") {
			t.Fatalf("error %v, want ErrBadAnswer naming the limit", err)
		}
		if err := c.Ping(context.Background()); err != nil {
			t.Errorf("the session did not survive: %v", err)
		}
	})
	t.Run("an HTTP error without a JSON-RPC body", func(t *testing.T) {
		srv := statelessStub(t, "", func(w http.ResponseWriter, _ *http.Request, _ string, _ json.RawMessage) {
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, "down for maintenance")
		})
		c := startRemote(t, Config{URL: srv.URL})
		_, err := c.Call(context.Background(), mcp.MethodToolsCall, json.RawMessage(`{"name":"x"}`))
		if err == nil || !strings.Contains(err.Error(), "503") || !strings.Contains(err.Error(), "down for maintenance") {
			t.Fatalf("error %v", err)
		}
	})
	t.Run("giving up closes the request's stream, which cancels it", func(t *testing.T) {
		cancelled := make(chan struct{}, 1)
		srv := statelessStub(t, "", func(w http.ResponseWriter, r *http.Request, _ string, _ json.RawMessage) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			select {
			case cancelled <- struct{}{}:
			default:
			}
		})
		c := startRemote(t, Config{URL: srv.URL})
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		if _, err := c.Call(ctx, mcp.MethodToolsCall, json.RawMessage(`{"name":"slow"}`)); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("error %v", err)
		}
		select {
		case <-cancelled:
		case <-time.After(5 * time.Second):
			t.Error("the server's request went on after the call was given up")
		}
	})
	t.Run("a server that goes away ends the session", func(t *testing.T) {
		srv := statelessStub(t, "", func(http.ResponseWriter, *http.Request, string, json.RawMessage) {})
		c := startRemote(t, Config{URL: srv.URL})
		srv.Close()
		_, err := c.Call(context.Background(), mcp.MethodToolsCall, json.RawMessage(`{"name":"x"}`))
		if !errors.Is(err, ErrGone) || !strings.Contains(err.Error(), "POST tools/call: ") {
			t.Fatalf("error %v, want ErrGone saying why", err)
		}
		select {
		case <-c.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("the session did not end")
		}
		if !strings.HasPrefix(c.ExitStatus(), "disconnected") {
			t.Errorf("status %q", c.ExitStatus())
		}
	})
}

// TestParametersMarkedForHeadersAreMirrored: a stateless remote bundle's tool parameters
// marked x-mcp-header go into Mcp-Param-<Name> headers of each call, encoded as the
// revision says; a tool whose marks break the rules is left out of the list.
func TestParametersMarkedForHeadersAreMirrored(t *testing.T) {
	const tools = `{"name":"sql","inputSchema":{"type":"object","properties":{` +
		`"region":{"type":"string","x-mcp-header":"Region"},` +
		`"opts":{"type":"object","properties":{"verbose":{"type":"boolean","x-mcp-header":"Verbose"},"limit":{"type":"integer","x-mcp-header":"Limit"}}},` +
		`"query":{"type":"string"}}}},` +
		`{"name":"bad","inputSchema":{"type":"object","properties":{"xs":{"type":"array","items":{"type":"string","x-mcp-header":"X"}}}}},` +
		`{"name":"float","inputSchema":{"type":"object","properties":{"f":{"type":"number","x-mcp-header":"F"}}}}`
	got := make(chan http.Header, 1)
	srv := statelessStub(t, tools, func(w http.ResponseWriter, r *http.Request, id string, _ json.RawMessage) {
		got <- r.Header.Clone()
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[]}}`, id)
	})
	c := startRemote(t, Config{URL: srv.URL})
	list, err := c.ListTools(context.Background())
	if err != nil || len(list) != 1 || !strings.Contains(string(list[0]), `"sql"`) {
		t.Fatalf("tools/list kept %d tools, want only sql: %s %v", len(list), list, err)
	}
	if _, err := c.Call(context.Background(), mcp.MethodToolsCall,
		json.RawMessage(`{"name":"sql","arguments":{"region":"Zürich","opts":{"verbose":true,"limit":42},"query":"select 1"}}`)); err != nil {
		t.Fatal(err)
	}
	h := <-got
	for k, want := range map[string]string{"Mcp-Param-Region": "=?base64?WsO8cmljaA==?=", "Mcp-Param-Verbose": "true",
		"Mcp-Param-Limit": "42", "Mcp-Name": "sql", "Mcp-Method": "tools/call"} {
		if h.Get(k) != want {
			t.Errorf("%s: %q, want %q", k, h.Get(k), want)
		}
	}
}
