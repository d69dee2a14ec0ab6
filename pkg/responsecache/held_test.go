package responsecache

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cmsplatform/cms/pkg/cache/memory"
)

// spyWriter counts the writes that reached the connection.
type spyWriter struct {
	*httptest.ResponseRecorder
	writes int
}

func (s *spyWriter) WriteHeader(code int) { s.writes++; s.ResponseRecorder.WriteHeader(code) }
func (s *spyWriter) Write(b []byte) (int, error) {
	s.writes++
	return s.ResponseRecorder.Write(b)
}

// TestMissRunElsewhereIsHeld: a miss that run runs (on a worker of the
// read pool) writes nothing on the connection while it runs; its status,
// headers and body are written once run returned. An answer beyond MaxHeldBody, and one that
// flushes, is written through while it runs. The handler gets the context
// run gives it (the pool's queue deadline).
func TestMissRunElsewhereIsHeld(t *testing.T) {
	m := memory.New(memory.Options{})
	t.Cleanup(func() { _ = m.Close() })
	f := &fixture{c: New(m, nil)}
	for _, c := range []struct {
		name    string
		size    int
		flush   bool
		through bool
	}{
		{"small", 5 << 10, false, false},
		{"large", MaxHeldBody + 1, false, true},
		{"flushed", 100, true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			spy := &spyWriter{ResponseRecorder: httptest.NewRecorder()}
			body := strings.Repeat("y", c.size)
			during := -1
			type runKey struct{}
			run := func(ctx context.Context, fn func(context.Context)) {
				fn(context.WithValue(ctx, runKey{}, "run"))
				during = spy.writes
			}
			h := f.c.HTTP(func(r *http.Request) (context.Context, bool) { return r.Context(), true }, run)(
				http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.Context().Value(runKey{}) != "run" {
						t.Error("the handler did not get the context run gave it")
					}
					w.Header().Set("Content-Type", "text/plain")
					w.WriteHeader(http.StatusTeapot)
					for i := 0; i < len(body); i += 4096 {
						_, _ = w.Write([]byte(body[i:min(i+4096, len(body))]))
						if c.flush {
							w.(http.Flusher).Flush()
						}
					}
				}))
			h.ServeHTTP(spy, httptest.NewRequest(http.MethodGet, "/held/"+c.name, nil))
			if c.through != (during > 0) {
				t.Errorf("%d writes reached the connection while the run ran, want them held: %v", during, !c.through)
			}
			if spy.Code != http.StatusTeapot || spy.Body.String() != body || spy.Header().Get("Content-Type") != "text/plain" {
				t.Errorf("answer %d %q, %d bytes; want %d, text/plain, %d bytes", spy.Code, spy.Header().Get("Content-Type"),
					spy.Body.Len(), http.StatusTeapot, len(body))
			}
		})
	}
}
