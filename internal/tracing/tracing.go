// Package tracing holds what seckill's packages share to emit OpenTelemetry spans: a tracer
// that is nil when tracing is off, so that a span costs nothing then (not even the context
// a no-op tracer allocates), and the one propagator of the HTTP edge (W3C trace context).
//
// The tracer provider is made and configured in cmd/api from the standard OTEL_* variables,
// and handed down through internal/app: no package here reads the environment or the
// otel global provider.
package tracing

import (
	"context"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Scope is the instrumentation scope of seckill's own spans.
const Scope = "github.com/seckill/seckill"

// Propagator reads and writes the W3C traceparent and tracestate headers.
var Propagator propagation.TextMapPropagator = propagation.TraceContext{}

// Enabled reports whether tp records anything: false for nil and for a no-op provider.
func Enabled(tp trace.TracerProvider) bool {
	switch tp.(type) {
	case nil, noop.TracerProvider, *noop.TracerProvider:
		return false
	}
	return true
}

// Tracer returns tp's tracer of seckill's spans, or nil when tp is not Enabled.
func Tracer(tp trace.TracerProvider) trace.Tracer {
	if !Enabled(tp) {
		return nil
	}
	return tp.Tracer(Scope)
}

// nopSpan is the span Start returns with no tracer.
var nopSpan = trace.SpanFromContext(context.Background())

// Start starts a span named name on t, a child of ctx's span; with a nil t it returns ctx as
// it is and a span that does nothing, allocating nothing.
func Start(ctx context.Context, t trace.Tracer, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	if t == nil {
		return ctx, nopSpan
	}
	return t.Start(ctx, name, opts...)
}

// End ends span, marking it an error with err's text when err is not nil.
func End(span trace.Span, err error) {
	if err != nil && span.IsRecording() {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}
