package gateway

import (
	"context"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/genproto/googleapis/api/httpbody"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"
)

// Request headers passed to the gRPC services as lower-case metadata.
// grpc-gateway always forwards Authorization itself (listing it here would
// send it twice); X-CmsApi-Username is honoured by the auth interceptor only
// for callers allowed to act for others.
var incomingHeaders = map[string]bool{
	"if-none-match":     true,
	"if-match":          true,
	"if-modified-since": true,
	"range":             true,
	"x-cmsapi-username": true,
	"x-request-id":      true,
	// The edge's span (pkg/tracing): the services' spans join its trace.
	"traceparent":     true,
	"accept-language": true,
	// Delivery read-your-writes: wait until this change version is indexed.
	"x-cms-min-version": true,
	"x-cms-max-wait":    true,
	// Accept decides between raw text and a JSON string for string answers
	// (text.go).
	"accept": true,
	// Delivery's change stream: resume after this version (an
	// EventSource reconnecting sends it).
	"last-event-id": true,
}

// Response metadata written back as real HTTP headers, without grpc-gateway's
// Grpc-Metadata- prefix. Everything else stays internal.
var outgoingHeaders = map[string]string{
	"etag":                "ETag",
	"content-range":       "Content-Range",
	"accept-ranges":       "Accept-Ranges",
	"location":            "Location",
	"cache-control":       "Cache-Control",
	"last-modified":       "Last-Modified",
	"content-disposition": "Content-Disposition",
	// Served files and renders: what a browser may run (pkg/files exposure).
	"x-content-type-options":  "X-Content-Type-Options",
	"content-security-policy": "Content-Security-Policy",
	"retry-after":             "Retry-After",
	"www-authenticate":        "WWW-Authenticate",
	"x-request-id":            "X-Request-Id",
	"vary":                    "Vary",
}

// IncomingHeaderMatcher implements runtime.HeaderMatcherFunc for requests.
func IncomingHeaderMatcher(key string) (string, bool) {
	k := strings.ToLower(key)
	if incomingHeaders[k] {
		return k, true
	}
	return "", false
}

// OutgoingHeaderMatcher implements runtime.HeaderMatcherFunc for responses.
func OutgoingHeaderMatcher(key string) (string, bool) {
	if h, ok := outgoingHeaders[strings.ToLower(key)]; ok {
		return h, true
	}
	return "", false
}

// writeMetadataHeaders copies the forwarded response headers; the error
// handler needs it because grpc-gateway only does so for successes.
func writeMetadataHeaders(w http.ResponseWriter, md metadata.MD) {
	for k, vs := range md {
		if h, ok := OutgoingHeaderMatcher(k); ok {
			for _, v := range vs {
				w.Header().Add(textproto.CanonicalMIMEHeaderKey(h), v)
			}
		}
	}
}

// SetHTTPStatus makes the gateway answer a successful call with code
// (201 Created, 204 No Content, 206 Partial Content). Call it from a gRPC
// handler before returning; it travels as the x-http-code header.
func SetHTTPStatus(ctx context.Context, code int) error {
	return grpc.SetHeader(ctx, metadata.Pairs(headerHTTPCode, strconv.Itoa(code)))
}

// emptyAnswerHasNoContentType is a runtime forward-response option: an
// answer without a body (google.protobuf.Empty, which WireJSON writes as
// no bytes at all) carries no Content-Type, so clients that parse every
// JSON-labelled answer do not fail on it. The status stays the one the
// operation declares (200 unless the handler set another).
func emptyAnswerHasNoContentType(_ context.Context, w http.ResponseWriter, m proto.Message) error {
	if _, ok := m.(*emptypb.Empty); ok {
		w.Header().Del("Content-Type")
	}
	return nil
}

// forwardHTTPStatus is a runtime forward-response option that turns the
// x-http-code header into the response status. For streams it runs once
// with a nil message before the first chunk: it waits for the first real
// message so that an HttpBody can still set its content type.
func forwardHTTPStatus(ctx context.Context, w http.ResponseWriter, m proto.Message) error {
	if m == nil {
		return nil
	}
	md, ok := runtime.ServerMetadataFromContext(ctx)
	if !ok {
		return nil
	}
	vals := md.HeaderMD.Get(headerHTTPCode)
	if len(vals) == 0 {
		return nil
	}
	delete(md.HeaderMD, headerHTTPCode)
	w.Header().Del("Grpc-Metadata-" + headerHTTPCode)
	code, err := strconv.Atoi(vals[0])
	if err != nil || code < 200 || code > 599 {
		return nil
	}
	if hb, ok := m.(*httpbody.HttpBody); ok && hb.GetContentType() != "" {
		w.Header().Set("Content-Type", hb.GetContentType())
	}
	if code == http.StatusNoContent || code == http.StatusNotModified {
		w.Header().Del("Content-Type")
	}
	w.WriteHeader(code)
	return nil
}
