package edge

import (
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/cmsplatform/cms/services/internal/gateway"
)

// LogFaults logs every answer with a 5xx status (but 501, the expected
// answer of operations not built yet) at ERROR with the request
// id, method, path, status and, when the gateway produced the error, its
// cause (gateway.Fault), so every "internal error" a client sees has a log
// line under its requestId. A panic is logged with its stack and answered
// 500 if nothing was written yet.
func LogFaults(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, fault := gateway.WithFault(r.Context())
		sw := &statusWriter{ResponseWriter: w}
		start := time.Now()
		defer func() {
			p := recover()
			if p == http.ErrAbortHandler {
				panic(p)
			}
			if p != nil {
				fault.Cause = "panic: " + panicText(p)
				log.ErrorContext(ctx, "http handler panic", "request_id", RequestIDFrom(ctx),
					"panic", p, "stack", string(debug.Stack()))
				if sw.status == 0 {
					problem(sw, r, http.StatusInternalServerError, "internal error; the server log has the cause under the requestId")
				}
			}
			if sw.status >= 500 && sw.status != http.StatusNotImplemented {
				log.LogAttrs(ctx, slog.LevelError, "http request failed",
					slog.String("request_id", RequestIDFrom(ctx)), slog.String("method", r.Method),
					slog.String("path", r.URL.Path), slog.Int("status", sw.status),
					slog.String("cause", fault.Cause), slog.Duration("elapsed", time.Since(start)))
			}
		}()
		next.ServeHTTP(sw, r.WithContext(ctx))
	})
}

func panicText(p any) string {
	if err, ok := p.(error); ok {
		return err.Error()
	}
	if s, ok := p.(string); ok {
		return s
	}
	return "non-error value"
}

// statusWriter remembers the status written. It keeps streaming and
// http.ResponseController (read deadlines of uploads) working through
// Flush and Unwrap.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 || w.status < 200 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Flush implements http.Flusher.
func (w *statusWriter) Flush() {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	http.NewResponseController(w.ResponseWriter).Flush() //nolint:errcheck // best effort, like http.Flusher
}

// Unwrap lets http.ResponseController reach the connection.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
