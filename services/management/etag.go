package management

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
)

// etagOf is a strong validator of a response: the first 16 bytes of the
// SHA-256 of its deterministic protobuf encoding, base64url (22 characters,
// like Delivery's meta.etag), quoted. It changes whenever any returned field
// changes, inherited values and paging tokens included.
func etagOf(m proto.Message) string {
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return `"` + base64.RawURLEncoding.EncodeToString(sum[:16]) + `"`
}

// conditional sets the ETag of resp and returns errNotModified when the
// request's If-None-Match names it (or is "*"), else resp.
func conditional[T proto.Message](ctx context.Context, resp T) (T, error) {
	tag := etagOf(resp)
	if tag == "" {
		return resp, nil
	}
	_ = grpc.SetHeader(ctx, metadata.Pairs("etag", tag))
	md, _ := metadata.FromIncomingContext(ctx)
	for _, h := range md.Get("if-none-match") {
		if etagMatches(h, tag) {
			var zero T
			return zero, errNotModified()
		}
	}
	return resp, nil
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
