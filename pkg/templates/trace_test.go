package templates

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/cmsplatform/cms/pkg/tracing"
	"github.com/cmsplatform/cms/pkg/tracing/tracingtest"
)

// TestRenderIsASpan: a render is a span "templates.render" under the
// caller's span.
func TestRenderIsASpan(t *testing.T) {
	exp := tracingtest.Record(t)
	w := newWorld(t)
	s := New(w.c, Limits{}, nil)
	tpl := w.template(t, "traced", `{{range .Objects}}{{name .}}{{end}}`)
	ctx, span := tracing.Start(context.Background(), "request", trace.SpanKindServer)
	if _, err := s.Render(ctx, Request{Branch: "4", Template: tpl, Objects: ids(w.a1)}); err != nil {
		t.Fatal(err)
	}
	span.End()
	var renders int
	for _, s := range exp.GetSpans() {
		if s.Name == "templates.render" {
			renders++
			if s.Parent.SpanID() != span.SpanContext().SpanID() {
				t.Errorf("the render's span is not a child of the request's")
			}
		}
	}
	if renders != 1 {
		t.Errorf("%d templates.render spans for one render, want 1", renders)
	}
}
