// Package gateway holds what all four REST facades share: the grpc-gateway
// ServeMux options (NovaDB JSON, ProblemDetails errors, header forwarding,
// non-200 success statuses), binary bodies, multipart upload routes, CORS and
// the OpenAPI documents. Services register their generated handlers on the
// mux it returns; no group hand-rolls HTTP.
package gateway

import (
	"net/http"
	"strings"

	"github.com/cmsplatform/cms/pkg/params"
	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// NewServeMux returns a grpc-gateway mux configured for the NovaDB wire format.
func NewServeMux(extra ...runtime.ServeMuxOption) *runtime.ServeMux {
	opts := []runtime.ServeMuxOption{
		runtime.WithMarshalerOption(runtime.MIMEWildcard, NewBinary()),
		runtime.WithMarshalerOption(MIMETextPlain, TextPlain{NewBinary()}),
		runtime.WithMarshalerOption(MIMEJSON, NewBinary()),
		runtime.WithErrorHandler(ErrorHandler),
		runtime.WithRoutingErrorHandler(RoutingErrorHandler),
		runtime.WithIncomingHeaderMatcher(IncomingHeaderMatcher),
		runtime.WithOutgoingHeaderMatcher(OutgoingHeaderMatcher),
		runtime.WithOutgoingTrailerMatcher(func(string) (string, bool) { return "", false }),
		runtime.WithForwardResponseOption(emptyAnswerHasNoContentType),
		runtime.WithForwardResponseOption(forwardHTTPStatus),
		runtime.WithDisablePathLengthFallback(),
		// {path=**} must not match an empty rest: /jobs/{id}/artifacts is its own route.
		runtime.WithStrictDeepWildcardMatching(),
		runtime.WithWriteContentLength(),
		runtime.WithMiddlewares(checkPathIdentifiers, streamStatus, negotiateText),
		runtime.WithStreamErrorHandler(StreamErrorHandler),
	}
	return runtime.NewServeMux(append(opts, extra...)...)
}

// OpenAPIPath is where ServeOpenAPI serves a group's document; it is
// public (no credentials needed).
func OpenAPIPath(basePath string) string { return strings.TrimRight(basePath, "/") + "/openapi.json" }

// checkPathIdentifiers applies params.PathIdentifier to the identifier
// path parameters before the generated handlers convert them.
func checkPathIdentifiers(next runtime.HandlerFunc) runtime.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request, pathParams map[string]string) {
		for _, name := range params.IdentifierPathParams {
			if err := params.PathIdentifier(name, pathParams[name]); err != nil {
				WriteProblem(w, problemFromStatus(status.New(codes.InvalidArgument, err.Error()), r.URL.Path, nil))
				return
			}
		}
		next(w, r, pathParams)
	}
}

// ServeOpenAPI serves doc at OpenAPIPath(basePath) on mux.
func ServeOpenAPI(mux *runtime.ServeMux, basePath string, doc []byte) error {
	return mux.HandlePath(http.MethodGet, OpenAPIPath(basePath),
		func(w http.ResponseWriter, _ *http.Request, _ map[string]string) {
			w.Header().Set("Content-Type", ContentTypeJSON)
			w.Header().Set("Cache-Control", "public, max-age=300")
			_, _ = w.Write(doc)
		})
}
