package delivery

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/cmsplatform/cms/pkg/cache"
	"github.com/cmsplatform/cms/pkg/delivery"
	"github.com/cmsplatform/cms/services/internal/gateway"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// Caching and read-your-writes, as seen by clients:
//
//   - Every answer carries a strong ETag (a hash of the operation and the
//     response) and Cache-Control; a matching If-None-Match answers 304.
//   - CacheControl is "public, max-age=0, must-revalidate": browsers and
//     CDNs may keep the body but must revalidate every use, which costs
//     a 304 from our cache. Content therefore never looks stale longer
//     than our own eviction takes (one change event), and a CDN never
//     serves a body it did not revalidate with the caller's credentials.
//   - HeaderMinVersion (X-Cms-Min-Version: a change-tracking version, i.e.
//     the transaction id of a write) makes the request wait until the
//     index shows that version, at most HeaderMaxWait (X-Cms-Max-Wait:
//     milliseconds or a Go duration such as "2s"; default DefaultMaxWait,
//     at most MaxWait); if it is not reached the answer is 503. Cached
//     answers built before that version are not used for such requests.
const (
	CacheControl     = "public, max-age=0, must-revalidate"
	HeaderMinVersion = "x-cms-min-version"
	HeaderMaxWait    = "x-cms-max-wait"
	DefaultMaxWait   = 5 * time.Second
	MaxWait          = 30 * time.Second
)

// cacheTTL is only a safety net: entries are evicted by the change events
// that touch them (Invalidator), not by age.
const cacheTTL = 24 * time.Hour

// serve answers one read. A cached rendering (keyed by the operation and
// the request, i.e. the normalized query) is served when present and new
// enough; otherwise build runs at the index version read before it, and
// its result is stored with the tags build names, fenced by that version
// (cache.Cache.SetAt) so that an invalidation that happened meanwhile is not
// undone by a response rendered from older data.
func serve[T proto.Message](ctx context.Context, s *service, op string, req proto.Message, build func() (T, []string, error)) (T, error) {
	var zero T
	if s.dom == nil {
		return zero, errNoEngine
	}
	// Wait for the asked version first: the branch the read grant is
	// checked against may itself only appear with it.
	md, _ := metadata.FromIncomingContext(ctx)
	minV, err := s.readYourWrites(ctx, md)
	if err != nil {
		return zero, err
	}
	key := cacheKey(op, req)
	if s.cache != nil {
		if e, ok, err := s.cache.Get(ctx, key); err == nil && ok && len(e.Value) >= 8 {
			if int64(binary.BigEndian.Uint64(e.Value)) >= minV {
				if err := answerHeaders(ctx, e.ETag); err != nil {
					return zero, err
				}
				out := zero.ProtoReflect().New().Interface().(T)
				if proto.Unmarshal(e.Value[8:], out) == nil {
					s.stats.hits.Add(1)
					return out, nil
				}
			}
		} else if err != nil {
			s.log.WarnContext(ctx, "delivery: cache get", "error", err)
		}
	}
	s.stats.misses.Add(1)
	builtAt, err := s.dom.Version(ctx)
	if err != nil {
		return zero, s.toStatus(ctx, err)
	}
	out, tags, err := build()
	if err != nil {
		return zero, s.toStatus(ctx, err)
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(out)
	if err != nil {
		return zero, s.toStatus(ctx, err)
	}
	tag := etagOf(op, b, tags)
	if s.cache != nil {
		s.store(ctx, key, b, tag, tags, builtAt)
		s.store(ctx, metaKey(tag), []byte(strings.Join(tags, "\n")), tag, tags, builtAt)
	}
	if err := answerHeaders(ctx, tag); err != nil {
		return zero, err
	}
	return out, nil
}

// store caches a rendering; failures only cost a later miss.
func (s *service) store(ctx context.Context, key string, body []byte, tag string, tags []string, builtAt int64) {
	v := make([]byte, 8, 8+len(body))
	binary.BigEndian.PutUint64(v, uint64(builtAt))
	e := cache.Entry{Value: append(v, body...), ETag: tag}
	var err error
	_, err = s.cache.SetAt(ctx, key, e, tags, cacheTTL, builtAt)
	if err != nil {
		s.log.WarnContext(ctx, "delivery: cache set", "error", err)
	}
}

// answerHeaders sets ETag and Cache-Control and answers 304 when
// If-None-Match matches.
func answerHeaders(ctx context.Context, tag string) error {
	return gateway.Conditional(ctx, tag, "cache-control", CacheControl)
}

// readYourWrites waits for HeaderMinVersion, if given, and returns it (0
// when absent).
func (s *service) readYourWrites(ctx context.Context, md metadata.MD) (int64, error) {
	vs := md.Get(HeaderMinVersion)
	if len(vs) == 0 || strings.TrimSpace(vs[0]) == "" {
		return 0, nil
	}
	minV, err := strconv.ParseInt(strings.TrimSpace(vs[0]), 10, 64)
	if err != nil || minV < 0 {
		return 0, status.Errorf(codes.InvalidArgument, "%s must be a change-tracking version (a transaction id), got %q", HeaderMinVersion, vs[0])
	}
	wait := DefaultMaxWait
	if ws := md.Get(HeaderMaxWait); len(ws) > 0 && strings.TrimSpace(ws[0]) != "" {
		w := strings.TrimSpace(ws[0])
		if ms, err := strconv.ParseInt(w, 10, 64); err == nil && ms >= 0 {
			wait = time.Duration(ms) * time.Millisecond
		} else if d, err := time.ParseDuration(w); err == nil && d >= 0 {
			wait = d
		} else {
			return 0, status.Errorf(codes.InvalidArgument, "%s must be milliseconds or a duration such as 2s, got %q", HeaderMaxWait, ws[0])
		}
	}
	if _, err := s.dom.WaitForVersion(ctx, minV, min(wait, MaxWait)); err != nil {
		if errors.Is(err, delivery.ErrVersionTimeout) {
			// Like every 503: the client may retry shortly.
			_ = grpc.SetHeader(ctx, metadata.Pairs("retry-after", gateway.RetryAfterSeconds))
			return 0, status.Error(codes.Unavailable, err.Error())
		}
		return 0, s.toStatus(ctx, err)
	}
	return minV, nil
}

// cacheKey is the normalized query: the operation and the request's
// deterministic encoding (parameter order and spelling on the URL do not
// matter), hashed.
func cacheKey(op string, req proto.Message) string {
	b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(req)
	h := sha256.New()
	h.Write([]byte(op + "\x00"))
	h.Write(b)
	return "delivery:" + op + ":" + base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:18])
}

// etagOf is a strong validator of one rendering: the first 16 bytes of
// the SHA-256 of the operation, the response's deterministic encoding and
// its cache tags, base64url (22 characters, like meta.etag), quoted. Equal
// renderings get equal tags on every replica, and an ETag names one set
// of cache tags (metaKey).
func etagOf(op string, body []byte, tags []string) string {
	h := sha256.New()
	h.Write([]byte(op + "\x00"))
	h.Write(body)
	h.Write([]byte("\x00" + strings.Join(tags, "\n")))
	return `"` + base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:16]) + `"`
}

// metaKey names the entry that records, for one ETag, the cache tags and
// the index version of a rendering (read by the HTTP fast path).
func metaKey(etag string) string { return "delivery:meta:" + strings.Trim(etag, `"`) }
