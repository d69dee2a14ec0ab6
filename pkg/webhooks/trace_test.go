package webhooks

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/tracing"
	"github.com/cmsplatform/cms/pkg/tracing/tracingtest"
)

// TestDeliveryCarriesTheWritersTrace: a write made under a span reaches
// the webhook's receiver with a traceparent of the writer's trace (the
// outbox row and the message headers carry it), and the attempt is a
// span "webhooks.deliver" of that trace.
func TestDeliveryCarriesTheWritersTrace(t *testing.T) {
	exp := tracingtest.Record(t)
	setups(t, func(t *testing.T, e *env) {
		var mu sync.Mutex
		var got []string
		srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, r.Header.Get("traceparent"))
		}))
		t.Cleanup(srv.Close)
		e.create(t, hook(srv.URL, "k"))
		e.dispatch(t, Config{Client: ClientSettings{AllowPrivate: true}})

		ctx, span := tracing.Start(context.Background(), "write", trace.SpanKindServer)
		if _, _, err := e.content.CreateObjects(ctx, "4", admin, []content.ObjectInput{objectOf(content.RootID, "Traced")}); err != nil {
			t.Fatal(err)
		}
		span.End()
		writer := span.SpanContext().TraceID().String()
		waitFor(t, "a delivery in the writer's trace", func() bool {
			mu.Lock()
			defer mu.Unlock()
			for _, tp := range got {
				if len(tp) == 55 && tp[3:35] == writer {
					return true
				}
			}
			return false
		})
		found := false
		for _, s := range exp.GetSpans() {
			found = found || (s.Name == "webhooks.deliver" && s.SpanContext.TraceID().String() == writer)
		}
		if !found {
			t.Errorf("no webhooks.deliver span in the writer's trace %s", writer)
		}
	})
}
