package outbox_test

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/cmsplatform/cms/pkg/events"
	"github.com/cmsplatform/cms/pkg/outbox"
	"github.com/cmsplatform/cms/pkg/store"
	"github.com/cmsplatform/cms/pkg/store/sqlite"
	"github.com/cmsplatform/cms/pkg/tracing"
	"github.com/cmsplatform/cms/pkg/tracing/tracingtest"
)

// capture is a publisher that keeps what it is given.
type capture struct{ got []events.Event }

func (c *capture) Publish(_ context.Context, e events.Event) error {
	c.got = append(c.got, e)
	return nil
}

// TestRelayPublishesUnderTheWritersTrace appends an event inside a span,
// relays it from another context and checks that the outbox row carried the
// trace: the publish span is a child of the writer's span and the message
// headers hand its context on to the consumers.
func TestRelayPublishesUnderTheWritersTrace(t *testing.T) {
	exp := tracingtest.Record(t)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := sqlite.Open(ctx, t.TempDir()+"/cms.db")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	wctx, write := tracing.Start(ctx, "write", trace.SpanKindServer)
	tx, err := st.Begin(wctx, store.TxMeta{User: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.AppendOutbox(wctx, store.OutboxEvent{Subject: "cms.changes.test", MsgID: "m1", Payload: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(wctx); err != nil {
		t.Fatal(err)
	}
	write.End()

	pub := &capture{}
	if n, err := outbox.New(st, pub, outbox.Options{}).RelayOnce(ctx); err != nil || n != 1 {
		t.Fatalf("relayed %d, %v", n, err)
	}
	if len(pub.got) != 1 {
		t.Fatalf("published %d events", len(pub.got))
	}
	msg := tracing.Extract(context.Background(), pub.got[0].Headers)
	want := write.SpanContext().TraceID()
	if got := trace.SpanContextFromContext(msg).TraceID(); got != want {
		t.Fatalf("message headers %v carry trace %s, want the writer's %s", pub.got[0].Headers, got, want)
	}
	var publish *tracetest.SpanStub
	for i, s := range exp.GetSpans() {
		if s.Name == "outbox.publish cms.changes.test" {
			publish = &exp.GetSpans()[i]
		}
	}
	if publish == nil {
		t.Fatalf("no publish span among %d spans", len(exp.GetSpans()))
	}
	if publish.SpanContext.TraceID() != want || publish.Parent.SpanID() != write.SpanContext().SpanID() {
		t.Fatalf("publish span in trace %s under %s, want %s under %s", publish.SpanContext.TraceID(),
			publish.Parent.SpanID(), want, write.SpanContext().SpanID())
	}
}
