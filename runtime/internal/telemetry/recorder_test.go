package telemetry_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolnode/toolnode/runtime/internal/telemetry"
)

func TestEnvironmentDecidesExport(t *testing.T) {
	otel := []string{"OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT",
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"}
	tests := []struct {
		name    string
		env     map[string]string
		tracing bool
		nop     bool
		err     string
	}{
		{name: "nothing set", nop: true},
		{name: "endpoint for all signals", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, tracing: true},
		{name: "endpoint for traces", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, tracing: true},
		{name: "metrics only", env: map[string]string{"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://127.0.0.1:4318/v1/metrics"}},
		{name: "traces exporter none", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_TRACES_EXPORTER": "none"}},
		{name: "SDK disabled", nop: true, env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_SDK_DISABLED": "true"}},
		{name: "grpc", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, err: "http/protobuf only"},
		{name: "zipkin", env: map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, err: "only otlp and none"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range otel {
				t.Setenv(k, tc.env[k])
			}
			tel, err := telemetry.New(context.Background(), telemetry.Config{})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("New = %v, want an error with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			defer tel.Shutdown(context.Background())
			if tel.Tracing() != tc.tracing {
				t.Errorf("Tracing() = %v, want %v", tel.Tracing(), tc.tracing)
			}
			if _, nop := tel.Recorder().(telemetry.Nop); nop != tc.nop {
				t.Errorf("Recorder() is %T, want Nop: %v", tel.Recorder(), tc.nop)
			}
		})
	}
}

func TestInject(t *testing.T) {
	rcv := startReceiver(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.URL)
	ctx := context.Background()
	tel, err := telemetry.New(ctx, telemetry.Config{})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	defer tel.Shutdown(ctx)
	const parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	sctx, op := tel.Recorder().StartRequest(ctx, telemetry.Request{
		Method: "tools/call", Meta: json.RawMessage(`{"traceparent":"` + parent + `","tracestate":"vendor=x"}`),
	})
	defer op.End("")

	tests := []struct {
		name   string
		rec    telemetry.Recorder
		ctx    context.Context
		params string
		keep   map[string]any // members of the result besides _meta's trace context
		same   bool           // params come back unchanged
	}{
		{name: "object", rec: tel.Recorder(), ctx: sctx, params: `{"name":"greet"}`, keep: map[string]any{"name": "greet"}},
		{name: "no params", rec: tel.Recorder(), ctx: sctx, params: ``, keep: map[string]any{}},
		{name: "null", rec: tel.Recorder(), ctx: sctx, params: `null`, keep: map[string]any{}},
		{name: "existing _meta", rec: tel.Recorder(), ctx: sctx,
			params: `{"name":"g","_meta":{"progressToken":5,"traceparent":"00-11111111111111111111111111111111-2222222222222222-01"}}`,
			keep:   map[string]any{"name": "g", "progressToken": float64(5)}},
		{name: "spaces", rec: tel.Recorder(), ctx: sctx, params: ` { "name" : "g" , "x" : [1, 2] } `,
			keep: map[string]any{"name": "g", "x": []any{float64(1), float64(2)}}},
		{name: "empty object", rec: tel.Recorder(), ctx: sctx, params: `{ }`, keep: map[string]any{}},
		{name: "null _meta", rec: tel.Recorder(), ctx: sctx, params: `{"_meta" : null, "name":"g"}`, keep: map[string]any{"name": "g"}},
		{name: "_meta in arguments only", rec: tel.Recorder(), ctx: sctx, params: `{"arguments":{"_meta":{"k":1}}}`,
			keep: map[string]any{"arguments": map[string]any{"_meta": map[string]any{"k": float64(1)}}}},
		{name: "array", rec: tel.Recorder(), ctx: sctx, params: `[1,2]`, same: true},
		{name: "no span", rec: tel.Recorder(), ctx: ctx, params: `{"name":"greet"}`, same: true},
		{name: "nop", rec: telemetry.Nop{}, ctx: sctx, params: `{"name":"greet"}`, same: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := tc.rec.Inject(tc.ctx, json.RawMessage(tc.params))
			if tc.same {
				if string(out) != tc.params {
					t.Fatalf("Inject = %s, want %s unchanged", out, tc.params)
				}
				return
			}
			var got map[string]any
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("Inject = %s: %v", out, err)
			}
			meta, _ := got["_meta"].(map[string]any)
			tp, _ := meta["traceparent"].(string)
			// The node's span: the client's trace, a span id of its own.
			if !strings.HasPrefix(tp, "00-0af7651916cd43dd8448eb211c80319c-") || strings.Contains(tp, "b7ad6b7169203331") {
				t.Errorf("traceparent %q does not continue the client's trace with the node's span", tp)
			}
			if meta["tracestate"] != "vendor=x" {
				t.Errorf("tracestate %v, want vendor=x", meta["tracestate"])
			}
			rest := map[string]any{}
			for k, v := range got {
				if k != "_meta" {
					rest[k] = v
				}
			}
			for k, v := range meta {
				if k != "traceparent" && k != "tracestate" {
					rest[k] = v
				}
			}
			if diff := cmp.Diff(tc.keep, rest); diff != "" {
				t.Errorf("other members (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNopOpsAreSafe(t *testing.T) {
	var rec telemetry.Recorder = telemetry.Nop{}
	ctx := context.Background()
	got, op := rec.StartRequest(ctx, telemetry.Request{Method: "tools/list"})
	if got != ctx || op != nil {
		t.Fatalf("Nop.StartRequest = %v, %v; want ctx unchanged and no Op", got, op)
	}
	op.End(telemetry.ToolError) // a nil Op ends without effect
}

// BenchmarkRecorder is the cost the node pays per tools/call it routes to a bundle:
// the request, the bundle call, the _meta injection, both ends.
func BenchmarkRecorder(b *testing.B) {
	// A sink that reads and drops the export, so the figure is the node's cost, not a
	// receiver's decoding.
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
	}))
	defer sink.Close()
	params := json.RawMessage(`{"name":"greet","arguments":{"who":"world"},"_meta":{"progressToken":1}}`)
	meta := json.RawMessage(`{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}`)
	reqID, callID := json.RawMessage(`7`), json.RawMessage(`3`)
	cases := []struct {
		name       string
		prometheus bool
		otlp       string
	}{
		{name: "off"},
		{name: "metrics", prometheus: true},
		{name: "traces+metrics", prometheus: true, otlp: sink.URL},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			b.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", tc.otlp)
			ctx := context.Background()
			tel, err := telemetry.New(ctx, telemetry.Config{Prometheus: tc.prometheus})
			if err != nil {
				b.Fatal(err)
			}
			defer tel.Shutdown(ctx)
			rec := tel.Recorder()
			b.ReportAllocs()
			for b.Loop() {
				rctx, op := rec.StartRequest(ctx, telemetry.Request{
					Method: "tools/call", Target: "example.greet", ID: reqID,
					SessionID: "s", ProtocolVersion: "2025-11-25", Transport: "tcp", Meta: meta,
				})
				bctx, bop := rec.StartBundleCall(rctx, telemetry.BundleCall{Bundle: "example", Method: "tools/call", Target: "greet", ID: callID})
				_ = rec.Inject(bctx, params)
				bop.End("")
				op.End("")
			}
		})
	}
}
