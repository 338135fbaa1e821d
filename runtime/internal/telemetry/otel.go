package telemetry

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/semconv/v1.40.0/mcpconv"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolnode/toolnode/sdk-go/mcp"
	"github.com/toolnode/toolnode/sdk-go/rawjson"
)

// scope names the instrumentation in exported data.
const scope = "github.com/toolnode/toolnode/runtime/internal/telemetry"

// durationBuckets are the bucket bounds the MCP conventions advise for both durations.
var durationBuckets = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// Attribute keys of the node's own metrics; the conventions have none for bundles.
const (
	bundleKey = attribute.Key("toolnode.bundle.name")
	stateKey  = attribute.Key("toolnode.bundle.state")
)

// recorder is the Recorder when telemetry is on.
type recorder struct {
	tracer trace.Tracer // nil when spans are not exported
	prop   propagation.TextMapPropagator

	opDuration      metric.Float64Histogram
	sessionDuration metric.Float64Histogram
	sessions        metric.Int64UpDownCounter
	inFlight        metric.Int64UpDownCounter
	restarts        metric.Int64Counter
	queue           metric.Int64Gauge
	state           metric.Int64Gauge

	mu     sync.Mutex
	states map[string]string // bundle → the state last recorded

	// Attribute sets built once per distinct value: building one sorts and allocates,
	// which was most of the cost of a call with metrics on.
	opSets     sync.Map // opKey → metric.MeasurementOption
	opSetCount atomic.Int32
	bundleSets sync.Map // bundle name → attribute.Set
}

// opKey are the attributes of one mcp.server.operation.duration series.
type opKey struct {
	method  string
	target  attribute.KeyValue
	errType string
}

// maxOpSets bounds the cache of operation attribute sets; past it, sets are built per
// call. Series beyond it mean a caller passes unbounded values as Target.
const maxOpSets = 4096

func newRecorder(tp *sdktrace.TracerProvider, mp *sdkmetric.MeterProvider, prop propagation.TextMapPropagator) (*recorder, error) {
	r := &recorder{prop: prop, states: map[string]string{}}
	if tp != nil {
		r.tracer = tp.Tracer(scope)
	}
	var m metric.Meter = noop.Meter{}
	if mp != nil {
		m = mp.Meter(scope)
	}
	buckets := metric.WithExplicitBucketBoundaries(durationBuckets...)
	op, err := mcpconv.NewServerOperationDuration(m, buckets)
	if err != nil {
		return nil, fmt.Errorf("instrument %s: %w", op.Name(), err)
	}
	session, err := mcpconv.NewServerSessionDuration(m, buckets)
	if err != nil {
		return nil, fmt.Errorf("instrument %s: %w", session.Name(), err)
	}
	r.opDuration, r.sessionDuration = op.Inst(), session.Inst()
	errs := make([]error, 5)
	r.sessions, errs[0] = m.Int64UpDownCounter("toolnode.sessions", metric.WithUnit("{session}"),
		metric.WithDescription("Client sessions open on the node's fronts."))
	r.inFlight, errs[1] = m.Int64UpDownCounter("toolnode.bundle.calls.in_flight", metric.WithUnit("{call}"),
		metric.WithDescription("Messages sent to a bundle and not yet answered."))
	r.restarts, errs[2] = m.Int64Counter("toolnode.bundle.restarts", metric.WithUnit("{restart}"),
		metric.WithDescription("Times a bundle was restarted after it stopped or failed."))
	r.queue, errs[3] = m.Int64Gauge("toolnode.bundle.queue.depth", metric.WithUnit("{call}"),
		metric.WithDescription("Calls waiting for a bundle to take them."))
	r.state, errs[4] = m.Int64Gauge("toolnode.bundle.state",
		metric.WithDescription("1 for the state a bundle is in, 0 for states it has left."))
	for _, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("node instruments: %w", err)
		}
	}
	return r, nil
}

// opKind tells what an Op measures.
type opKind uint8

const (
	opRequest opKind = iota
	opBundle
)

// Op is a request or bundle call in progress. A nil *Op is valid and does nothing, which
// is what a Nop recorder hands out.
type Op struct {
	r      *recorder
	kind   opKind
	span   trace.Span // nil when tracing is off
	start  time.Time
	key    opKey // metric attributes of a request
	bundle attribute.Set
}

// End finishes the Op: errorType is "" on success, else ErrorCode(code) for a JSON-RPC
// error answer, ToolError for a tool result with isError, or another short
// low-cardinality reason (Cancelled, Timeout). Call it once.
func (o *Op) End(errorType string) {
	if o == nil {
		return
	}
	now := time.Now()
	if o.span != nil {
		if errorType != "" {
			o.span.SetAttributes(semconv.ErrorTypeKey.String(errorType))
			if _, err := strconv.Atoi(errorType); err == nil {
				o.span.SetAttributes(semconv.RPCResponseStatusCodeKey.String(errorType))
			}
			o.span.SetStatus(codes.Error, errorType)
		}
		o.span.End(trace.WithTimestamp(now))
	}
	ctx := context.Background()
	switch o.kind {
	case opRequest:
		o.key.errType = errorType
		o.r.opDuration.Record(ctx, now.Sub(o.start).Seconds(), o.r.opSet(o.key))
	case opBundle:
		o.r.inFlight.Add(ctx, -1, metric.WithAttributeSet(o.bundle))
	}
}

// ErrorCode is the error type of a JSON-RPC error answer: its code, as the conventions
// record it, when it is one JSON-RPC or MCP names; else Other. A bundle, or the server
// behind a url bundle, chooses the codes it answers with: each one would be a series.
func ErrorCode(code int64) string {
	switch code {
	case mcp.CodeParseError, mcp.CodeInvalidRequest, mcp.CodeMethodNotFound, mcp.CodeInvalidParams,
		mcp.CodeInternalError, mcp.CodeResourceNotFound, mcp.CodeHeaderMismatch,
		mcp.CodeMissingClientCapability, mcp.CodeUnsupportedVersion,
		codeServerError, codeURLElicitationRequired:
		return strconv.FormatInt(code, 10)
	}
	return Other
}

// Codes the node passes on without naming them itself.
const (
	// codeServerError is the first of JSON-RPC's implementation-defined server errors,
	// the one servers answer a failure with when they have no better code.
	codeServerError = -32000
	// codeURLElicitationRequired is MCP 2025-11-25's error for a call that needs the user
	// to visit a URL first.
	codeURLElicitationRequired = -32042
)

// Other stands for a value the node does not know, in a label whose values must be few:
// a method MCP does not define, an error code no specification names, a protocol revision
// the node does not speak. Clients and bundles choose those strings, and every distinct
// value would be a series of its own, until the SDK's limit folded real ones into its
// overflow series. The OpenTelemetry conventions use the same value for HTTP methods.
const Other = "_OTHER"

// method is m when it is a request or notification the node serves, else Other.
func method(m string) string {
	switch m {
	case mcp.MethodInitialize, mcp.MethodPing, mcp.MethodToolsList, mcp.MethodToolsCall,
		mcp.MethodLoggingSetLevel, mcp.MethodResourcesList, mcp.MethodResourceTemplates,
		mcp.MethodResourcesRead, mcp.MethodResourcesSub, mcp.MethodResourcesUnsub,
		mcp.MethodPromptsList, mcp.MethodPromptsGet, mcp.MethodComplete,
		mcp.MethodDiscover, mcp.MethodSubscriptionsListen,
		mcp.MethodTasksGet, mcp.MethodTasksUpdate, mcp.MethodTasksCancel, mcp.NotifyTasks,
		mcp.NotifyInitialized, mcp.NotifyCancelled, mcp.NotifyProgress, mcp.NotifyRootsListChanged:
		return m
	}
	return Other
}

// version is v when it is a revision the node speaks, else Other.
func version(v string) string {
	if slices.Contains(mcp.AllVersions(), v) {
		return v
	}
	return Other
}

// opSet returns the record option for the series of k.
func (r *recorder) opSet(k opKey) metric.MeasurementOption {
	if v, ok := r.opSets.Load(k); ok {
		return v.(metric.MeasurementOption)
	}
	kvs := make([]attribute.KeyValue, 1, 3)
	kvs[0] = semconv.McpMethodNameKey.String(k.method)
	if k.target.Key != "" {
		kvs = append(kvs, k.target)
	}
	if k.errType != "" {
		kvs = append(kvs, semconv.ErrorTypeKey.String(k.errType))
	}
	opt := metric.WithAttributeSet(attribute.NewSet(kvs...))
	if r.opSetCount.Load() < maxOpSets {
		if _, loaded := r.opSets.LoadOrStore(k, opt); !loaded {
			r.opSetCount.Add(1)
		}
	}
	return opt
}

// bundleSet returns the attribute set naming bundle.
func (r *recorder) bundleSet(bundle string) attribute.Set {
	if v, ok := r.bundleSets.Load(bundle); ok {
		return v.(attribute.Set)
	}
	set := attribute.NewSet(bundleKey.String(bundle))
	r.bundleSets.Store(bundle, set)
	return set
}

func (r *recorder) StartRequest(ctx context.Context, req Request) (context.Context, *Op) {
	req.Method = method(req.Method)
	op := &Op{r: r, kind: opRequest, start: time.Now(), key: opKey{method: req.Method}}
	switch {
	case req.Target == "":
	case req.Method == mcp.MethodToolsCall:
		op.key.target = semconv.GenAIToolNameKey.String(req.Target)
	case req.Method == mcp.MethodPromptsGet:
		op.key.target = semconv.GenAIPromptNameKey.String(req.Target)
	default:
		req.Target = "" // only tools and prompts have one
	}
	if r.tracer == nil {
		return ctx, op
	}
	if len(req.Meta) > 0 {
		ctx = r.extract(ctx, req.Meta)
	}
	attrs := make([]attribute.KeyValue, 0, 8)
	attrs = append(attrs, semconv.McpMethodNameKey.String(req.Method))
	if op.key.target.Key != "" {
		attrs = append(attrs, op.key.target)
	}
	if req.Method == "tools/call" {
		attrs = append(attrs, semconv.GenAIOperationNameExecuteTool)
	}
	if req.SessionID != "" {
		attrs = append(attrs, semconv.McpSessionIDKey.String(req.SessionID))
	}
	if req.ProtocolVersion != "" {
		attrs = append(attrs, semconv.McpProtocolVersionKey.String(version(req.ProtocolVersion)))
	}
	if len(req.ID) > 0 {
		attrs = append(attrs, semconv.JSONRPCRequestIDKey.String(idString(req.ID)))
	}
	if req.Transport != "" {
		attrs = append(attrs, semconv.NetworkTransportKey.String(req.Transport))
	}
	ctx, op.span = r.tracer.Start(ctx, spanName(req.Method, req.Target),
		trace.WithSpanKind(trace.SpanKindServer), trace.WithTimestamp(op.start), trace.WithAttributes(attrs...))
	return ctx, op
}

func (r *recorder) StartBundleCall(ctx context.Context, call BundleCall) (context.Context, *Op) {
	op := &Op{r: r, kind: opBundle, start: time.Now(), bundle: r.bundleSet(call.Bundle)}
	r.inFlight.Add(context.Background(), 1, metric.WithAttributeSet(op.bundle))
	if r.tracer == nil {
		return ctx, op
	}
	attrs := make([]attribute.KeyValue, 0, 6)
	attrs = append(attrs, semconv.McpMethodNameKey.String(call.Method), bundleKey.String(call.Bundle),
		semconv.NetworkTransportPipe)
	if call.Target != "" && call.Method == "tools/call" {
		attrs = append(attrs, semconv.GenAIToolNameKey.String(call.Target), semconv.GenAIOperationNameExecuteTool)
	}
	if len(call.ID) > 0 {
		attrs = append(attrs, semconv.JSONRPCRequestIDKey.String(idString(call.ID)))
	}
	ctx, op.span = r.tracer.Start(ctx, spanName(call.Method, call.Target),
		trace.WithSpanKind(trace.SpanKindClient), trace.WithTimestamp(op.start), trace.WithAttributes(attrs...))
	return ctx, op
}

// spanName is "{mcp.method.name} {target}", or the method alone without a target.
func spanName(method, target string) string {
	if target == "" {
		return method
	}
	return method + " " + target
}

// idString renders a JSON-RPC id as the conventions record it: a string id unquoted, a
// number as written.
func idString(id json.RawMessage) string {
	var s string
	if len(id) > 0 && id[0] == '"' && json.Unmarshal(id, &s) == nil {
		return s
	}
	return string(id)
}

// traceMeta is the part of _meta that carries a trace context: the W3C headers under
// their own names, as the MCP conventions propagate them.
type traceMeta struct {
	Traceparent string `json:"traceparent,omitempty"`
	Tracestate  string `json:"tracestate,omitempty"`
	Baggage     string `json:"baggage,omitempty"`
}

// extract returns ctx with the remote span context _meta carries, if it carries one.
func (r *recorder) extract(ctx context.Context, meta json.RawMessage) context.Context {
	var tm traceMeta
	if json.Unmarshal(meta, &tm) != nil || tm.Traceparent == "" {
		return ctx
	}
	c := propagation.MapCarrier{"traceparent": tm.Traceparent}
	if tm.Tracestate != "" {
		c["tracestate"] = tm.Tracestate
	}
	if tm.Baggage != "" {
		c["baggage"] = tm.Baggage
	}
	return r.prop.Extract(ctx, c)
}

func (r *recorder) TraceMeta(ctx context.Context) []rawjson.Edit {
	if r.tracer == nil || !trace.SpanContextFromContext(ctx).IsValid() {
		return nil
	}
	c := propagation.MapCarrier{}
	r.prop.Inject(ctx, c)
	edits := make([]rawjson.Edit, 0, len(c))
	for _, k := range slices.Sorted(maps.Keys(c)) {
		edits = append(edits, rawjson.Edit{Key: k, Value: rawjson.AppendString(nil, c[k])})
	}
	return edits
}

func (r *recorder) SessionOpened() { r.sessions.Add(context.Background(), 1) }

func (r *recorder) SessionClosed(protocolVersion string, lifetime time.Duration) {
	ctx := context.Background()
	r.sessions.Add(ctx, -1)
	var opts []metric.RecordOption
	if protocolVersion != "" {
		opts = append(opts, metric.WithAttributes(semconv.McpProtocolVersionKey.String(version(protocolVersion))))
	}
	r.sessionDuration.Record(ctx, lifetime.Seconds(), opts...)
}

func (r *recorder) BundleState(bundle, state string) {
	ctx := context.Background()
	b := bundleKey.String(bundle)
	// Under the lock, so two changes of one bundle cannot record in the wrong order.
	r.mu.Lock()
	defer r.mu.Unlock()
	if prev, ok := r.states[bundle]; ok && prev != state {
		r.state.Record(ctx, 0, metric.WithAttributes(b, stateKey.String(prev)))
	}
	r.states[bundle] = state
	r.state.Record(ctx, 1, metric.WithAttributes(b, stateKey.String(state)))
}

func (r *recorder) BundleRestarted(bundle string) {
	r.restarts.Add(context.Background(), 1, metric.WithAttributeSet(r.bundleSet(bundle)))
}

func (r *recorder) QueueDepth(bundle string, depth int) {
	r.queue.Record(context.Background(), int64(depth), metric.WithAttributeSet(r.bundleSet(bundle)))
}
