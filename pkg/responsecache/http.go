package responsecache

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"

	"github.com/cmsplatform/cms/pkg/etag"
	"github.com/cmsplatform/cms/pkg/tagcache"
)

// MaxHTTPBody bounds the answers the HTTP layer keeps; larger ones pass
// through uncached.
const MaxHTTPBody = 8 << 20

// HTTP returns middleware that answers cached reads directly, without the
// gateway's gRPC hop and JSON encoding: the cached answer of a request is
// the body the handler behind wrote for the same normalized URL (path,
// sorted query, Accept; HTTPKey), stored with the cache tags and index
// version that Serve recorded for its ETag, so the same change events
// evict it, fenced the same way. A hit answers 200 with the stored body,
// or 304 when If-None-Match matches; both carry ETag and CacheControl.
//
// admit decides, per request, whether it may be answered from the cache
// at all, and returns the context to use (the transport authenticates and
// authorizes the caller there): anything it refuses goes to next
// unchanged. Only 200 answers with an ETag of at most MaxHTTPBody bytes
// are kept. Without storage the middleware is next itself.
//
// run, when not nil, runs a miss's call of next (the transport's pool of
// uncached reads, pkg/delivery.ReadPool.Run) with the context it is given
// (the request's, with what the pool adds: its queue deadline); it
// returns when the call did. The answer is then held in memory (up to
// MaxHeldBody) and written after run returned, on the request's
// goroutine.
func (c *Cache) HTTP(admit func(*http.Request) (context.Context, bool), run func(context.Context, func(context.Context))) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		if !c.Enabled() {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx, ok := admit(r)
			if !ok {
				next.ServeHTTP(w, r)
				return
			}
			key := HTTPKey(r)
			if c.serveHTTP(ctx, w, r, key) {
				return
			}
			c.stats.httpMisses.Add(1)
			if run != nil {
				// The answer is held until the run is done and written
				// here, so that a slow client does not hold the worker.
				hw := &heldWriter{ResponseWriter: w}
				rec := &recorder{ResponseWriter: hw, status: http.StatusOK}
				run(r.Context(), func(rctx context.Context) { next.ServeHTTP(rec, r.WithContext(rctx)) })
				hw.done()
				c.storeMiss(ctx, key, w, rec)
				return
			}
			rec := &recorder{ResponseWriter: w, status: http.StatusOK}
			next.ServeHTTP(rec, r)
			c.storeMiss(ctx, key, w, rec)
		})
	}
}

// storeMiss keeps the answer rec recorded for key when it may be kept.
func (c *Cache) storeMiss(ctx context.Context, key string, w http.ResponseWriter, rec *recorder) {
	if rec.status == http.StatusOK && !rec.big && rec.frame != nil {
		c.storeHTTP(ctx, key, w.Header().Get("ETag"), rec.frame)
	}
}

// serveHTTP answers r from the entry of key, if there is one. Its body
// is the length of the Content-Type, the Content-Type and the answer.
func (c *Cache) serveHTTP(ctx context.Context, w http.ResponseWriter, r *http.Request, key string) bool {
	e, ok := c.store.Get(ctx, key, 0)
	if !ok || len(e.Body) <= 1 {
		return false
	}
	ctLen := int(e.Body[0])
	if len(e.Body) < 1+ctLen {
		return false
	}
	h := w.Header()
	h.Set("ETag", e.ETag)
	h.Set("Cache-Control", CacheControl)
	if inm := r.Header.Get("If-None-Match"); inm != "" && etag.Matches(inm, e.ETag) {
		c.stats.httpNotModified.Add(1)
		w.WriteHeader(http.StatusNotModified)
		return true
	}
	c.stats.httpHits.Add(1)
	h.Set("Content-Type", string(e.Body[1:1+ctLen]))
	_, _ = w.Write(e.Body[1+ctLen:])
	return true
}

// storeHTTP keeps frame (the recorder's: length of the Content-Type,
// Content-Type, body) under key with the tags and version Serve recorded
// for tag (nothing when there is no such record: the answer was not
// built by Serve, or its entry is gone already).
func (c *Cache) storeHTTP(ctx context.Context, key, tag string, frame []byte) {
	if tag == "" {
		return
	}
	meta, ok := c.store.Get(ctx, metaKey(tag), 0)
	if !ok || meta.ETag != tag {
		return
	}
	var tags []string
	if len(meta.Body) > 0 {
		tags = strings.Split(string(meta.Body), "\n")
	}
	c.store.PutFramed(ctx, key, frame, tag, meta.At, tags)
}

// HTTPKey is the normalized HTTP request: path, query with sorted keys,
// Accept.
func HTTPKey(r *http.Request) string {
	h := sha256.New()
	h.Write([]byte(r.URL.Path + "?" + r.URL.Query().Encode() + "\x00" + r.Header.Get("Accept")))
	return "delivery:http:" + base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:18])
}

// recorder passes a response through and keeps a 200 body in the frame
// the cache will keep (tagcache.NewFrame: the length of the Content-Type,
// the Content-Type, the body), sized at the first write by Content-Length
// or that write, so that the answer is copied once.
type recorder struct {
	http.ResponseWriter
	status int
	frame  []byte
	size   int // of the body written
	wrote  bool
	big    bool // the body outgrew MaxHTTPBody, or its Content-Type 255 bytes: not cached
}

func (r *recorder) WriteHeader(code int) {
	if !r.wrote {
		r.status, r.wrote = code, true
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	r.wrote = true
	if r.status == http.StatusOK && !r.big {
		if r.frame == nil {
			r.startFrame(len(b))
		}
		if r.size += len(b); r.size > MaxHTTPBody {
			r.big, r.frame = true, nil
		}
		if !r.big {
			r.frame = append(r.frame, b...)
		}
	}
	return r.ResponseWriter.Write(b)
}

// startFrame begins the frame with the Content-Type, room made for the
// Content-Length or else first bytes n.
func (r *recorder) startFrame(n int) {
	h := r.ResponseWriter.Header()
	ct := h.Get("Content-Type")
	if len(ct) > 255 {
		r.big = true
		return
	}
	if cl, err := strconv.Atoi(h.Get("Content-Length")); err == nil && cl > n && cl <= MaxHTTPBody {
		n = cl
	}
	r.frame = append(append(tagcache.NewFrame(1+len(ct)+n), byte(len(ct))), ct...)
}

// Flush keeps streaming responses working through the recorder.
func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
