// Package gateway holds what all four REST facades share: the grpc-gateway
// ServeMux options (NovaDB JSON, ProblemDetails errors, header forwarding,
// non-200 success statuses), binary bodies, multipart upload routes, CORS and
// the OpenAPI documents. Services register their generated handlers on the
// mux it returns; no group hand-rolls HTTP.
package gateway

import (
	"net/http"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
)

// NewServeMux returns a grpc-gateway mux configured for the NovaDB wire format.
func NewServeMux(extra ...runtime.ServeMuxOption) *runtime.ServeMux {
	opts := []runtime.ServeMuxOption{
		runtime.WithMarshalerOption(runtime.MIMEWildcard, NewBinary()),
		runtime.WithErrorHandler(ErrorHandler),
		runtime.WithRoutingErrorHandler(RoutingErrorHandler),
		runtime.WithIncomingHeaderMatcher(IncomingHeaderMatcher),
		runtime.WithOutgoingHeaderMatcher(OutgoingHeaderMatcher),
		runtime.WithOutgoingTrailerMatcher(func(string) (string, bool) { return "", false }),
		runtime.WithForwardResponseOption(forwardHTTPStatus),
		runtime.WithDisablePathLengthFallback(),
		// {path=**} must not match an empty rest: /jobs/{id}/artifacts is its own route.
		runtime.WithStrictDeepWildcardMatching(),
		runtime.WithWriteContentLength(),
	}
	return runtime.NewServeMux(append(opts, extra...)...)
}

// OpenAPIPath is where ServeOpenAPI serves a group's document; it is
// public (no credentials needed).
func OpenAPIPath(basePath string) string { return strings.TrimRight(basePath, "/") + "/openapi.json" }

// ServeOpenAPI serves doc at OpenAPIPath(basePath) on mux.
func ServeOpenAPI(mux *runtime.ServeMux, basePath string, doc []byte) error {
	return mux.HandlePath(http.MethodGet, OpenAPIPath(basePath),
		func(w http.ResponseWriter, _ *http.Request, _ map[string]string) {
			w.Header().Set("Content-Type", ContentTypeJSON)
			w.Header().Set("Cache-Control", "public, max-age=300")
			_, _ = w.Write(doc)
		})
}
