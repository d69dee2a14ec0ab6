package responsecache

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/cmsplatform/cms/pkg/cache/memory"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// allocatedPerRun is the bytes run allocates, averaged over n runs.
func allocatedPerRun(n int, run func(i int)) float64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range n {
		run(i)
	}
	runtime.ReadMemStats(&after)
	return float64(after.TotalAlloc-before.TotalAlloc) / float64(n)
}

// TestMissStoresTheAnswerOnce: an uncached read costs one copy of its
// answer in the cache, not one per layer (the rendered encoding, its
// framing with the fence position, the memory cache's own copy; for the
// HTTP layer the recorded body, its framing with the Content-Type and
// the fence). The answer is 256 KiB; what a miss allocates beside its
// answers is small against it.
func TestMissStoresTheAnswerOnce(t *testing.T) {
	const size = 256 << 10
	body := strings.Repeat("x", size)
	m := memory.New(memory.Options{})
	t.Cleanup(func() { _ = m.Close() })
	f := &fixture{c: New(m, nil)}
	ctx := context.Background()
	const n = 20
	// Serve: the build's answer is the caller's; the cache keeps its
	// encoding, one copy.
	msg := wrapperspb.String(body)
	perServe := allocatedPerRun(n, func(i int) {
		if _, _, err := Serve(ctx, f.c, "Op", wrapperspb.String(fmt.Sprint("serve", i)), 0, f,
			func(context.Context) (*wrapperspb.StringValue, []string, error) { return msg, []string{"t"}, nil }); err != nil {
			t.Fatal(err)
		}
	})
	if copies := perServe / size; copies > 1.25 {
		t.Errorf("a Serve miss allocates %.2f times its answer, want about 1", copies)
	}
	// HTTP: the handler writes the answer Serve built (its own
	// allocations are the handler's); the layer keeps one copy, framed.
	h := f.c.HTTP(func(r *http.Request) (context.Context, bool) { return r.Context(), true }, nil)(
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, tag, err := Serve(r.Context(), f.c, "Op", wrapperspb.String(r.URL.Path), 0, f,
				func(context.Context) (*wrapperspb.StringValue, []string, error) { return msg, []string{"t"}, nil })
			if err != nil {
				t.Error(err)
			}
			w.Header().Set("ETag", tag)
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(body)) // as the gateway writes an answer: at once
		}))
	rw := discardWriter{h: http.Header{}}
	perHTTP := allocatedPerRun(n, func(i int) {
		clear(rw.h)
		h.ServeHTTP(rw, httptest.NewRequest(http.MethodGet, fmt.Sprintf("/http/%d", i), nil))
	})
	if f.c.Stats().HTTPMisses != n {
		t.Fatalf("%d HTTP misses, want %d", f.c.Stats().HTTPMisses, n)
	}
	// The handler's answer is 1 copy, its Serve 1 more, so 3 in all when
	// the HTTP layer keeps one.
	if copies := perHTTP / size; copies > 3.25 {
		t.Errorf("an HTTP miss allocates %.2f times its answer, want about 3 (handler 1, Serve 1, HTTP layer 1)", copies)
	}
	t.Logf("a miss allocates %.2f times its answer in Serve, %.2f through the HTTP layer", perServe/size, perHTTP/size)
}

// discardWriter is a ResponseWriter that keeps nothing but its header.
type discardWriter struct{ h http.Header }

func (d discardWriter) Header() http.Header         { return d.h }
func (d discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (d discardWriter) WriteHeader(int)             {}
