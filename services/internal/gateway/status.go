package gateway

import (
	"context"
	"errors"
	"log/slog"
	"regexp"
	"strconv"
	"time"

	"github.com/cmsplatform/cms/pkg/component"
	"github.com/cmsplatform/cms/pkg/errkind"
	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/search"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// The parts of the groups' error mappings (each group's toStatus) that
// are the same everywhere.

// NotModified answers a matching If-None-Match with 304.
func NotModified() error {
	return WithReason(codes.FailedPrecondition, ReasonNotModified, "not modified", nil)
}

// RetryAfterSeconds is the Retry-After of a 503 for a component that is
// unavailable: long enough for a load balancer to pick another replica,
// short enough that a client retries soon after the component returns.
const RetryAfterSeconds = "1"

// ParkedRetryAfterSeconds is the Retry-After of a 503 for a parked
// transaction: it stays missing until it is retried (an operator's `cms
// indexer retry`, or the indexer's own retry when a component recovers).
const ParkedRetryAfterSeconds = "10"

// Unavailable answers 503 (gRPC Unavailable) with Retry-After when err
// says a component cannot answer now: component.ErrUnavailable (down,
// refusing or slower than its deadline) or search.ErrUnavailable (e.g.
// new shards starting); when a read-your-writes request asked for a
// version that includes a parked transaction (indexdoc.ErrParked: the
// message names it; Retry-After ParkedRetryAfterSeconds); with
// ReasonOverloaded when the query queue shed it (search.ErrOverloaded);
// else it returns nil. OtherStatus calls it, so
// every group maps these errors here and nowhere else.
func Unavailable(ctx context.Context, err error) error {
	var ue *component.UnavailableError
	var pe *indexdoc.ParkedError
	switch {
	case errors.As(err, &pe):
		return RetryAfter(ctx, ParkedRetryAfterSeconds, codes.Unavailable, ClientDetail(pe))
	case errors.Is(err, search.ErrOverloaded):
		return Overloaded(ctx, RetryAfterSeconds, "too many queries are waiting for the search engine; retry shortly")
	case errors.As(err, &ue):
		return RetryAfter(ctx, RetryAfterSeconds, codes.Unavailable, ue.Component+" is unavailable; retry shortly")
	case errors.Is(err, search.ErrUnavailable):
		return RetryAfter(ctx, RetryAfterSeconds, codes.Unavailable, "the search index is not ready yet; retry shortly")
	}
	return nil
}

// RetryAfter is the status code with msg, telling the client to retry
// after seconds (the Retry-After header of the HTTP answer).
func RetryAfter(ctx context.Context, seconds string, code codes.Code, msg string) error {
	_ = grpc.SetHeader(ctx, metadata.Pairs("retry-after", seconds))
	return status.Error(code, msg)
}

// internalPrefix is the name of one of this platform's components as error
// texts put it before their parts ("delivery: not found: …", "search:
// invalid query: …"): meaningful in a log, noise (and a view of the
// internals) to an HTTP client.
var internalPrefix = regexp.MustCompile(`(^|: )(blobs|bleve|changes|codegen|content|delivery|elastic|elasticsearch|indexdoc|indexing|indexquery|indexwriter|livechanges|nats|outbox|postgres|rendering|responsecache|search|sqlite|store|stylesheets|textmatch|webhooks): `)

// ClientDetail is the text of err as a client reads it in a
// ProblemDetails' detail: what happened, without the internal component
// names its parts start with ("delivery: not found: branch \"9\"" →
// "not found: branch \"9\"") and without the kind label that only repeats
// the status (errkind.TrimLabel: "invalid argument: filter: …" →
// "filter: …"). Logs keep err itself.
func ClientDetail(err error) string {
	s := err.Error()
	for {
		t := internalPrefix.ReplaceAllString(s, "$1")
		if t == s {
			return errkind.TrimLabel(s)
		}
		s = t
	}
}

// ValueFielder is an invalid value that names its field (pkg/content's
// ValueError): the attribute, and when known the language and variant.
// DomainStatus puts them into the ProblemDetails members attribute,
// language and variant, so a client shows the error at its field.
type ValueFielder interface {
	ValueField() (attribute int64, language, variant *int64)
}

// ValuePositioner is an invalid value that also knows its position among
// the rows of its attribute, language and variant (a multi-valued
// attribute's sortReverse); DomainStatus puts it into the member
// sortReverse.
type ValuePositioner interface {
	ValuePosition() (sortReverse int64, ok bool)
}

// valueFieldMetadata is the ErrorInfo metadata of err's field, or nil.
func valueFieldMetadata(err error) map[string]string {
	var vf ValueFielder
	if !errors.As(err, &vf) {
		return nil
	}
	a, l, v := vf.ValueField()
	md := map[string]string{"attribute": strconv.FormatInt(a, 10)}
	if l != nil {
		md["language"] = strconv.FormatInt(*l, 10)
	}
	if v != nil {
		md["variant"] = strconv.FormatInt(*v, 10)
	}
	var vp ValuePositioner
	if errors.As(err, &vp) {
		if pos, ok := vp.ValuePosition(); ok {
			md["sortReverse"] = strconv.FormatInt(pos, 10)
		}
	}
	return md
}

// DomainStatus is the one mapping of domain errors to gRPC status (and,
// through the reason table, HTTP status) for every API group: the error's
// errkind decides (400, 404, 422, 413, 412, 403, 501, 429); anything else goes
// to OtherStatus, logged under group.
func DomainStatus(ctx context.Context, log *slog.Logger, group string, err error) error {
	if err == nil {
		return nil
	}
	detail := ClientDetail(err)
	switch errkind.Of(err) {
	case errkind.Invalid:
		if md := valueFieldMetadata(err); md != nil {
			// No reason: the answer stays a plain 400 (type about:blank).
			return WithReason(codes.InvalidArgument, "", detail, md)
		}
		return status.Error(codes.InvalidArgument, detail)
	case errkind.NotFound:
		return status.Error(codes.NotFound, detail)
	case errkind.Ambiguous:
		return WithReason(codes.InvalidArgument, ReasonUnprocessable, detail, nil)
	case errkind.TooLarge:
		return WithReason(codes.ResourceExhausted, ReasonPayloadTooLarge, detail, nil)
	case errkind.PreconditionFailed:
		return WithReason(codes.FailedPrecondition, ReasonPreconditionFailed, detail, nil)
	case errkind.Forbidden:
		return status.Error(codes.PermissionDenied, detail)
	case errkind.Unsupported:
		return status.Error(codes.Unimplemented, detail)
	case errkind.Unprocessable:
		return WithReason(codes.InvalidArgument, ReasonUnprocessable, detail, nil)
	case errkind.RangeNotSatisfiable:
		return WithReason(codes.OutOfRange, ReasonRangeNotSatisfiable, detail, nil)
	case errkind.TooMany:
		return TooMany(ctx, err)
	}
	return OtherStatus(ctx, log, group, err)
}

// TooMany answers an error of kind errkind.TooMany (a caller at one of
// its per-user caps, e.g. pkg/fairshare.LimitError) with 429 (gRPC
// ResourceExhausted, reason TOO_MANY_REQUESTS), Retry-After (the error's
// RetryAfter, at least 1 s) and the cap's setting in the ProblemDetails'
// "limit" member. DomainStatus calls it; a group that maps an error
// itself (a stream refused before it starts) calls it too.
func TooMany(ctx context.Context, err error) error {
	after, limit := time.Second, ""
	var ra interface{ RetryAfter() time.Duration }
	if errors.As(err, &ra) && ra.RetryAfter() > after {
		after = ra.RetryAfter()
	}
	var ln interface{ LimitName() string }
	if errors.As(err, &ln) {
		limit = ln.LimitName()
	}
	_ = grpc.SetHeader(ctx, metadata.Pairs("retry-after", strconv.Itoa(int((after+time.Second-1)/time.Second))))
	var md map[string]string
	if limit != "" {
		md = map[string]string{"limit": limit}
	}
	return WithReason(codes.ResourceExhausted, ReasonTooManyRequests, err.Error(), md)
}

// OtherStatus maps what no domain error matched: an unavailable component
// (Unavailable: 503 + Retry-After), cancellation and deadlines, errors that already are a status (e.g. NotModified), and
// anything else as Internal with a generic message, the cause logged
// under group.
func OtherStatus(ctx context.Context, log *slog.Logger, group string, err error) error {
	if st := Unavailable(ctx, err); st != nil {
		if !errors.Is(err, search.ErrOverloaded) { // shed: counted and summed up, not logged one by one
			log.LogAttrs(ctx, slog.LevelWarn, group+": component unavailable", slog.String("error", err.Error()))
		}
		return st
	}
	switch {
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, "request canceled")
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, "deadline exceeded")
	}
	if _, ok := status.FromError(err); ok && status.Code(err) != codes.Unknown {
		return err
	}
	log.LogAttrs(ctx, slog.LevelError, group+": internal error", slog.String("error", err.Error()))
	return status.Error(codes.Internal, "internal error")
}
