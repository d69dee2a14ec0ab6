package responsecache

import "net/http"

// MaxHeldBody bounds the answer a miss run elsewhere (HTTP's run) keeps in
// memory until it is done; a larger one is written through as it comes.
const MaxHeldBody = 1 << 20

// heldWriter keeps the status and body of an answer built on another
// goroutine (a worker of the transport's read pool) until done writes
// them on the connection's goroutine: a client that reads slowly holds
// its own connection, not the worker. An answer beyond MaxHeldBody, or one
// that flushes, is written through from then on.
type heldWriter struct {
	http.ResponseWriter
	status  int
	body    []byte
	through bool
}

func (h *heldWriter) WriteHeader(code int) {
	if h.through {
		h.ResponseWriter.WriteHeader(code)
		return
	}
	if h.status == 0 {
		h.status = code
	}
}

func (h *heldWriter) Write(b []byte) (int, error) {
	if !h.through && len(h.body)+len(b) > MaxHeldBody {
		if err := h.release(); err != nil {
			return 0, err
		}
	}
	if h.through {
		return h.ResponseWriter.Write(b)
	}
	if h.status == 0 {
		h.status = http.StatusOK
	}
	h.body = append(h.body, b...)
	return len(b), nil
}

// Flush writes what is held and flushes: a streamed answer streams.
func (h *heldWriter) Flush() {
	_ = h.release()
	if f, ok := h.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// release writes what is held and passes everything after through.
func (h *heldWriter) release() error {
	if h.through {
		return nil
	}
	h.through = true
	if h.status != 0 {
		h.ResponseWriter.WriteHeader(h.status)
	}
	body := h.body
	h.body = nil
	if len(body) == 0 {
		return nil
	}
	_, err := h.ResponseWriter.Write(body)
	return err
}

// done writes what is still held (on the connection's goroutine).
func (h *heldWriter) done() { _ = h.release() }
