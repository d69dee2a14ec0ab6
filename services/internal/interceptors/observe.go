// Package interceptors holds the gRPC interceptors every service runs, in
// this order: recovery, observation (log line and metrics per call), auth and
// the naming of unimplemented operations. The REST facades reach the services
// over gRPC, so every HTTP request passes through them too.
package interceptors

import (
	"context"
	"log/slog"
	"runtime/debug"
	"strings"
	"time"

	"github.com/cmsplatform/cms/pkg/tracing"
	"github.com/cmsplatform/cms/services/internal/gateway"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// Metrics are the per-call Prometheus metrics.
type Metrics struct {
	calls    *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

// NewMetrics registers the call metrics on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cms_grpc_calls_total", Help: "gRPC calls handled, by method and status code.",
		}, []string{"method", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "cms_grpc_call_duration_seconds", Help: "gRPC call latency, by method.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
		}, []string{"method"}),
	}
	reg.MustRegister(m.calls, m.duration)
	return m
}

// Observer records metrics for every call and logs the calls that failed
// on the server's side: Internal, Unknown and DataLoss at ERROR,
// Unavailable (a component down or slow) at WARN. A shed call (Unavailable
// with gateway.ReasonOverloaded) is expected: it is counted in Sheds,
// which sums them up in one line per interval, and never logged on its
// own. With AccessLog every other call gets one compact INFO line (client
// errors WARN). Calls the HTTP edge serves (gateway.FromEdge) are logged
// there, once per request, not here. Never request bodies or secrets.
type Observer struct {
	Log       *slog.Logger
	Metrics   *Metrics
	Sheds     *gateway.Sheds
	AccessLog bool
}

func (o Observer) done(ctx context.Context, method string, start time.Time, err error) {
	st := status.Convert(err)
	code := st.Code()
	elapsed := time.Since(start)
	if o.Metrics != nil {
		o.Metrics.calls.WithLabelValues(method, code.String()).Inc()
		observe(ctx, o.Metrics.duration.WithLabelValues(method), elapsed.Seconds())
	}
	if gateway.IsOverloaded(st) {
		o.Sheds.Add(Group(method))
		return
	}
	level := slog.LevelInfo
	switch code {
	case codes.OK, codes.NotFound, codes.Unimplemented:
	case codes.Internal, codes.Unknown, codes.DataLoss:
		level = slog.LevelError
	default:
		level = slog.LevelWarn
	}
	if gateway.FromEdge(ctx) || (!o.AccessLog && level < slog.LevelError && code != codes.Unavailable) {
		return
	}
	attrs := []slog.Attr{slog.String("method", method), slog.String("code", code.String()),
		slog.Duration("elapsed", elapsed)}
	if md, ok := metadata.FromIncomingContext(ctx); ok && len(md.Get("x-request-id")) > 0 {
		// Set by a gRPC client: the id its logs know the call by.
		id := md.Get("x-request-id")[0]
		attrs = append(attrs, slog.String("request_id", id[:min(len(id), 128)]))
	}
	if err != nil {
		attrs = append(attrs, slog.String("error", st.Message()))
	}
	o.Log.LogAttrs(ctx, level, "grpc call", attrs...)
}

// observe records v in h, with the call's trace id as exemplar when the
// call's span is sampled (its trace is in the tracing backend): a scraper
// asking for OpenMetrics gets it beside the bucket, so a latency spike on
// the dashboard leads to a trace of a call that made it.
func observe(ctx context.Context, h prometheus.Observer, v float64) {
	if sc := trace.SpanContextFromContext(ctx); sc.IsSampled() {
		if eo, ok := h.(prometheus.ExemplarObserver); ok {
			eo.ObserveWithExemplar(v, prometheus.Labels{"trace_id": sc.TraceID().String()})
			return
		}
	}
	h.Observe(v)
}

// Group is the API group of a full method name, the label of shed
// requests: "delivery" for /cms.delivery.v1.DeliveryService/GetObject,
// "other" outside the cms services (health, reflection).
func Group(method string) string {
	parts := strings.SplitN(strings.TrimPrefix(method, "/"), ".", 3)
	if len(parts) == 3 && parts[0] == "cms" && parts[1] != "" {
		return parts[1]
	}
	return "other"
}

// Unary implements grpc.UnaryServerInterceptor.
func (o Observer) Unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	start := time.Now()
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		if tp := md.Get("traceparent"); len(tp) > 0 {
			ctx = tracing.WithTraceparent(ctx, tp[0])
		}
	}
	ctx, span := tracing.Start(ctx, info.FullMethod, trace.SpanKindServer)
	resp, err := h(ctx, req)
	tracing.End(span, err)
	o.done(ctx, info.FullMethod, start, err)
	return resp, err
}

// Stream implements grpc.StreamServerInterceptor.
func (o Observer) Stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	start := time.Now()
	err := h(srv, ss)
	o.done(ss.Context(), info.FullMethod, start, err)
	return err
}

// Recovery turns a panic in a handler into an Internal error (logged with
// its stack) instead of crashing the process.
type Recovery struct{ Log *slog.Logger }

func (r Recovery) recovered(ctx context.Context, method string, p any) error {
	r.Log.ErrorContext(ctx, "panic in handler", "method", method, "panic", p, "stack", string(debug.Stack()))
	return status.Error(codes.Internal, "internal error")
}

// Unary implements grpc.UnaryServerInterceptor.
func (r Recovery) Unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (resp any, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = r.recovered(ctx, info.FullMethod, p)
		}
	}()
	return h(ctx, req)
}

// Stream implements grpc.StreamServerInterceptor.
func (r Recovery) Stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = r.recovered(ss.Context(), info.FullMethod, p)
		}
	}()
	return h(srv, ss)
}
