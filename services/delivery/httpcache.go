package delivery

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"net/http"
	"strings"

	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/pkg/cache"
	deliveryv1 "github.com/cmsplatform/cms/proto/gen/go/cms/delivery/v1"
	"github.com/cmsplatform/cms/services/internal/gateway"
	"github.com/cmsplatform/cms/services/internal/interceptors"
)

// HTTPCache returns middleware for the HTTP server that answers cached
// Delivery GETs directly, without the gateway's gRPC hop and JSON
// encoding: the cached answer of a request is the JSON the gateway wrote
// for the same normalized URL (path, sorted query, Accept), stored with
// the cache tags and index version the gRPC service recorded for its ETag
// (metaKey), so the same change events evict it, fenced the same way.
//
// It serves only what the normal path would serve the same caller: it
// authenticates with authn (the authenticator of the auth interceptor)
// and checks read access to the branch; anything else (no or bad
// credentials, X-CmsApi-Username, X-Cms-Min-Version, other methods or
// paths, misses) goes to next unchanged, which answers as usual. Hits skip
// the gRPC interceptors (request logging and metrics).
func (g *Group) HTTPCache(authn auth.Authenticator) func(http.Handler) http.Handler {
	s := g.api
	return func(next http.Handler) http.Handler {
		if s.dom == nil || s.cache == nil || authn == nil {
			return next
		}
		// Every cacheable path is a branch-scoped Delivery read: the
		// declared access of List (READ on its branch) is theirs.
		az := &interceptors.Authz{Resolvers: g.BranchResolvers()}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			branch, ok := cacheablePath(r)
			if !ok {
				next.ServeHTTP(w, r)
				return
			}
			p, err := auth.Authorize(r.Context(), authn, r.Header.Get("Authorization"), "")
			if err != nil {
				next.ServeHTTP(w, r)
				return
			}
			ctx := auth.WithPrincipal(r.Context(), p)
			if err := az.Check(ctx, deliveryv1.DeliveryService_List_FullMethodName, &deliveryv1.ListRequest{Branch: branch}); err != nil {
				next.ServeHTTP(w, r)
				return
			}
			key := httpKey(r)
			if e, ok, err := s.cache.Get(ctx, key); err == nil && ok && len(e.Value) > 9 {
				ctLen := int(e.Value[8])
				if len(e.Value) >= 9+ctLen {
					h := w.Header()
					h.Set("ETag", e.ETag)
					h.Set("Cache-Control", CacheControl)
					if gateway.ETagMatches(r.Header.Get("If-None-Match"), e.ETag) && r.Header.Get("If-None-Match") != "" {
						s.stats.httpNotModified.Add(1)
						w.WriteHeader(http.StatusNotModified)
						return
					}
					s.stats.httpHits.Add(1)
					h.Set("Content-Type", string(e.Value[9:9+ctLen]))
					_, _ = w.Write(e.Value[9+ctLen:])
					return
				}
			}
			s.stats.httpMisses.Add(1)
			rec := &recorder{ResponseWriter: w, status: http.StatusOK}
			next.ServeHTTP(rec, r)
			etag := w.Header().Get("ETag")
			ct := w.Header().Get("Content-Type")
			if rec.status != http.StatusOK || rec.big || etag == "" || len(ct) > 255 {
				return
			}
			meta, ok, err := s.cache.Get(ctx, metaKey(etag))
			if err != nil || !ok || len(meta.Value) < 8 || meta.ETag != etag {
				return
			}
			builtAt := int64(binary.BigEndian.Uint64(meta.Value))
			var tags []string
			if len(meta.Value) > 8 {
				tags = strings.Split(string(meta.Value[8:]), "\n")
			}
			v := make([]byte, 9, 9+len(ct)+rec.body.Len())
			binary.BigEndian.PutUint64(v, uint64(builtAt))
			v[8] = byte(len(ct))
			v = append(append(v, ct...), rec.body.Bytes()...)
			if _, err := s.cache.SetAt(ctx, key, cache.Entry{Value: v, ETag: etag}, tags, cacheTTL, builtAt); err != nil {
				s.log.WarnContext(ctx, "delivery: http cache set", "error", err)
			}
		})
	}
}

// cacheablePath reports whether r may be answered from the HTTP cache and
// returns its branch parameter. The branch list is not: it depends on the
// caller's grants, which the URL does not name; nor are the files of
// binary proxy objects, streamed and validated by their content hash.
func cacheablePath(r *http.Request) (string, bool) {
	if r.Method != http.MethodGet || r.Header.Get(HeaderMinVersion) != "" || r.Header.Get("X-CmsApi-Username") != "" {
		return "", false
	}
	rest, ok := strings.CutPrefix(r.URL.Path, BasePath+"/branches")
	if !ok {
		return "", false
	}
	rest, ok = strings.CutPrefix(rest, "/")
	if !ok || rest == "" {
		return "", false
	}
	branch, sub, _ := strings.Cut(rest, "/")
	if strings.HasPrefix(sub, "files/") || strings.HasPrefix(sub, "thumbnails/") {
		return "", false // streamed binaries: never copied into the cache
	}
	return branch, true
}

// httpKey is the normalized HTTP request: path, query with sorted keys,
// Accept.
func httpKey(r *http.Request) string {
	h := sha256.New()
	h.Write([]byte(r.URL.Path + "?" + r.URL.Query().Encode() + "\x00" + r.Header.Get("Accept")))
	return "delivery:http:" + base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:18])
}

// recorder passes a response through and keeps a copy of a 200 body.
type recorder struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
	wrote  bool
	big    bool // the body outgrew maxHTTPBody: not cached
}

// maxHTTPBody bounds the answers the HTTP cache keeps.
const maxHTTPBody = 8 << 20

func (r *recorder) WriteHeader(code int) {
	if !r.wrote {
		r.status, r.wrote = code, true
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	r.wrote = true
	if r.status == http.StatusOK && !r.big {
		if r.body.Len()+len(b) > maxHTTPBody {
			r.big = true
		} else {
			r.body.Write(b)
		}
	}
	return r.ResponseWriter.Write(b)
}

// Flush keeps streaming responses working through the recorder.
func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
