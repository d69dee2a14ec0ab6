package gateway

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// BodyLimits bound a request body while it is read.
type BodyLimits struct {
	// MaxBytes caps a body (413 beyond it). Routes that stream uploads
	// raise it with RaiseBodyLimit.
	MaxBytes int64
	// MaxDepth caps the nesting of JSON arrays and objects (400 beyond
	// it); 0 means no check. Not applied once a route raised the limit.
	MaxDepth int
	// UploadReadTimeout is the read deadline RaiseBodyLimit gives an upload
	// (counted from the call); 0 keeps the server's ReadTimeout.
	UploadReadTimeout time.Duration
}

// ErrJSONTooDeep is returned while reading a body whose JSON nests deeper
// than BodyLimits.MaxDepth.
var ErrJSONTooDeep = errors.New("the JSON body nests arrays and objects too deeply")

// LimitBody replaces r.Body by a reader enforcing limits while it is read:
// past MaxBytes it returns an *http.MaxBytesError (and the connection is
// closed after the answer, like http.MaxBytesReader does), past MaxDepth an
// error wrapping ErrJSONTooDeep. Nothing is buffered.
func LimitBody(w http.ResponseWriter, r *http.Request, limits BodyLimits) {
	if r.Body == nil || r.Body == http.NoBody {
		return
	}
	r.Body = &limitedBody{rc: r.Body, w: w, limits: limits, max: limits.MaxBytes}
}

// RaiseBodyLimit lets a route that streams its body (multipart uploads)
// read up to n bytes instead of the default limit, without the JSON depth
// check, and extends the read deadline to UploadReadTimeout. It reports
// whether r's body came through LimitBody.
func RaiseBodyLimit(w http.ResponseWriter, r *http.Request, n int64) bool {
	b, ok := r.Body.(*limitedBody)
	if !ok {
		return false
	}
	b.max, b.limits.MaxDepth = n, 0
	if d := b.limits.UploadReadTimeout; d > 0 {
		// Best effort: a writer that cannot set deadlines keeps the
		// server's ReadTimeout.
		_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(d))
	}
	return true
}

// BodyTooLarge reports whether reading r's body hit its limit, and the limit.
func BodyTooLarge(r *http.Request) (int64, bool) {
	if b, ok := r.Body.(*limitedBody); ok && b.over {
		return b.max, true
	}
	return 0, false
}

type limitedBody struct {
	rc     io.ReadCloser
	w      http.ResponseWriter
	limits BodyLimits
	max    int64
	n      int64
	over   bool
	err    error

	// JSON scanner state.
	depth          int
	inString, escd bool
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if rest := b.max - b.n + 1; int64(len(p)) > rest { // one byte more tells "over"
		p = p[:rest]
	}
	n, err := b.rc.Read(p)
	b.n += int64(n)
	if b.n > b.max {
		n -= int(b.n - b.max)
		b.over = true
		b.w.Header().Set("Connection", "close")
		b.err = &http.MaxBytesError{Limit: b.max}
		return n, b.err
	}
	if b.limits.MaxDepth > 0 {
		if i := b.scan(p[:n]); i >= 0 {
			b.err = fmt.Errorf("%w (more than %d levels)", ErrJSONTooDeep, b.limits.MaxDepth)
			return i, b.err
		}
	}
	return n, err
}

// scan follows the nesting of JSON text and returns the offset where it
// exceeds MaxDepth, or -1. Malformed JSON is left to the decoder.
func (b *limitedBody) scan(p []byte) int {
	for i, c := range p {
		switch {
		case b.inString:
			switch {
			case b.escd:
				b.escd = false
			case c == '\\':
				b.escd = true
			case c == '"':
				b.inString = false
			}
		case c == '"':
			b.inString = true
		case c == '[' || c == '{':
			if b.depth++; b.depth > b.limits.MaxDepth {
				return i
			}
		case c == ']' || c == '}':
			b.depth--
		}
	}
	return -1
}

func (b *limitedBody) Close() error { return b.rc.Close() }
