package management

import (
	"context"
	"strings"

	"github.com/cmsplatform/cms/pkg/content"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// If-Match on writes (RFC 9110 13.1.1). Updates and deletes of one object,
// branch or comment take the ETag its plain GET returns (no query
// parameters: GET /branches/{b}/objects/{id}, /branches/{id},
// /comments/{id}); a different current ETag answers 412. "*" requires the
// resource to exist and not be deleted. The comparison is strong (a W/ tag
// never matches) and happens inside the write's store transaction
// (content.Precondition), so two clients racing with the same tag cannot
// both win. PATCH and DELETE /branches/{b}/objects with If-Match must name
// exactly one object (400 otherwise); creates (POST) refuse If-Match (400):
// there is no current representation to compare with.

// ifMatch returns the request's If-Match tags, whether it was "*", and
// whether the header was sent at all.
func ifMatch(ctx context.Context) (tags []string, star, sent bool) {
	md, _ := metadata.FromIncomingContext(ctx)
	for _, h := range md.Get("if-match") {
		sent = true
		for c := range strings.SplitSeq(h, ",") {
			switch c = strings.TrimSpace(c); c {
			case "":
			case "*":
				star = true
			default:
				tags = append(tags, c)
			}
		}
	}
	return tags, star, sent
}

// preconditionOf turns If-Match into a content precondition comparing
// tagOf(current) with the tags; nil when the header is absent.
func preconditionOf[T any](ctx context.Context, tagOf func(T) string) *content.Precondition[T] {
	tags, star, sent := ifMatch(ctx)
	switch {
	case !sent:
		return nil
	case star:
		return &content.Precondition[T]{}
	}
	return &content.Precondition[T]{Match: func(cur T) bool {
		tag := tagOf(cur)
		for _, t := range tags {
			if t == tag && tag != "" {
				return true
			}
		}
		return false
	}}
}

// objectIfMatch is If-Match for an object or branch write: the ETag of its
// GET (etagOf over the wire form and Version, as GetObject and GetBranch).
func objectIfMatch(ctx context.Context) *content.Precondition[content.Object] {
	return preconditionOf(ctx, func(o content.Object) string {
		out, err := toObject(o)
		if err != nil {
			return ""
		}
		return etagOf(out, o.Version)
	})
}

// commentIfMatch is If-Match for a comment write: the ETag of GetComment.
func commentIfMatch(ctx context.Context) *content.Precondition[content.Comment] {
	return preconditionOf(ctx, func(c content.Comment) string { return etagOf(commentToProto(c)) })
}

// conditionalWrite returns change with the request's If-Match.
func conditionalWrite(ctx context.Context, comment string) content.Change {
	ch := change(ctx, comment)
	ch.IfMatch = objectIfMatch(ctx)
	return ch
}

// refuseIfMatch answers 400 when a create carries If-Match: ignoring it
// would silently drop the client's condition.
func refuseIfMatch(ctx context.Context) error {
	if _, _, sent := ifMatch(ctx); sent {
		return status.Error(codes.InvalidArgument,
			"If-Match is not supported when creating: send it on PATCH or DELETE of one object, branch or comment")
	}
	return nil
}

// conditionalActor returns commentActor with the request's If-Match.
func conditionalActor(ctx context.Context) content.Actor {
	a := commentActor(ctx)
	a.IfMatch = commentIfMatch(ctx)
	return a
}
