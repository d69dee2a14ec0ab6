package natsjs_test

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/cmsplatform/cms/pkg/events"
	"github.com/cmsplatform/cms/pkg/events/natsjs"
	"github.com/cmsplatform/cms/pkg/tracing"
	"github.com/cmsplatform/cms/pkg/tracing/tracingtest"
)

// TestPublishAndReceiveSpans: Publish inside a span records a "nats
// publish" producer span under it and carries that span's context in the
// message headers (replacing a stale traceparent the caller put there); the
// consumer records a "nats receive" span under it, from the time the stream
// stored the message, and the handler gets the publisher's context.
func TestPublishAndReceiveSpans(t *testing.T) {
	exp := tracingtest.Record(t)
	b, err := natsjs.NewEmbedded(t.Context(), natsjs.EmbeddedConfig{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()

	ctx, root := tracing.Start(t.Context(), "write", trace.SpanKindServer)
	stale := "00-0123456789abcdef0123456789abcdef-0123456789abcdef-01"
	if err := b.Publish(ctx, events.Event{Subject: "cms.changes.traced", MsgID: "t1", Data: []byte("x"),
		Headers: map[string]string{"Traceparent": stale, "X-Other": "kept"}}); err != nil {
		t.Fatal(err)
	}
	root.End()

	cctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	got := make(chan events.Msg, 1)
	go func() {
		_ = b.ConsumeBatch(cctx, "traced", "", func(_ context.Context, ms []events.Msg) (int, error) {
			got <- ms[0]
			cancel()
			return len(ms), nil
		})
	}()
	var m events.Msg
	select {
	case m = <-got:
	case <-cctx.Done():
		t.Fatal("nothing consumed")
	}

	spans := map[string]tracetest.SpanStub{}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		for _, s := range exp.GetSpans() {
			spans[s.Name] = s
		}
		if _, ok := spans["nats receive cms.changes.traced"]; ok || time.Now().After(deadline) {
			break
		}
	}
	pub, ok := spans["nats publish cms.changes.traced"]
	if !ok {
		t.Fatalf("no publish span among %v", spans)
	}
	if pub.SpanKind != trace.SpanKindProducer || pub.Parent.SpanID() != root.SpanContext().SpanID() ||
		pub.SpanContext.TraceID() != root.SpanContext().TraceID() {
		t.Errorf("publish span %v under %s, want a producer span under the caller's %s", pub.SpanKind, pub.Parent.SpanID(), root.SpanContext().SpanID())
	}
	if sc := tracing.SpanContextOf(m.Headers); sc.SpanID() != pub.SpanContext.SpanID() || sc.TraceID() != pub.SpanContext.TraceID() {
		t.Errorf("message headers %v carry %s/%s, want the publish span %s/%s", m.Headers, sc.TraceID(), sc.SpanID(),
			pub.SpanContext.TraceID(), pub.SpanContext.SpanID())
	}
	if m.Headers["X-Other"] != "kept" || m.Headers["Traceparent"] != "" {
		t.Errorf("headers %v: want the caller's other header kept and its stale traceparent replaced", m.Headers)
	}
	recv, ok := spans["nats receive cms.changes.traced"]
	if !ok {
		t.Fatalf("no receive span among %v", spans)
	}
	if recv.SpanKind != trace.SpanKindConsumer || recv.Parent.SpanID() != pub.SpanContext.SpanID() {
		t.Errorf("receive span %v under %s, want a consumer span under the publish span %s", recv.SpanKind, recv.Parent.SpanID(), pub.SpanContext.SpanID())
	}
	if !recv.StartTime.Equal(m.Published) || recv.EndTime.Before(recv.StartTime) {
		t.Errorf("receive span %v..%v, want it to start when the stream stored the message (%v)", recv.StartTime, recv.EndTime, m.Published)
	}
}

// TestPublishFollowsTheHeadersWithoutASpan: a Publish whose context has no
// span (a relay publishing on behalf of a stored trace) makes its span a
// child of the trace context the caller put in the headers.
func TestPublishFollowsTheHeadersWithoutASpan(t *testing.T) {
	exp := tracingtest.Record(t)
	b, err := natsjs.NewEmbedded(t.Context(), natsjs.EmbeddedConfig{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	tid, sid := "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	if err := b.Publish(t.Context(), events.Event{Subject: "cms.changes.stored", MsgID: "s1",
		Headers: map[string]string{"traceparent": "00-" + tid + "-" + sid + "-01"}}); err != nil {
		t.Fatal(err)
	}
	for _, s := range exp.GetSpans() {
		if s.Name == "nats publish cms.changes.stored" {
			if s.SpanContext.TraceID().String() != tid || s.Parent.SpanID().String() != sid {
				t.Errorf("publish span in %s under %s, want in %s under %s", s.SpanContext.TraceID(), s.Parent.SpanID(), tid, sid)
			}
			return
		}
	}
	t.Fatalf("no publish span among %d", len(exp.GetSpans()))
}
