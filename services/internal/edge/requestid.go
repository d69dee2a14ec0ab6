package edge

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"

	"github.com/cmsplatform/cms/services/internal/gateway"
)

// maxRequestIDLen bounds an X-Request-Id taken from the client.
const maxRequestIDLen = 128

type requestIDKey struct{}

// RequestID gives every request an id: the client's X-Request-Id when it
// is sane (1 to 128 characters of letters, digits and -_.:/+=), else 32
// random hex digits. The id replaces the request header (so the gateway
// forwards it to the services as x-request-id metadata), is written on the
// answer and is in the context (RequestIDFrom).
func RequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(gateway.HeaderRequestID)
		if !saneRequestID(id) {
			id = newRequestID()
		}
		r.Header.Set(gateway.HeaderRequestID, id)
		w.Header().Set(gateway.HeaderRequestID, id)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), requestIDKey{}, id)))
	})
}

// RequestIDFrom returns the id RequestID gave the request, or "".
func RequestIDFrom(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
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

func newRequestID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand never fails on supported platforms
	return hex.EncodeToString(b)
}
