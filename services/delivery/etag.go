package delivery

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"strings"
	"time"

	"github.com/cmsplatform/cms/pkg/cache"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
)

// cacheTTL bounds how long a rendered response stays cached; entries are
// keyed by the index version, so they are never served stale, only
// unreachable once the index moves on.
const cacheTTL = 10 * time.Minute

// serve answers one read: every Delivery response is a function of the
// index's change-tracking version and the request, so the ETag is a hash
// of both, known before any work. A matching If-None-Match answers 304 at
// once; a cached rendering is served when present; otherwise build runs
// and its result is cached under the ETag.
func serve[T proto.Message](ctx context.Context, s *service, op string, req proto.Message, branch string, build func() (T, error)) (T, error) {
	var zero T
	if s.dom == nil {
		return zero, errNoEngine
	}
	v, err := s.dom.Version(ctx)
	if err != nil {
		return zero, s.toStatus(ctx, err)
	}
	tag := etagOf(op, v, req)
	_ = grpc.SetHeader(ctx, metadata.Pairs("etag", tag))
	md, _ := metadata.FromIncomingContext(ctx)
	for _, h := range md.Get("if-none-match") {
		if etagMatches(h, tag) {
			return zero, errNotModified()
		}
	}
	key := "delivery:" + strings.Trim(tag, `"`)
	if s.cache != nil {
		if e, ok, err := s.cache.Get(ctx, key); err == nil && ok {
			out := zero.ProtoReflect().New().Interface().(T)
			if proto.Unmarshal(e.Value, out) == nil {
				return out, nil
			}
		}
	}
	out, err := build()
	if err != nil {
		return zero, s.toStatus(ctx, err)
	}
	if s.cache != nil {
		if b, err := proto.Marshal(out); err == nil {
			tags := []string{"delivery"}
			if branch != "" {
				tags = append(tags, "branch:"+branch)
			}
			if err := s.cache.Set(ctx, key, cache.Entry{Value: b, ETag: tag}, tags, cacheTTL); err != nil {
				s.log.WarnContext(ctx, "delivery: cache set", "error", err)
			}
		}
	}
	return out, nil
}

// etagOf is a strong validator: the first 16 bytes of the SHA-256 of the
// operation, the index version and the request's deterministic encoding,
// base64url (22 characters, like meta.etag), quoted.
func etagOf(op string, version int64, req proto.Message) string {
	b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(req)
	h := sha256.New()
	h.Write([]byte(op + "\x00" + strconv.FormatInt(version, 10) + "\x00"))
	h.Write(b)
	return `"` + base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:16]) + `"`
}

// etagMatches implements the weak comparison of If-None-Match (RFC 9110
// 13.1.2): a list of tags, W/ ignored, "*" matches anything.
func etagMatches(header, tag string) bool {
	for c := range strings.SplitSeq(header, ",") {
		c = strings.TrimPrefix(strings.TrimSpace(c), "W/")
		if c == "*" || c == tag {
			return true
		}
	}
	return false
}
