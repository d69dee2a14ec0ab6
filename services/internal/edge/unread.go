package edge

import (
	"errors"
	"io"
	"net/http"
	"sync/atomic"
)

// CloseUnreadBodies closes the connection after an answer that starts
// before the request's body was read to its end: a refusal on the headers
// (401, 403, 429, 413) or any other answer that needs no body. Without it
// net/http reads the rest of a body of up to 256 KiB before it sends the
// answer, so a client that declares a body and stalls (Content-Length:
// 100000, 12 bytes sent) would wait for its 401 until the read timeout.
// A body read to its end keeps the connection alive as before.
func CloseUnreadBodies(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		b := &trackedBody{ReadCloser: r.Body}
		r.Body = b
		next.ServeHTTP(&unreadWriter{ResponseWriter: w, body: b, declared: r.ContentLength}, r)
	})
}

// trackedBody counts what the handlers read of a request body.
type trackedBody struct {
	io.ReadCloser
	n   atomic.Int64
	eof atomic.Bool
}

func (b *trackedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	if errors.Is(err, io.EOF) {
		b.eof.Store(true)
	}
	return n, err
}

// unreadWriter adds Connection: close to an answer started while the body
// is unread.
type unreadWriter struct {
	http.ResponseWriter
	body     *trackedBody
	declared int64 // Content-Length, -1 when chunked
	started  bool
}

func (w *unreadWriter) start() {
	if w.started {
		return
	}
	w.started = true
	if !w.body.eof.Load() && (w.declared < 0 || w.body.n.Load() < w.declared) {
		w.Header().Set("Connection", "close")
	}
}

func (w *unreadWriter) WriteHeader(code int) {
	if code >= 200 {
		w.start()
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *unreadWriter) Write(b []byte) (int, error) {
	w.start()
	return w.ResponseWriter.Write(b)
}

// Flush implements http.Flusher.
func (w *unreadWriter) Flush() {
	w.start()
	http.NewResponseController(w.ResponseWriter).Flush() //nolint:errcheck // best effort, like http.Flusher
}

// Unwrap lets http.ResponseController reach the connection.
func (w *unreadWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
