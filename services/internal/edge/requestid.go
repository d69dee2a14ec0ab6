package edge

import (
	"context"
	"net/http"

	"github.com/cmsplatform/cms/pkg/tracing"
	"github.com/cmsplatform/cms/services/internal/gateway"
	"go.opentelemetry.io/otel/trace"
)

// maxRequestIDLen bounds an X-Request-Id taken from the client.
const maxRequestIDLen = 128

type requestIDKey struct{}

type clientRequestIDKey struct{}

// RequestID gives every request an id, which is its trace id: the request
// runs in a server span (pkg/tracing) under the caller's traceparent when
// it sends one, which is honoured even with trace export off; without
// one, and with export off, the id is 32 random hex digits that also
// become the request's (unsampled) trace id, so the outbox and the
// consumers carry it on. A sane client X-Request-Id (1 to 128 characters
// of letters, digits and -_.:/+=) is kept as the client request id
// (ClientRequestIDFrom; logged as client_request_id). The id replaces the
// request header (so the gateway forwards it to the services as
// x-request-id metadata, with the traceparent), is written on the answer
// and is in the context (RequestIDFrom).
func RequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		if client := r.Header.Get(gateway.HeaderRequestID); saneRequestID(client) {
			ctx = context.WithValue(ctx, clientRequestIDKey{}, client)
		}
		ctx, span := tracing.Start(tracing.WithTraceparent(ctx, r.Header.Get("Traceparent")),
			r.Method+" "+r.URL.Path, trace.SpanKindServer)
		defer span.End()
		id := tracing.TraceID(ctx)
		if id == "" {
			ctx = tracing.WithNewTrace(ctx)
			id = tracing.TraceID(ctx)
		}
		if tp := tracing.Traceparent(ctx); tp != "" {
			r.Header.Set("Traceparent", tp)
		}
		r.Header.Set(gateway.HeaderRequestID, id)
		w.Header().Set(gateway.HeaderRequestID, id)
		next.ServeHTTP(w, r.WithContext(context.WithValue(ctx, requestIDKey{}, id)))
	})
}

// RequestIDFrom returns the id RequestID gave the request, or "".
func RequestIDFrom(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// ClientRequestIDFrom returns the client's own X-Request-Id, or "".
func ClientRequestIDFrom(ctx context.Context) string {
	id, _ := ctx.Value(clientRequestIDKey{}).(string)
	return id
}

func saneRequestID(id string) bool {
	if id == "" || len(id) > maxRequestIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		switch c {
		case '-', '_', '.', ':', '/', '+', '=':
			ok = true
		}
		if !ok {
			return false
		}
	}
	return true
}
