package edge

import (
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/cmsplatform/cms/services/internal/gateway"
)

// LogRequests logs every answer with a 5xx status (but 501, the expected
// answer of operations not built yet) with the request id, method, path,
// status and, when the gateway produced the error, its cause
// (gateway.Fault), so every "internal error" a client sees has a log line
// under its requestId: ERROR, but WARN for a 503 (a component down or
// slow, retry later). Expected answers (gateway.MarkExpected: a shed
// request, /readyz not ready) are no faults and not logged; requests the
// edge sheds itself are counted in sheds. A panic is logged with its
// stack and answered 500 if nothing was written yet. With accessLog every
// other request gets one compact INFO line too, at most one per request.
func LogRequests(log *slog.Logger, accessLog bool, sheds *gateway.Sheds, next http.Handler) http.Handler {
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
			if fault.Shed != "" {
				sheds.Add(fault.Shed)
			}
			level, msg := slog.LevelInfo, "http"
			switch {
			case sw.status < 500 || sw.status == http.StatusNotImplemented || fault.Expected:
				if !accessLog {
					return
				}
			case sw.status == http.StatusServiceUnavailable:
				level, msg = slog.LevelWarn, "http request unavailable"
			default:
				level, msg = slog.LevelError, "http request failed"
			}
			attrs := []slog.Attr{slog.String("method", r.Method), slog.String("path", r.URL.Path),
				slog.Int("status", sw.status), slog.Duration("elapsed", time.Since(start)),
				slog.String("request_id", RequestIDFrom(ctx))}
			if c := ClientRequestIDFrom(ctx); c != "" {
				attrs = append(attrs, slog.String("client_request_id", c))
			}
			if fault.Cause != "" && level > slog.LevelInfo {
				attrs = append(attrs, slog.String("cause", fault.Cause))
			}
			log.LogAttrs(ctx, level, msg, attrs...)
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
