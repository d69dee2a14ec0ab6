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
		runtime.WithMiddlewares(checkPathIdentifiers),
	}
	return runtime.NewServeMux(append(opts, extra...)...)
}

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

// CORSConfig says which browser origins may call the API.
type CORSConfig struct {
	// AllowedOrigins lists origins ("https://app.example.com") or "*".
	// Empty disables CORS headers entirely.
	AllowedOrigins []string
}

// CORS wraps h with CORS handling: preflight requests are answered with 204
// and the headers NovaDB clients send and read are allowed and exposed.
func CORS(cfg CORSConfig, h http.Handler) http.Handler {
	if len(cfg.AllowedOrigins) == 0 {
		return h
	}
	allowAll := false
	allowed := map[string]bool{}
	for _, o := range cfg.AllowedOrigins {
		if o == "*" {
			allowAll = true
		}
		allowed[strings.TrimRight(o, "/")] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin == "" || (!allowAll && !allowed[origin]) {
			h.ServeHTTP(w, r)
			return
		}
		hd := w.Header()
		hd.Add("Vary", "Origin")
		hd.Set("Access-Control-Allow-Origin", origin)
		hd.Set("Access-Control-Allow-Credentials", "true")
		hd.Set("Access-Control-Expose-Headers", "ETag, Content-Range, Accept-Ranges, Location, Content-Disposition")
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			hd.Set("Access-Control-Allow-Methods", "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS")
			hd.Set("Access-Control-Allow-Headers",
				"Authorization, Content-Type, If-None-Match, If-Match, Range, X-CmsApi-Username, X-Request-Id, X-Cms-Min-Version, X-Cms-Max-Wait")
			hd.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// ServeOpenAPI serves doc at <basePath>/openapi.json on mux.
func ServeOpenAPI(mux *runtime.ServeMux, basePath string, doc []byte) error {
	return mux.HandlePath(http.MethodGet, strings.TrimRight(basePath, "/")+"/openapi.json",
		func(w http.ResponseWriter, _ *http.Request, _ map[string]string) {
			w.Header().Set("Content-Type", ContentTypeJSON)
			w.Header().Set("Cache-Control", "public, max-age=300")
			_, _ = w.Write(doc)
		})
}
