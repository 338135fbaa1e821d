package bundle

import "encoding/json"

// TraceContext is the W3C Trace Context a request carried in its _meta: the traceparent
// of the caller's span (a node's bundle-call span when a node with tracing on sent the
// call) and its tracestate. Both are "" when the request carried none, or a traceparent
// that is not valid (then its tracestate is dropped too, as W3C Trace Context says).
//
// Its Get, Set and Keys methods make a *TraceContext a TextMapCarrier of
// go.opentelemetry.io/otel/propagation, without this package depending on OpenTelemetry,
// so that a tool's own spans join the caller's trace:
//
//	ctx = propagation.TraceContext{}.Extract(ctx, call.TraceContext())
//
// It encodes to JSON as the _meta members it came from.
type TraceContext struct {
	Traceparent string `json:"traceparent,omitempty"`
	Tracestate  string `json:"tracestate,omitempty"`
}

// The _meta keys of the trace context, which are also its carrier keys.
const (
	traceparentKey = "traceparent"
	tracestateKey  = "tracestate"
)

// TraceContext returns a copy of the trace context the call's request carried.
func (c *Call) TraceContext() *TraceContext {
	t := c.trace
	return &t
}

// Get returns the value of key, traceparent or tracestate; "" for any other.
func (t *TraceContext) Get(key string) string {
	switch key {
	case traceparentKey:
		return t.Traceparent
	case tracestateKey:
		return t.Tracestate
	}
	return ""
}

// Set sets traceparent or tracestate; other keys are ignored.
func (t *TraceContext) Set(key, value string) {
	switch key {
	case traceparentKey:
		t.Traceparent = value
	case tracestateKey:
		t.Tracestate = value
	}
}

// Keys lists the keys that have a value.
func (t *TraceContext) Keys() []string {
	var keys []string
	if t.Traceparent != "" {
		keys = append(keys, traceparentKey)
	}
	if t.Tracestate != "" {
		keys = append(keys, tracestateKey)
	}
	return keys
}

// traceContextOf keeps what a request's _meta carried when its traceparent is a valid
// one; a tracestate that is not a string is dropped.
func traceContextOf(traceparent, tracestate json.RawMessage) TraceContext {
	if traceparent == nil {
		return TraceContext{} // before t, which escapes to the decoder: most calls carry none
	}
	var t TraceContext
	if json.Unmarshal(traceparent, &t.Traceparent) != nil || !validTraceparent(t.Traceparent) {
		return TraceContext{}
	}
	if tracestate != nil && json.Unmarshal(tracestate, &t.Tracestate) != nil {
		t.Tracestate = ""
	}
	return t
}

// validTraceparent reports whether s is a traceparent by W3C Trace Context level 1:
// version-traceid-parentid-flags in lower-case hex, neither id all zeros, version ff
// invalid. Version 00 is exactly that; a later version may append "-" and more.
func validTraceparent(s string) bool {
	if len(s) < 55 || s[2] != '-' || s[35] != '-' || s[52] != '-' {
		return false
	}
	version, traceID, parentID, flags := s[0:2], s[3:35], s[36:52], s[53:55]
	if !lowerHex(version) || !lowerHex(traceID) || !lowerHex(parentID) || !lowerHex(flags) ||
		version == "ff" || zeros(traceID) || zeros(parentID) {
		return false
	}
	if version == "00" {
		return len(s) == 55
	}
	return len(s) == 55 || s[55] == '-'
}

func lowerHex(s string) bool {
	for i := range len(s) {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func zeros(s string) bool {
	for i := range len(s) {
		if s[i] != '0' {
			return false
		}
	}
	return true
}
