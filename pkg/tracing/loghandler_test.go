package tracing_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/cmsplatform/cms/pkg/tracing"
	"go.opentelemetry.io/otel/trace"
)

// A log line written under an active span carries its trace and span ids;
// one written without a span carries neither.
func TestLogHandlerAddsTraceAndSpanIDs(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(tracing.LogHandler(slog.NewJSONHandler(&buf, nil)))

	ctx := tracing.WithTraceparent(context.Background(), "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
	log.InfoContext(ctx, "with span")
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatal(err)
	}
	if line["trace_id"] != "0af7651916cd43dd8448eb211c80319c" || line["span_id"] != "b7ad6b7169203331" {
		t.Fatalf("line under a span = %v, want trace_id and span_id of the traceparent", line)
	}

	buf.Reset()
	log.With("k", "v").WithGroup("g").InfoContext(ctx, "grouped", "a", 1)
	line = nil
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatal(err)
	}
	if line["trace_id"] != "0af7651916cd43dd8448eb211c80319c" || line["k"] != "v" {
		t.Fatalf("line through With/WithGroup = %v, want trace_id at the top level and k kept", line)
	}

	buf.Reset()
	log.InfoContext(trace.ContextWithSpanContext(context.Background(), trace.SpanContext{}), "no span")
	line = nil
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatal(err)
	}
	if _, ok := line["trace_id"]; ok {
		t.Fatalf("line without a span = %v, want no trace_id", line)
	}
}
