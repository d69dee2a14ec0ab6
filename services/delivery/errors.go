package delivery

import (
	"context"
	"errors"
	"log/slog"

	"github.com/cmsplatform/cms/pkg/delivery"
	"github.com/cmsplatform/cms/pkg/search"
	"github.com/cmsplatform/cms/services/internal/gateway"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// errNoEngine answers when the group runs without a search engine.
var errNoEngine = status.Error(codes.Unavailable, "delivery: no search index configured")

// toStatus is the one mapping of domain errors to gRPC status (and,
// through the gateway's reason table, HTTP status). Unknown errors become
// Internal with a generic message; the cause goes to the log.
func (s *service) toStatus(ctx context.Context, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, delivery.ErrAmbiguous):
		return gateway.WithReason(codes.InvalidArgument, gateway.ReasonUnprocessable, err.Error(), nil) // 422
	case errors.Is(err, delivery.ErrNotFound):
		return status.Error(codes.NotFound, err.Error())
	case errors.Is(err, delivery.ErrInvalidArgument):
		return status.Error(codes.InvalidArgument, err.Error())
	case errors.Is(err, delivery.ErrUnsupported):
		return status.Error(codes.Unimplemented, err.Error()) // 501
	case errors.Is(err, search.ErrUnavailable):
		// The index is starting (e.g. new shards); clients may retry.
		_ = grpc.SetHeader(ctx, metadata.Pairs("retry-after", "1"))
		return status.Error(codes.Unavailable, "the search index is not ready yet; retry shortly") // 503
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, "request canceled")
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, "deadline exceeded")
	}
	if _, ok := status.FromError(err); ok && status.Code(err) != codes.Unknown {
		return err // already a status (e.g. NOT_MODIFIED)
	}
	s.log.LogAttrs(ctx, slog.LevelError, "delivery: internal error", slog.String("error", err.Error()))
	return status.Error(codes.Internal, "internal error")
}

// errNotModified answers a matching If-None-Match with 304.
func errNotModified() error {
	return gateway.WithReason(codes.FailedPrecondition, gateway.ReasonNotModified, "not modified", nil)
}
