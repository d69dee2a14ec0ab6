package gateway

import (
	"context"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// Conditional answers a conditional GET: it sends tag as the ETag (with
// the extra header pairs, e.g. "cache-control", "…") and returns
// NotModified (304) when the request's If-None-Match names tag or is "*".
// An empty tag sends nothing and never matches.
func Conditional(ctx context.Context, tag string, headerPairs ...string) error {
	if tag == "" {
		return nil
	}
	_ = grpc.SetHeader(ctx, metadata.Pairs(append([]string{"etag", tag}, headerPairs...)...))
	md, _ := metadata.FromIncomingContext(ctx)
	for _, h := range md.Get("if-none-match") {
		if ETagMatches(h, tag) {
			return NotModified()
		}
	}
	return nil
}

// ETagMatches implements the weak comparison of If-None-Match (RFC 9110
// 13.1.2): header is a list of tags, W/ is ignored, "*" matches anything.
func ETagMatches(header, tag string) bool {
	for c := range strings.SplitSeq(header, ",") {
		c = strings.TrimPrefix(strings.TrimSpace(c), "W/")
		if c == "*" || c == tag {
			return true
		}
	}
	return false
}
