package gateway

import (
	"context"
	"errors"
	"log/slog"

	"github.com/cmsplatform/cms/pkg/component"
	"github.com/cmsplatform/cms/pkg/errkind"
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

// Unavailable answers 503 (gRPC Unavailable) with Retry-After when err
// says a component cannot answer now: component.ErrUnavailable (down,
// refusing or slower than its deadline) or search.ErrUnavailable (e.g.
// new shards starting), with ReasonOverloaded when the query queue shed it
// (search.ErrOverloaded); else it returns nil. OtherStatus calls it, so
// every group maps these errors here and nowhere else.
func Unavailable(ctx context.Context, err error) error {
	var ue *component.UnavailableError
	switch {
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

// DomainStatus is the one mapping of domain errors to gRPC status (and,
// through the reason table, HTTP status) for every API group: the error's
// errkind decides (400, 404, 422, 413, 412, 403, 501); anything else goes
// to OtherStatus, logged under group.
func DomainStatus(ctx context.Context, log *slog.Logger, group string, err error) error {
	if err == nil {
		return nil
	}
	switch errkind.Of(err) {
	case errkind.Invalid:
		return status.Error(codes.InvalidArgument, err.Error())
	case errkind.NotFound:
		return status.Error(codes.NotFound, err.Error())
	case errkind.Ambiguous:
		return WithReason(codes.InvalidArgument, ReasonUnprocessable, err.Error(), nil)
	case errkind.TooLarge:
		return WithReason(codes.ResourceExhausted, ReasonPayloadTooLarge, err.Error(), nil)
	case errkind.PreconditionFailed:
		return WithReason(codes.FailedPrecondition, ReasonPreconditionFailed, err.Error(), nil)
	case errkind.Forbidden:
		return status.Error(codes.PermissionDenied, err.Error())
	case errkind.Unsupported:
		return status.Error(codes.Unimplemented, err.Error())
	case errkind.Unprocessable:
		return WithReason(codes.InvalidArgument, ReasonUnprocessable, err.Error(), nil)
	case errkind.RangeNotSatisfiable:
		return WithReason(codes.OutOfRange, ReasonRangeNotSatisfiable, err.Error(), nil)
	}
	return OtherStatus(ctx, log, group, err)
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
