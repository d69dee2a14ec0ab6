package edge

import (
	"fmt"
	"mime"
	"net/http"

	"github.com/cmsplatform/cms/services/internal/gateway"
)

// LimitBodies reads every request body through gateway.LimitBody: at most
// limits.MaxBytes (413 beyond it, enforced while reading) and JSON nested
// at most limits.MaxDepth deep (400). A Content-Length over the limit is
// refused before anything is read. Multipart uploads are exempt from that
// early check: their route raises the limit to the upload limit
// (gateway.RaiseBodyLimit) and checks Content-Length against it; sent to
// any other route, their reading still stops at MaxBytes.
func LimitBodies(limits gateway.BodyLimits, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > limits.MaxBytes && !isMultipart(r) {
			w.Header().Set("Connection", "close")
			gateway.WriteProblem(w, gateway.Problem{Type: "about:blank",
				Title: http.StatusText(http.StatusRequestEntityTooLarge), Status: http.StatusRequestEntityTooLarge,
				Detail: fmt.Sprintf("the request body exceeds the limit of %d bytes", limits.MaxBytes),
				Reason: gateway.ReasonPayloadTooLarge, Instance: r.URL.Path})
			return
		}
		gateway.LimitBody(w, r, limits)
		next.ServeHTTP(w, r)
	})
}

func isMultipart(r *http.Request) bool {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && mt == "multipart/form-data"
}
