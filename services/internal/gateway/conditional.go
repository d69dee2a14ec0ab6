package gateway

import (
	"context"

	"github.com/cmsplatform/cms/pkg/etag"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// Conditional answers a conditional GET: it sends tag as the ETag (with
// the extra header pairs, e.g. "cache-control", "…") and returns
// NotModified (304) when the request's If-None-Match names tag or is "*".
// An empty tag sends nothing and never matches. The comparison is
// pkg/etag.Matches, also used by Delivery's HTTP cache.
func Conditional(ctx context.Context, tag string, headerPairs ...string) error {
	if tag == "" {
		return nil
	}
	_ = grpc.SetHeader(ctx, metadata.Pairs(append([]string{"etag", tag}, headerPairs...)...))
	// The one header, not a copy of all of them (FromIncomingContext).
	for _, h := range metadata.ValueFromIncomingContext(ctx, "if-none-match") {
		if etag.Matches(h, tag) {
			return NotModified()
		}
	}
	return nil
}
