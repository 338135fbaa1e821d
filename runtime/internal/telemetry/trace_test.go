package telemetry_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"testing"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"go.uber.org/goleak"

	"github.com/toolnode/toolnode/runtime/internal/telemetry"
	"github.com/toolnode/toolnode/runtime/internal/telemetry/otlptest"
	"github.com/toolnode/toolnode/runtime/internal/testkit"
	"github.com/toolnode/toolnode/sdk-go/rawjson"
)

// bundleEnv makes the test binary act as a bundle: it answers one tools/call read from
// stdin, with a span of its own that continues the trace found in the call's _meta.
const bundleEnv = "TELEMETRY_TEST_BUNDLE"

func TestMain(m *testing.M) {
	if os.Getenv(bundleEnv) == "1" {
		if err := bundleMain(); err != nil {
			fmt.Fprintln(os.Stderr, "bundle:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m, testkit.KeptAliveConns()...)
}

// tracerProvider exports to the OTLP endpoint of the environment as service.
func tracerProvider(ctx context.Context, service string) (*sdktrace.TracerProvider, error) {
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, err
	}
	return sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp),
		sdktrace.WithResource(resource.NewSchemaless(semconv.ServiceName(service)))), nil
}

func bundleMain() error {
	ctx := context.Background()
	line, err := bufio.NewReader(os.Stdin).ReadBytes('\n')
	if err != nil {
		return err
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Params struct {
			Name string            `json:"name"`
			Meta map[string]string `json:"_meta"`
		} `json:"params"`
	}
	if err := json.Unmarshal(line, &msg); err != nil {
		return err
	}
	tp, err := tracerProvider(ctx, "bundle")
	if err != nil {
		return err
	}
	ctx = propagation.TraceContext{}.Extract(ctx, propagation.MapCarrier(msg.Params.Meta))
	_, span := tp.Tracer("bundle").Start(ctx, "tools/call "+msg.Params.Name, trace.WithSpanKind(trace.SpanKindServer))
	span.End()
	if err := tp.Shutdown(ctx); err != nil {
		return err
	}
	_, err = fmt.Printf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[]}}`+"\n", msg.ID)
	return err
}

// callBundle runs the test binary as a bundle and sends it one tools/call with params.
func callBundle(t *testing.T, params json.RawMessage) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), bundleEnv+"=1")
	cmd.Stdin = bytes.NewReader(append(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":%s}`, params), '\n'))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bundle: %v\n%s", err, stderr.String())
	}
	if !bytes.Contains(out, []byte(`"result"`)) {
		t.Fatalf("bundle answered %q", out)
	}
}

func TestOneTraceFromClientThroughBundle(t *testing.T) {
	rcv := startReceiver(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.URL)
	ctx := context.Background()

	// The client: its own provider, its span's context in the request's _meta.
	client, err := tracerProvider(ctx, "client")
	if err != nil {
		t.Fatal(err)
	}
	cctx, cspan := client.Tracer("client").Start(ctx, "tools/call example.greet", trace.WithSpanKind(trace.SpanKindClient))
	carrier := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(cctx, carrier)
	meta, _ := json.Marshal(carrier)

	// The node.
	tel, err := telemetry.New(ctx, telemetry.Config{ServiceName: "toolnode"})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if !tel.Tracing() {
		t.Fatal("tracing is off with OTEL_EXPORTER_OTLP_ENDPOINT set")
	}
	rec := tel.Recorder()
	nctx, op := rec.StartRequest(ctx, telemetry.Request{
		Method: "tools/call", Target: "example.greet", ID: json.RawMessage(`"req-7"`),
		SessionID: "s-1", ProtocolVersion: "2025-11-25", Transport: "tcp", Meta: meta,
	})
	bctx, bop := rec.StartBundleCall(nctx, telemetry.BundleCall{Bundle: "example", Method: "tools/call", Target: "greet", ID: json.RawMessage(`3`)})
	// The trace context in the _meta of the bundle's request, as the node's edit of its
	// params puts it (upstream.Edit.Meta).
	bundleMeta, _ := rawjson.PutMembers([]byte(`{}`), rec.TraceMeta(bctx)...)
	params, _ := rawjson.PutMember([]byte(`{"name":"greet","arguments":{"who":"x"}}`), "_meta", bundleMeta)
	callBundle(t, params)
	bop.End("")
	op.End("")

	// A failed call, in a trace of its own.
	_, failed := rec.StartRequest(ctx, telemetry.Request{Method: "tools/call", Target: "example.fail", ID: json.RawMessage(`8`)})
	failed.End(telemetry.ToolError)

	cspan.End()
	if err := client.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := tel.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}

	byName := map[string]otlptest.Span{}
	for _, s := range rcv.Spans() {
		byName[s.Service+" "+s.Name] = s
	}
	chain := []string{ // each the parent of the next
		"client tools/call example.greet",
		"toolnode tools/call example.greet",
		"toolnode tools/call greet",
		"bundle tools/call greet",
	}
	for i, name := range chain {
		s, ok := byName[name]
		if !ok {
			t.Fatalf("no span %q among %v", name, names(rcv.Spans()))
		}
		if !bytes.Equal(s.TraceId, byName[chain[0]].TraceId) {
			t.Errorf("%s: trace %x, want the client's %x", name, s.TraceId, byName[chain[0]].TraceId)
		}
		if i > 0 && !bytes.Equal(s.ParentSpanId, byName[chain[i-1]].SpanId) {
			t.Errorf("%s: parent %x, want %s's %x", name, s.ParentSpanId, chain[i-1], byName[chain[i-1]].SpanId)
		}
	}

	tests := []struct {
		span string
		kind tracepb.Span_SpanKind
		want map[string]string
	}{
		{"toolnode tools/call example.greet", tracepb.Span_SPAN_KIND_SERVER, map[string]string{
			"mcp.method.name": "tools/call", "gen_ai.tool.name": "example.greet", "gen_ai.operation.name": "execute_tool",
			"jsonrpc.request.id": "req-7", "mcp.session.id": "s-1", "mcp.protocol.version": "2025-11-25",
			"network.transport": "tcp", "error.type": "",
		}},
		{"toolnode tools/call greet", tracepb.Span_SPAN_KIND_CLIENT, map[string]string{
			"mcp.method.name": "tools/call", "gen_ai.tool.name": "greet", "toolnode.bundle.name": "example",
			"jsonrpc.request.id": "3", "network.transport": "pipe",
		}},
		{"toolnode tools/call example.fail", tracepb.Span_SPAN_KIND_SERVER, map[string]string{
			"mcp.method.name": "tools/call", "gen_ai.tool.name": "example.fail", "jsonrpc.request.id": "8",
			"error.type": "tool_error",
		}},
	}
	for _, tc := range tests {
		s, ok := byName[tc.span]
		if !ok {
			t.Errorf("no span %q", tc.span)
			continue
		}
		if s.Kind != tc.kind {
			t.Errorf("%s: kind %v, want %v", tc.span, s.Kind, tc.kind)
		}
		got := map[string]string{}
		for _, a := range s.Attributes {
			got[a.Key] = a.GetValue().GetStringValue()
		}
		for k, v := range tc.want {
			if got[k] != v {
				t.Errorf("%s: %s = %q, want %q", tc.span, k, got[k], v)
			}
		}
		if failed := tc.want["error.type"] != ""; failed != (s.GetStatus().GetCode() == tracepb.Status_STATUS_CODE_ERROR) {
			t.Errorf("%s: status %v", tc.span, s.GetStatus())
		}
	}

	// The duration metric went out by OTLP too, at shutdown: two calls.
	m := rcv.Metric("mcp.server.operation.duration")
	if m == nil {
		t.Fatal("no mcp.server.operation.duration received")
	}
	var count uint64
	for _, dp := range m.GetHistogram().GetDataPoints() {
		count += dp.Count
	}
	if count != 2 || m.Unit != "s" {
		t.Errorf("mcp.server.operation.duration: %d calls in %q, want 2 in s", count, m.Unit)
	}
}

func names(spans []otlptest.Span) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Service+" "+s.Name+" "+hex.EncodeToString(s.SpanId))
	}
	return out
}
