package gateway

import (
	"context"
	"net/http"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc/status"
)

// grpc-gateway answers a server stream (a binary download) that fails
// before its first message with the HTTP status of the gRPC code alone, so
// 304, 413, 416 and 422 would all become 400 or 429. streamStatus wraps the
// ResponseWriter of GET requests (every streaming operation is a GET) and
// StreamErrorHandler sets the status the reason table gives (HTTPStatus),
// the same as unary errors; a 304 is sent without body or Content-Type.

type streamStatusKey struct{}

type statusWriter struct {
	http.ResponseWriter
	code   int
	noBody bool
}

func (s *statusWriter) WriteHeader(code int) {
	if s.code != 0 {
		code, s.code = s.code, 0
	}
	if code == http.StatusNotModified {
		s.noBody = true
		s.Header().Del("Content-Type")
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(p []byte) (int, error) {
	if s.noBody {
		return len(p), nil
	}
	return s.ResponseWriter.Write(p)
}

// Flush lets streamed chunks reach the client as they come.
func (s *statusWriter) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap serves http.ResponseController.
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

func streamStatus(next runtime.HandlerFunc) runtime.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request, pathParams map[string]string) {
		if r.Method != http.MethodGet {
			next(w, r, pathParams)
			return
		}
		sw := &statusWriter{ResponseWriter: w}
		next(sw, r.WithContext(context.WithValue(r.Context(), streamStatusKey{}, sw)), pathParams)
	}
}

// StreamErrorHandler implements runtime.StreamErrorHandlerFunc.
func StreamErrorHandler(ctx context.Context, err error) *status.Status {
	st := status.Convert(err)
	if sw, ok := ctx.Value(streamStatusKey{}).(*statusWriter); ok {
		sw.code = HTTPStatus(st)
	}
	return st
}
