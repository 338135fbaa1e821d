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

// TestTraceMeta holds the _meta members the node gives a bundle's request to what
// continues the client's trace with the node's span, and to nothing off tracing.
func TestTraceMeta(t *testing.T) {
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

	for _, tc := range []struct {
		name string
		rec  telemetry.Recorder
		ctx  context.Context
	}{
		{name: "no span", rec: tel.Recorder(), ctx: ctx},
		{name: "nop", rec: telemetry.Nop{}, ctx: sctx},
	} {
		if edits := tc.rec.TraceMeta(tc.ctx); edits != nil {
			t.Errorf("%s: TraceMeta = %v, want nil", tc.name, edits)
		}
	}

	edits := tel.Recorder().TraceMeta(sctx)
	got := map[string]string{}
	var keys []string
	for _, e := range edits {
		var v string
		if err := json.Unmarshal(e.Value, &v); err != nil {
			t.Fatalf("member %s = %s, not a JSON string: %v", e.Key, e.Value, err)
		}
		got[e.Key] = v
		keys = append(keys, e.Key)
	}
	if diff := cmp.Diff([]string{"traceparent", "tracestate"}, keys); diff != "" {
		t.Errorf("members, sorted (-want +got):\n%s", diff)
	}
	// The node's span: the client's trace, a span id of its own.
	if tp := got["traceparent"]; !strings.HasPrefix(tp, "00-0af7651916cd43dd8448eb211c80319c-") || strings.Contains(tp, "b7ad6b7169203331") {
		t.Errorf("traceparent %q does not continue the client's trace with the node's span", tp)
	}
	if got["tracestate"] != "vendor=x" {
		t.Errorf("tracestate %q, want vendor=x", got["tracestate"])
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
// the request, the bundle call, the trace context for the bundle's _meta, both ends.
func BenchmarkRecorder(b *testing.B) {
	// A sink that reads and drops the export, so the figure is the node's cost, not a
	// receiver's decoding.
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
	}))
	defer sink.Close()
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
				_ = rec.TraceMeta(bctx)
				bop.End("")
				op.End("")
			}
		})
	}
}
