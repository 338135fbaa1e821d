package front_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolnode/toolnode/runtime/internal/reload"
	"github.com/toolnode/toolnode/runtime/internal/serve"
	"github.com/toolnode/toolnode/runtime/internal/telemetry/otlptest"
	"github.com/toolnode/toolnode/runtime/internal/testkit"
	"github.com/toolnode/toolnode/runtime/internal/testkit/nodekit"
	"github.com/toolnode/toolnode/sdk-go/bundle"
	sdkmcp "github.com/toolnode/toolnode/sdk-go/mcp"
)

// tracedBundleEnv makes the test binary a bundle built with our Go SDK whose one tool,
// work, continues the trace its call carried with a span of its own, exported by OTLP to
// where OTEL_EXPORTER_OTLP_ENDPOINT says before the call is answered.
const tracedBundleEnv = "TOOLNODE_TRACED_BUNDLE"

func tracedBundle() error {
	ctx := context.Background()
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return err
	}
	// A syncer exports each span as it ends: it is at the receiver before the answer.
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp),
		sdktrace.WithResource(resource.NewSchemaless(semconv.ServiceName("traced-bundle"))))
	defer tp.Shutdown(ctx)
	s := bundle.NewServer(bundle.Options{Name: "traced", Version: "1"})
	err = s.AddTool(sdkmcp.Tool{Name: "work", InputSchema: json.RawMessage(`{"type":"object","properties":{"tag":{"type":"string"}},"required":["tag"]}`)},
		func(ctx context.Context, call *bundle.Call) (*sdkmcp.CallToolResult, error) {
			var args struct {
				Tag string `json:"tag"`
			}
			if err := call.Bind(&args); err != nil {
				return nil, err
			}
			ctx = propagation.TraceContext{}.Extract(ctx, call.TraceContext())
			_, span := tp.Tracer("traced-bundle").Start(ctx, "work "+args.Tag, trace.WithSpanKind(trace.SpanKindServer))
			span.End()
			return sdkmcp.TextResult(call.TraceContext().Traceparent), nil
		})
	if err != nil {
		return err
	}
	return s.ServeStdio(ctx)
}

// A client's traceparent in _meta, over HTTP and stdio and in both eras, starts one trace
// that holds the client's span, the node's span for the request (its child), the node's
// span for the call to the bundle, and the span the bundle makes with what our Go SDK
// handed it, each the parent of the next. With the node's tracing off, the bundle's span is
// the client's child.
func TestOneTraceFromClientThroughNodeToBundle(t *testing.T) {
	rcv := otlptest.New()
	t.Cleanup(rcv.Close)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.URL)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50") // ms: the node's spans need not wait for its exit
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "traced"), 0o755)
	m, _ := json.Marshal(map[string]any{"name": "traced", "command": []string{exe},
		"env": map[string]string{tracedBundleEnv: "1", "OTEL_EXPORTER_OTLP_ENDPOINT": rcv.URL}})
	if err := os.WriteFile(filepath.Join(dir, "traced", "bundle.json"), m, 0o644); err != nil {
		t.Fatal(err)
	}

	ctx := context.Background()
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		t.Fatal(err)
	}
	client := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp),
		sdktrace.WithResource(resource.NewSchemaless(semconv.ServiceName("client"))))
	t.Cleanup(func() { client.Shutdown(ctx) })

	source := reload.Source{Dirs: []string{dir}}
	httpURL := nodekit.Start(t, serve.Config{Source: source, HTTP: nodekit.Loopback}).URL
	tests := []struct {
		front, version string
		nodeOff        bool // the node's tracing turned off
	}{
		{"http", "2025-11-25", false},
		{"http", "2026-07-28", false},
		{"stdio", "2025-11-25", false},
		{"stdio", "2026-07-28", false},
		{"stdio", "2026-07-28", true},
	}
	for _, tt := range tests {
		name := tt.front + " " + tt.version
		if tt.nodeOff {
			name += " node tracing off"
		}
		t.Run(name, func(t *testing.T) {
			var s *mcp.ClientSession
			switch {
			case tt.front == "http":
				s = nodekit.Connect(t, httpURL, tt.version, nil)
			default:
				if tt.nodeOff {
					t.Setenv("OTEL_SDK_DISABLED", "true")
				}
				s = nodekit.Start(t, serve.Config{Source: source, Stdio: true}).Client(t, tt.version, nil)
			}
			if v := s.InitializeResult().ProtocolVersion; v != tt.version {
				t.Fatalf("the client speaks %s", v)
			}
			tag := strings.NewReplacer("-", "_", " ", "_").Replace(name)
			cctx, span := client.Tracer("client").Start(ctx, "tools/call traced.work", trace.WithSpanKind(trace.SpanKindClient))
			carrier := propagation.MapCarrier{}
			propagation.TraceContext{}.Inject(cctx, carrier)
			meta := mcp.Meta{}
			for k, v := range carrier {
				meta[k] = v
			}
			res, err := s.CallTool(cctx, &mcp.CallToolParams{Name: "traced.work", Arguments: map[string]any{"tag": tag}, Meta: meta})
			span.End()
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError || len(res.Content) != 1 {
				t.Fatalf("traced.work answered %+v", res)
			}
			seen := res.Content[0].(*mcp.TextContent).Text
			traceID := span.SpanContext().TraceID()

			chain := []string{ // each the parent of the next
				"client tools/call traced.work",
				"toolnode tools/call traced.work",
				"toolnode tools/call work",
				"traced-bundle work " + tag,
			}
			if tt.nodeOff {
				chain = []string{chain[0], chain[3]}
			}
			var found []otlptest.Span
			testkit.Eventually(t, 15*time.Second, func() string {
				byName := map[string]otlptest.Span{}
				for _, sp := range rcv.Spans() {
					if bytes.Equal(sp.TraceId, traceID[:]) {
						byName[sp.Service+" "+sp.Name] = sp
					}
				}
				found = found[:0]
				for _, name := range chain {
					sp, ok := byName[name]
					if !ok {
						return fmt.Sprintf("no span %q in trace %s; have %v", name, traceID, spanNames(byName))
					}
					found = append(found, sp)
				}
				return ""
			})
			for i := 1; i < len(found); i++ {
				if !bytes.Equal(found[i].ParentSpanId, found[i-1].SpanId) {
					t.Errorf("%s: parent %x, want %s's %x", chain[i], found[i].ParentSpanId, chain[i-1], found[i-1].SpanId)
				}
			}
			// What the SDK handed the tool names the span before the bundle's: the node's
			// bundle-call span, or with the node's tracing off the client's own.
			caller := found[len(found)-2]
			if want := "-" + hex.EncodeToString(caller.SpanId) + "-"; !strings.Contains(seen, hex.EncodeToString(traceID[:])) || !strings.Contains(seen, want) {
				t.Errorf("the bundle saw traceparent %q, want trace %s and parent %s", seen, traceID, want)
			}
			if tt.nodeOff && seen != carrier["traceparent"] {
				t.Errorf("with tracing off the bundle saw %q, not the client's %q", seen, carrier["traceparent"])
			}
		})
	}
}

func spanNames(m map[string]otlptest.Span) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
