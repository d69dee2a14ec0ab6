package component_test

import (
	"context"
	"errors"
	"syscall"
	"testing"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/cmsplatform/cms/pkg/component"
	"github.com/cmsplatform/cms/pkg/tracing"
	"github.com/cmsplatform/cms/pkg/tracing/tracingtest"
)

// TestOpSpans: each call through Guard.Op is a client span named after
// the component and the call, a child of the caller's span, failed with
// the classified error's text when the component is unavailable; a call
// outside a recorded span is no span.
func TestOpSpans(t *testing.T) {
	exp := tracingtest.Record(t)

	g := component.Guard{Name: "search"}
	ctx, parent := tracing.Start(context.Background(), "request", 0)
	if err := g.Op(ctx, "Search", func(context.Context) error { return nil }); err != nil {
		t.Fatal(err)
	}
	err := g.Op(ctx, "Bulk", func(context.Context) error { return syscall.ECONNREFUSED })
	if !errors.Is(err, component.ErrUnavailable) {
		t.Fatalf("Op's error %v is not ErrUnavailable", err)
	}
	parent.End()
	if err := g.Op(context.Background(), "Get", func(context.Context) error { return nil }); err != nil {
		t.Fatal(err)
	}

	spans := exp.GetSpans()
	byName := map[string]tracetest.SpanStub{}
	for _, s := range spans {
		byName[s.Name] = s
	}
	req := byName["request"]
	for _, name := range []string{"search Search", "search Bulk"} {
		s, ok := byName[name]
		if !ok {
			t.Fatalf("no span %q in %d spans", name, len(spans))
		}
		if s.Parent.SpanID() != req.SpanContext.SpanID() || s.SpanContext.TraceID() != req.SpanContext.TraceID() {
			t.Errorf("span %q is not a child of the caller's span", name)
		}
	}
	if len(spans) != 3 {
		t.Errorf("%d spans, want 3 (a call outside a recorded span makes none)", len(spans))
	}
	if s := byName["search Search"]; s.Status.Code == codes.Error {
		t.Errorf("a successful call's span failed: %v", s.Status)
	}
	if s := byName["search Bulk"]; s.Status.Code != codes.Error || s.Status.Description != err.Error() {
		t.Errorf("the failed call's span has status %v, want the error %q", s.Status, err)
	}
}
