package index

import (
	"context"
	"errors"
	"log/slog"

	"github.com/cmsplatform/cms/pkg/indexquery"
	"github.com/cmsplatform/cms/pkg/search"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// toStatus is the one mapping of domain errors to gRPC status (and so to
// HTTP status through the gateway). Unknown errors become Internal with a
// generic message; the cause goes to the log.
func (s *service) toStatus(ctx context.Context, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, indexquery.ErrInvalid), errors.Is(err, search.ErrInvalidQuery):
		return status.Error(codes.InvalidArgument, err.Error()) // 400
	case errors.Is(err, indexquery.ErrUnsupported):
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
	s.log.LogAttrs(ctx, slog.LevelError, "index: internal error", slog.String("error", err.Error()))
	return status.Error(codes.Internal, "internal error")
}
