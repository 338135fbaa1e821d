// Package otlptest is an OTLP/HTTP receiver on loopback for tests and benchmarks: it
// decodes what OpenTelemetry exporters send with the OTLP protobuf definitions, keeps it
// (or only counts it) and answers as a collector does.
package otlptest

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"

	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	metricpb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Span is one span received, with the service.name of the resource it came from.
type Span struct {
	Service string
	*tracepb.Span
}

// Receiver accepts POST /v1/traces and /v1/metrics at URL, the value to give exporters as
// OTEL_EXPORTER_OTLP_ENDPOINT. Its methods may be called concurrently.
type Receiver struct {
	// URL is the receiver's base URL, http://127.0.0.1:PORT.
	URL string

	srv     *httptest.Server
	keep    bool
	mu      sync.Mutex
	spans   []Span
	metrics []*metricpb.Metric
	count   int // spans received, kept or not
}

// New starts a receiver that keeps everything it receives. Close it when done.
func New() *Receiver { return start(true) }

// NewCounting starts a receiver that only counts the spans it receives, for runs too long
// to keep them all. Close it when done.
func NewCounting() *Receiver { return start(false) }

func start(keep bool) *Receiver {
	r := &Receiver{keep: keep}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", func(w http.ResponseWriter, req *http.Request) {
		var in coltracepb.ExportTraceServiceRequest
		if !decode(w, req, &in) {
			return
		}
		r.mu.Lock()
		for _, rs := range in.ResourceSpans {
			var service string
			for _, a := range rs.GetResource().GetAttributes() {
				if a.Key == "service.name" {
					service = a.GetValue().GetStringValue()
				}
			}
			for _, ss := range rs.ScopeSpans {
				r.count += len(ss.Spans)
				if !r.keep {
					continue
				}
				for _, s := range ss.Spans {
					r.spans = append(r.spans, Span{service, s})
				}
			}
		}
		r.mu.Unlock()
		answer(w, &coltracepb.ExportTraceServiceResponse{})
	})
	mux.HandleFunc("POST /v1/metrics", func(w http.ResponseWriter, req *http.Request) {
		var in colmetricpb.ExportMetricsServiceRequest
		if !decode(w, req, &in) {
			return
		}
		if r.keep {
			r.mu.Lock()
			for _, rm := range in.ResourceMetrics {
				for _, sm := range rm.ScopeMetrics {
					r.metrics = append(r.metrics, sm.Metrics...)
				}
			}
			r.mu.Unlock()
		}
		answer(w, &colmetricpb.ExportMetricsServiceResponse{})
	})
	r.srv = httptest.NewServer(mux)
	r.URL = r.srv.URL
	return r
}

// Close stops the receiver; it may be called more than once.
func (r *Receiver) Close() { r.srv.Close() }

func decode(w http.ResponseWriter, req *http.Request, m proto.Message) bool {
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		gz, err := gzip.NewReader(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return false
		}
		body = gz
	}
	data, err := io.ReadAll(body)
	if err == nil {
		err = proto.Unmarshal(data, m)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return false
	}
	return true
}

func answer(w http.ResponseWriter, m proto.Message) {
	data, _ := proto.Marshal(m)
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(data)
}

// Spans returns a copy of the spans received so far (none for a counting receiver).
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}

// SpanCount returns how many spans were received so far.
func (r *Receiver) SpanCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.count
}

// Metric returns the last received metric of that name, or nil.
func (r *Receiver) Metric(name string) *metricpb.Metric {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.metrics) - 1; i >= 0; i-- {
		if r.metrics[i].Name == name {
			return r.metrics[i]
		}
	}
	return nil
}
