// Package telemetry gives the node traces and metrics by the OpenTelemetry semantic
// conventions for MCP: a server span per request the node serves (continuing the trace
// whose traceparent the client put in _meta), a client span per bundle call (whose
// context goes to the bundle in _meta), and the conventions' operation and session
// durations beside the node's own gauges, served to Prometheus and, when the standard
// OTEL_EXPORTER_OTLP_* variables say where, exported by OTLP.
//
// The node talks to a Recorder; when nothing is on it is a no-op that costs a
// method call.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
)

// Config says what to turn on. OTLP export is not in it: the standard environment
// variables decide that (see docs/service.md).
type Config struct {
	// ServiceName is the service.name resource attribute; OTEL_SERVICE_NAME overrides
	// it. Default: "toolnode".
	ServiceName string
	// ServiceVersion is the service.version resource attribute. Default: none.
	ServiceVersion string
	// Prometheus turns on the /metrics handler (the node's --metrics). Default: off.
	Prometheus bool
	// Logger receives errors met while serving /metrics. Default: hclog.NewNullLogger().
	Logger hclog.Logger
}

// Telemetry owns the tracer and meter providers and their exporters.
type Telemetry struct {
	tracer   *sdktrace.TracerProvider // nil when no traces are exported
	meter    *sdkmetric.MeterProvider // nil when no metrics are kept
	registry *prometheus.Registry     // nil when Prometheus is off
	recorder Recorder
	log      hclog.Logger
}

// New sets up what cfg and the environment ask for. With neither Prometheus nor an OTLP
// destination its Recorder is a no-op.
func New(ctx context.Context, cfg Config) (*Telemetry, error) {
	if cfg.ServiceName == "" {
		cfg.ServiceName = "toolnode"
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	traces, err := otlpWanted("TRACES")
	if err != nil {
		return nil, err
	}
	metrics, err := otlpWanted("METRICS")
	if err != nil {
		return nil, err
	}
	t := &Telemetry{recorder: Nop{}, log: cfg.Logger}
	if !traces && !metrics && !cfg.Prometheus {
		return t, nil
	}

	attrs := []resource.Option{resource.WithAttributes(semconv.ServiceName(cfg.ServiceName))}
	if cfg.ServiceVersion != "" {
		attrs = append(attrs, resource.WithAttributes(semconv.ServiceVersion(cfg.ServiceVersion)))
	}
	// Later options win: OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES override ours.
	res, err := resource.New(ctx, append(attrs, resource.WithTelemetrySDK(), resource.WithFromEnv())...)
	if err != nil {
		return nil, fmt.Errorf("telemetry resource: %w", err)
	}

	if traces {
		// The exporter reads the endpoint, headers, timeout and TLS settings from
		// OTEL_EXPORTER_OTLP_*; the provider reads OTEL_TRACES_SAMPLER and OTEL_BSP_*.
		exp, err := otlptracehttp.New(ctx)
		if err != nil {
			return nil, fmt.Errorf("OTLP trace exporter: %w", err)
		}
		t.tracer = sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	}

	var readers []sdkmetric.Option
	if cfg.Prometheus {
		t.registry = prometheus.NewRegistry()
		t.registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		exp, err := otelprom.New(otelprom.WithRegisterer(t.registry), otelprom.WithoutScopeInfo())
		if err != nil {
			return nil, errors.Join(fmt.Errorf("prometheus exporter: %w", err), t.Shutdown(ctx))
		}
		readers = append(readers, sdkmetric.WithReader(exp))
	}
	if metrics {
		exp, err := otlpmetrichttp.New(ctx)
		if err != nil {
			return nil, errors.Join(fmt.Errorf("OTLP metric exporter: %w", err), t.Shutdown(ctx))
		}
		// The reader takes its interval from OTEL_METRIC_EXPORT_INTERVAL (default 60s).
		readers = append(readers, sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)))
	}
	if len(readers) > 0 {
		t.meter = sdkmetric.NewMeterProvider(append(readers, sdkmetric.WithResource(res))...)
	}

	rec, err := newRecorder(t.tracer, t.meter, propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	if err != nil {
		return nil, errors.Join(err, t.Shutdown(ctx))
	}
	t.recorder = rec
	return t, nil
}

// Recorder returns what the node reports to; a Nop when nothing is on.
func (t *Telemetry) Recorder() Recorder { return t.recorder }

// Tracing reports whether spans are exported.
func (t *Telemetry) Tracing() bool { return t.tracer != nil }

// MetricsHandler serves the metrics in the Prometheus text (or protobuf, or OpenMetrics)
// format, for the node's --metrics listener at /metrics. It answers 404 when Prometheus
// is off.
func (t *Telemetry) MetricsHandler() http.Handler {
	if t.registry == nil {
		return http.NotFoundHandler()
	}
	return promhttp.HandlerFor(t.registry, promhttp.HandlerOpts{ErrorLog: t.log.StandardLogger(nil), EnableOpenMetrics: true})
}

// Shutdown flushes what is buffered to the exporters and stops them. Call it once, when
// the node stops, with a deadline.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	var errs []error
	if t.tracer != nil {
		if err := t.tracer.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("shut down tracing: %w", err))
		}
	}
	if t.meter != nil {
		if err := t.meter.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("shut down metrics: %w", err))
		}
	}
	return errors.Join(errs...)
}

// otlpWanted reads the standard variables for one signal (TRACES or METRICS): export
// when an endpoint is set for it or for all signals, unless the SDK is disabled or the
// signal's exporter is "none". Only http/protobuf is built in, which keeps gRPC out of
// the binary; asking for another protocol is an error rather than a silent nothing.
func otlpWanted(signal string) (bool, error) {
	if strings.EqualFold(os.Getenv("OTEL_SDK_DISABLED"), "true") {
		return false, nil
	}
	if e := os.Getenv("OTEL_" + signal + "_EXPORTER"); e != "" && e != "otlp" {
		if e == "none" {
			return false, nil
		}
		return false, fmt.Errorf("OTEL_%s_EXPORTER=%s: only otlp and none are supported", signal, e)
	}
	if os.Getenv("OTEL_EXPORTER_OTLP_"+signal+"_ENDPOINT") == "" && os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" {
		return false, nil
	}
	proto := os.Getenv("OTEL_EXPORTER_OTLP_" + signal + "_PROTOCOL")
	if proto == "" {
		proto = os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	if proto != "" && proto != "http/protobuf" {
		return false, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=%s: toolnode exports OTLP over http/protobuf only; point it at the collector's HTTP port (4318)", proto)
	}
	return true, nil
}
