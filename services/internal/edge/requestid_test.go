package edge

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/cmsplatform/cms/pkg/tracing"
	"github.com/cmsplatform/cms/services/internal/gateway"
	"go.opentelemetry.io/otel/trace"
)

// TestRequestIDIsTheTraceID: with trace export off (the default) an
// incoming traceparent is honoured: the answer's id is its trace id and the
// handler runs in that trace, handing a traceparent of it on; without one
// the id is a fresh trace id; the client's X-Request-Id stays available as
// the client request id.
func TestRequestIDIsTheTraceID(t *testing.T) {
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	var inner, forwarded, client string
	h := RequestID(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inner = trace.SpanContextFromContext(r.Context()).TraceID().String()
		forwarded = r.Header.Get("Traceparent")
		client = ClientRequestIDFrom(r.Context())
	}))
	r := httptest.NewRequest(http.MethodGet, "/x", nil)
	r.Header.Set("Traceparent", "00-"+traceID+"-00f067aa0ba902b7-01")
	r.Header.Set(gateway.HeaderRequestID, "mine-1")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if got := w.Header().Get(gateway.HeaderRequestID); got != traceID || inner != traceID || client != "mine-1" {
		t.Fatalf("id %q, handler trace %q, client id %q; want %s and mine-1", got, inner, client, traceID)
	}
	if tracing.TraceID(tracing.WithTraceparent(r.Context(), forwarded)) != traceID {
		t.Fatalf("forwarded traceparent %q is not of trace %s", forwarded, traceID)
	}

	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/x", nil))
	if got := w.Header().Get(gateway.HeaderRequestID); len(got) != 32 || got != inner || client != "" {
		t.Fatalf("new id %q, handler trace %q, client id %q", got, inner, client)
	}
}
