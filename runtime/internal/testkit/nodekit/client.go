package nodekit

import (
	"context"
	"encoding/json"
	"iter"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnode/toolnode/runtime/internal/testkit"
)

// callWithin bounds a call made with CallText: one the node leaves unanswered fails the
// test rather than hanging it.
const callWithin = 30 * time.Second

// CallWithin calls the tool name with args, giving up after d.
func CallWithin(t testing.TB, s *mcp.ClientSession, d time.Duration, name string, args map[string]any) (*mcp.CallToolResult, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
}

// CallText calls the tool name with args and returns the text of its result and whether it
// is a tool error; a call that fails at the protocol's level fails the test.
func CallText(t testing.TB, s *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := CallWithin(t, s, callWithin, name, args)
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	return ResultText(res), res.IsError
}

// ResultText is the text of a tool's result, its text parts joined.
func ResultText(res *mcp.CallToolResult) string {
	var sb strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			sb.WriteString(tc.Text)
		}
	}
	return sb.String()
}

// Tools lists the tools s is shown, by name.
func Tools(t testing.TB, s *mcp.ClientSession) map[string]*mcp.Tool {
	t.Helper()
	tools := map[string]*mcp.Tool{}
	for _, tool := range Collect(t, s.Tools(context.Background(), nil)) {
		tools[tool.Name] = tool
	}
	return tools
}

// Names are the keys of a map, sorted: what a failing test shows of a list.
func Names[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// Collect gathers what a paged list of the client yields; an error fails the test.
func Collect[T any](t testing.TB, seq iter.Seq2[T, error]) []T {
	t.Helper()
	out := []T{}
	for v, err := range seq {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

// Status calls toolnode.status and returns its bundles by name, each as the JSON object
// the tool gives.
func Status(t testing.TB, s *mcp.ClientSession) map[string]map[string]any {
	t.Helper()
	res, err := CallWithin(t, s, callWithin, "toolnode.status", nil)
	if err != nil {
		t.Fatal(err)
	}
	var st struct{ Bundles []map[string]any }
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatalf("toolnode.status: %v: %s", err, b)
	}
	out := map[string]map[string]any{}
	for _, b := range st.Bundles {
		out[b["name"].(string)] = b
	}
	return out
}

// ListChanges counts the notifications/tools/list_changed a client receives.
type ListChanges struct{ inbox testkit.Inbox }

// Options are the client options that count them.
func (l *ListChanges) Options() *mcp.ClientOptions {
	return &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		l.inbox.Add("tools/list_changed")
	}}
}

// Count is how many have come.
func (l *ListChanges) Count() int { return len(l.inbox.Items()) }

// WaitPast waits until more than n have come, and fails the test if they do not within d.
func (l *ListChanges) WaitPast(t testing.TB, n int, d time.Duration) {
	t.Helper()
	l.inbox.Wait(t, d, n+1, nil)
}

// ConnectWithToken is Connect for a client that sends the bearer token with every request.
func ConnectWithToken(t testing.TB, url, token string) *mcp.ClientSession {
	t.Helper()
	hc := &http.Client{Transport: bearer{token}}
	return Join(t, NewClient(nil), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, "")
}

// bearer adds a bearer token to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// ConnectAs is Connect for a client that sends the bearer token with every request.
func ConnectAs(t testing.TB, url, token, version string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	hc := &http.Client{Transport: bearer{token}}
	return Join(t, NewClient(opts), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, version)
}
