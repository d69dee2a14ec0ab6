package edge

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/cmsplatform/cms/pkg/params"
	"github.com/cmsplatform/cms/services/internal/gateway"
)

// ValidInput answers 400 naming the offending part when the path, a query
// parameter or a header value is not valid UTF-8, when the query cannot be
// parsed, or when a header forwarded to the services (Authorization and
// the gateway's forwarded headers) is not printable ASCII: gRPC metadata
// cannot carry anything else, and such a header would otherwise be dropped
// silently (an X-CmsApi-Username of "\xff" would act as the caller). A
// malformed X-Cms-Max-Wait (params.Wait) is refused on every path, and a
// skip parameter on the Management API is refused too: its lists page with
// take and continue, and a skip ignored would hand a client that relies on
// it the same page forever.
func ValidInput(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if detail := invalidInput(r); detail != "" {
			problem(w, r, http.StatusBadRequest, detail)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// managementBasePath is services/management.BasePath (this package serves
// every group and imports none of them).
const managementBasePath = "/apis/cms/v1"

func invalidInput(r *http.Request) string {
	if !utf8.ValidString(r.URL.Path) {
		return "the request path is not valid UTF-8"
	}
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return "the query string cannot be parsed: " + err.Error()
	}
	if v := r.Header.Get("X-Cms-Max-Wait"); strings.TrimSpace(v) != "" {
		if _, err := params.Wait("X-Cms-Max-Wait", v); err != nil {
			return err.Error()
		}
	}
	if q.Has("skip") && strings.HasPrefix(r.URL.Path, managementBasePath+"/") {
		return "skip is no parameter of the Management API: its lists page with take and continue (the continue token of the previous answer)"
	}
	for k, vs := range q {
		if !utf8.ValidString(k) {
			return fmt.Sprintf("the query parameter name %q is not valid UTF-8", k)
		}
		for _, v := range vs {
			if !utf8.ValidString(v) {
				return fmt.Sprintf("the query parameter %q is not valid UTF-8", k)
			}
		}
	}
	for k, vs := range r.Header {
		_, forwarded := gateway.IncomingHeaderMatcher(k)
		forwarded = forwarded || k == "Authorization"
		for _, v := range vs {
			switch {
			case forwarded && !printableASCII(v):
				return fmt.Sprintf("the header %s must be printable ASCII", k)
			case !utf8.ValidString(v):
				return fmt.Sprintf("the header %s is not valid UTF-8", k)
			}
		}
	}
	return ""
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 && c != '\t') || c > 0x7e {
			return false
		}
	}
	return true
}
