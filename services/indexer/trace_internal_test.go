package indexer

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/cmsplatform/cms/pkg/events"
	"github.com/cmsplatform/cms/pkg/tracing"
	"github.com/cmsplatform/cms/pkg/tracing/tracingtest"
)

// TestBatchSpanLinksEveryEvent: a batch of events from two writes is one
// "indexer.batch" span in the first write's trace, linked to the span of
// each event (the trace context of its headers); an apply started under it
// for the first event stays its child, one for an event of another trace
// joins that trace, where an "indexer.batched" span linked to the batch
// shows when it became searchable.
func TestBatchSpanLinksEveryEvent(t *testing.T) {
	exp := tracingtest.Record(t)
	headers := func(name string) (map[string]string, trace.SpanContext) {
		ctx, span := tracing.Start(context.Background(), name, trace.SpanKindProducer)
		defer span.End()
		h := map[string]string{}
		tracing.Inject(ctx, h)
		return h, span.SpanContext()
	}
	h1, sc1 := headers("write 1")
	h2, sc2 := headers("write 2")
	ms := []events.Msg{{Subject: "a", Sequence: 7, Headers: h1}, {Subject: "b", Sequence: 8, Headers: h2}, {Subject: "c", Sequence: 9}}

	ctx, span, others := batchSpan(context.Background(), ms)
	if got := eventContext(ctx, ms[0]); trace.SpanContextFromContext(got).SpanID() != span.SpanContext().SpanID() {
		t.Error("the first event's apply is not under the batch span")
	}
	if got := eventContext(ctx, ms[1]); trace.SpanContextFromContext(got).TraceID() != sc2.TraceID() {
		t.Error("the second event's apply is not in its own write's trace")
	}
	if got := eventContext(ctx, ms[2]); trace.SpanContextFromContext(got).SpanID() != span.SpanContext().SpanID() {
		t.Error("an event without trace context is not under the batch span")
	}
	span.End()
	for _, o := range others {
		o.End()
	}

	var batch []string
	var batched int
	for _, s := range exp.GetSpans() {
		if s.Name == "indexer.batched" {
			batched++
			if s.Parent.SpanID() != sc2.SpanID() || len(s.Links) != 1 || s.Links[0].SpanContext.SpanID() != span.SpanContext().SpanID() {
				t.Errorf("indexer.batched under %s linked to %+v, want under the second event's %s, linked to the batch", s.Parent.SpanID(), s.Links, sc2.SpanID())
			}
		}
		if s.Name != "indexer.batch" {
			continue
		}
		batch = append(batch, s.Name)
		if s.SpanKind != trace.SpanKindConsumer || s.Parent.SpanID() != sc1.SpanID() || s.SpanContext.TraceID() != sc1.TraceID() {
			t.Errorf("batch span %v under %s/%s, want a consumer span under the first event's %s/%s", s.SpanKind,
				s.Parent.TraceID(), s.Parent.SpanID(), sc1.TraceID(), sc1.SpanID())
		}
		if len(s.Links) != 2 || s.Links[0].SpanContext.SpanID() != sc1.SpanID() || s.Links[1].SpanContext.SpanID() != sc2.SpanID() {
			t.Errorf("batch links %+v, want the spans of the two traced events", s.Links)
		}
	}
	if len(batch) != 1 || batched != 1 {
		t.Fatalf("%d batch spans and %d for the other traces, want 1 and 1 (the second write's)", len(batch), batched)
	}
}
