// Package tracing configures OpenTelemetry traces from the standard OTEL_*
// environment variables and carries trace context across the places where
// a request leaves the process: the outbox row, NATS headers, HTTP and gRPC
// metadata. Tracing is off unless OTEL_TRACES_EXPORTER is "otlp" or an
// OTLP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set, and OTEL_SDK_DISABLED is not
// "true". The exporter is OTLP over HTTP; it reads its other settings
// (headers, timeout, protocol details) and the sampler
// (OTEL_TRACES_SAMPLER, OTEL_TRACES_SAMPLER_ARG) and resource
// (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES) from the environment too.
//
// With tracing off the global tracer provider is OpenTelemetry's no-op
// one, so Start costs a context lookup, but an incoming traceparent is
// still honoured: its trace id is kept (and is the request id).
package tracing

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// instrumentation names the tracer of every span the platform starts.
const instrumentation = "github.com/cmsplatform/cms"

// propagator is W3C trace context (traceparent, tracestate).
var propagator = propagation.TraceContext{}

func init() { otel.SetTextMapPropagator(propagator) }

// Enabled reports whether the environment asks for trace export.
func Enabled(getenv func(string) string) bool {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return false
	}
	switch strings.ToLower(strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER"))) {
	case "none":
		return false
	case "otlp":
		return true
	}
	return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// Setup installs the global tracer provider when the environment enables
// tracing (Enabled on os.Getenv); service names the process when
// OTEL_SERVICE_NAME does not. The returned function flushes and stops the
// exporter; it is a no-op when tracing is off.
func Setup(ctx context.Context, service string) (shutdown func(context.Context) error, err error) {
	if !Enabled(os.Getenv) {
		return func(context.Context) error { return nil }, nil
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("tracing: otlp exporter: %w", err)
	}
	return Install(exp, service), nil
}

// Install makes a tracer provider batching to exp the global one and
// returns its shutdown. Setup uses it with the OTLP exporter; tests pass
// an in-memory exporter.
func Install(exp sdktrace.SpanExporter, service string) func(context.Context) error {
	res, _ := resource.Merge(resource.Default(),
		resource.NewSchemaless(attribute.String("service.name", serviceName(service))))
	if os.Getenv("OTEL_SERVICE_NAME") != "" {
		res = resource.Default() // the environment's name wins
	}
	return InstallProvider(sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res)))
}

// InstallProvider makes tp the global tracer provider and returns its
// shutdown (tests pass one with an in-memory exporter).
func InstallProvider(tp *sdktrace.TracerProvider) func(context.Context) error {
	otel.SetTracerProvider(tp)
	return tp.Shutdown
}

func serviceName(s string) string {
	if s == "" {
		return "cms"
	}
	return s
}

// Start starts a span named name under ctx's span (or the remote parent
// carried in ctx). End the returned span.
func Start(ctx context.Context, name string, kind trace.SpanKind) (context.Context, trace.Span) {
	return otel.Tracer(instrumentation).Start(ctx, name, trace.WithSpanKind(kind))
}

// StartWith is Start with further options: links (a batch linking the
// spans of its messages), a start time (a message's time in the stream).
func StartWith(ctx context.Context, name string, kind trace.SpanKind, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	return otel.Tracer(instrumentation).Start(ctx, name, append(opts, trace.WithSpanKind(kind))...)
}

// Recording reports whether ctx's span records (tracing on and the trace
// sampled): a caller that would start a span only to describe work inside
// a recorded trace can skip it otherwise.
func Recording(ctx context.Context) bool { return trace.SpanFromContext(ctx).IsRecording() }

// SpanContextOf returns the span context of the trace context in h
// (message headers), invalid when h carries none.
func SpanContextOf(h map[string]string) trace.SpanContext {
	if len(h) == 0 {
		return trace.SpanContext{}
	}
	return trace.SpanContextFromContext(Extract(context.Background(), h))
}

// End ends span, marked failed with err's text when err is not nil.
func End(span trace.Span, err error) {
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

// Traceparent returns ctx's span context as a W3C traceparent value, or
// "" when ctx carries none.
func Traceparent(ctx context.Context) string {
	c := propagation.MapCarrier{}
	propagator.Inject(ctx, c)
	return c["traceparent"]
}

// WithTraceparent returns ctx with the remote span context of the W3C
// traceparent value tp as parent; ctx unchanged when tp is empty or
// malformed.
func WithTraceparent(ctx context.Context, tp string) context.Context {
	if tp == "" {
		return ctx
	}
	return propagator.Extract(ctx, propagation.MapCarrier{"traceparent": tp})
}

// Inject writes ctx's trace context into h (e.g. message headers).
func Inject(ctx context.Context, h map[string]string) {
	propagator.Inject(ctx, propagation.MapCarrier(h))
}

// Extract returns ctx with the trace context found in h as remote parent.
func Extract(ctx context.Context, h map[string]string) context.Context {
	if len(h) == 0 {
		return ctx
	}
	// Header names may arrive in canonical case (NATS, HTTP).
	if tp, ok := h["Traceparent"]; ok {
		return WithTraceparent(ctx, tp)
	}
	return propagator.Extract(ctx, propagation.MapCarrier(h))
}

// WithNewTrace returns ctx with a new random, unsampled remote span
// context as parent: a trace id for a request that came without one while
// export is off (a sampled trace would have started its own).
func WithNewTrace(ctx context.Context) context.Context {
	var tid trace.TraceID
	var sid trace.SpanID
	_, _ = rand.Read(tid[:]) // crypto/rand never fails on supported platforms
	_, _ = rand.Read(sid[:])
	return trace.ContextWithRemoteSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: tid, SpanID: sid, Remote: true}))
}

// TraceID returns ctx's trace id in hex, or "" when ctx has no valid span
// context.
func TraceID(ctx context.Context) string {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.HasTraceID() {
		return ""
	}
	return sc.TraceID().String()
}
