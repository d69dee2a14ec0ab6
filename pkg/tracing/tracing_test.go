package tracing_test

import (
	"testing"

	"github.com/cmsplatform/cms/pkg/tracing"
)

// TestEnabled: export is off unless the standard settings ask for it.
func TestEnabled(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want bool
	}{
		{nil, false},
		{map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x:4318"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://x:4318/v1/traces"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x:4318", "OTEL_TRACES_EXPORTER": "none"}, false},
		{map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_SDK_DISABLED": "true"}, false},
	} {
		if got := tracing.Enabled(func(k string) string { return c.env[k] }); got != c.want {
			t.Errorf("Enabled(%v) = %v, want %v", c.env, got, c.want)
		}
	}
}

// TestTraceparentRoundTrip: a traceparent read back is written out again
// with the same trace id, and garbage is ignored.
func TestTraceparentRoundTrip(t *testing.T) {
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	ctx := tracing.WithTraceparent(t.Context(), tp)
	if got := tracing.Traceparent(ctx); got != tp {
		t.Fatalf("Traceparent = %q, want %q", got, tp)
	}
	if id := tracing.TraceID(tracing.WithTraceparent(t.Context(), "garbage")); id != "" {
		t.Fatalf("garbage gave trace %q", id)
	}
	h := map[string]string{"Traceparent": tp}
	if tracing.TraceID(tracing.Extract(t.Context(), h)) != "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Fatal("Extract ignores a canonical-case Traceparent header")
	}
}
