// Package tracingtest records the spans a test makes: Record installs a
// tracer provider that exports synchronously to memory until the test ends.
package tracingtest

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/cmsplatform/cms/pkg/tracing"
)

// Record makes an in-memory exporter the global tracer provider's until t
// ends and returns it; its GetSpans lists the spans ended so far.
func Record(t testing.TB) *tracetest.InMemoryExporter {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	shutdown := tracing.InstallProvider(sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp)))
	t.Cleanup(func() { _ = shutdown(context.Background()) })
	return exp
}
