package bundle_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolnode/toolnode/sdk-go/bundle"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// traceServer offers a tool that answers with the trace context its call carried, and
// one that reads it with OpenTelemetry's propagator.
func traceServer(t *testing.T) *bundle.Server {
	t.Helper()
	s := bundle.NewServer(bundle.Options{Logger: discard()})
	if err := s.AddTool(mcp.Tool{Name: "trace"}, func(_ context.Context, c *bundle.Call) (*mcp.CallToolResult, error) {
		return bundle.StructuredResult(c.TraceContext())
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddTool(mcp.Tool{Name: "otel"}, func(ctx context.Context, c *bundle.Call) (*mcp.CallToolResult, error) {
		sc := trace.SpanContextFromContext(propagation.TraceContext{}.Extract(ctx, c.TraceContext()))
		return bundle.StructuredResult(map[string]any{"trace": sc.TraceID().String(), "parent": sc.SpanID().String(),
			"sampled": sc.IsSampled(), "state": sc.TraceState().String(), "remote": sc.IsRemote()})
	}); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestCallTraceContext(t *testing.T) {
	const (
		parent  = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
		state   = "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7"
		stateMe = `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}`
	)
	tests := []struct {
		name       string
		meta       string // members of the call's _meta
		wantParent string
		wantState  string
	}{
		{"both", `"traceparent":"` + parent + `","tracestate":"` + state + `"`, parent, state},
		{"both, 2026-07-28", stateMe + `,"traceparent":"` + parent + `","tracestate":"` + state + `"`, parent, state},
		{"traceparent alone", `"traceparent":"` + parent + `"`, parent, ""},
		{"none", `"progressToken":1`, "", ""},
		{"none, 2026-07-28", stateMe, "", ""},
		{"a later version with more fields", `"traceparent":"cc-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-what-comes"`,
			"cc-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-what-comes", ""},
		{"upper-case hex", `"traceparent":"00-0AF7651916CD43DD8448EB211C80319C-B7AD6B7169203331-01","tracestate":"a=b"`, "", ""},
		{"trace id of zeros", `"traceparent":"00-00000000000000000000000000000000-b7ad6b7169203331-01","tracestate":"a=b"`, "", ""},
		{"parent id of zeros", `"traceparent":"00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01"`, "", ""},
		{"version ff", `"traceparent":"ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"`, "", ""},
		{"version 00 with more", `"traceparent":"` + parent + `-00"`, "", ""},
		{"too short", `"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b716920333-01"`, "", ""},
		{"not a string", `"traceparent":42,"tracestate":"a=b"`, "", ""},
		{"tracestate not a string", `"traceparent":"` + parent + `","tracestate":{"a":"b"}`, parent, ""},
	}
	s := traceServer(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := serve(t, t.Context(), s)
			c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"trace","_meta":{` + tt.meta + `}}}`)
			got := c.recv()
			res, _ := got["result"].(map[string]any)
			sc, _ := res["structuredContent"].(map[string]any)
			if sc == nil {
				t.Fatalf("answer %v", got)
			}
			want := map[string]any{} // what is absent is omitted
			if tt.wantParent != "" {
				want["traceparent"] = tt.wantParent
			}
			if tt.wantState != "" {
				want["tracestate"] = tt.wantState
			}
			diff(t, want, sc)
		})
	}
}

// The call's trace context is a carrier OpenTelemetry's propagator reads.
func TestCallTraceContextWithOpenTelemetry(t *testing.T) {
	c := serve(t, t.Context(), traceServer(t))
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"otel","_meta":{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01","tracestate":"rojo=00f067aa0ba902b7"}}}`)
	diff(t, decode(t, `{"trace":"0af7651916cd43dd8448eb211c80319c","parent":"b7ad6b7169203331","sampled":true,"state":"rojo=00f067aa0ba902b7","remote":true}`),
		c.recv()["result"].(map[string]any)["structuredContent"])
}

func TestTraceContextCarrier(t *testing.T) {
	var tc bundle.TraceContext
	if keys := tc.Keys(); len(keys) != 0 {
		t.Errorf("an empty context has keys %v", keys)
	}
	tc.Set("traceparent", "p")
	tc.Set("tracestate", "s")
	tc.Set("baggage", "b")
	if tc.Get("traceparent") != "p" || tc.Get("tracestate") != "s" || tc.Get("baggage") != "" {
		t.Errorf("Get after Set: %+v", tc)
	}
	if keys := tc.Keys(); len(keys) != 2 || keys[0] != "traceparent" || keys[1] != "tracestate" {
		t.Errorf("Keys: %v", keys)
	}
}
