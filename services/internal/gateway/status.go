package gateway

import (
	"context"
	"errors"
	"log/slog"

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

// SearchUnavailable answers 503 with Retry-After when err says the search
// index cannot answer yet (e.g. new shards starting), else returns nil.
func SearchUnavailable(ctx context.Context, err error) error {
	if !errors.Is(err, search.ErrUnavailable) {
		return nil
	}
	_ = grpc.SetHeader(ctx, metadata.Pairs("retry-after", "1"))
	return status.Error(codes.Unavailable, "the search index is not ready yet; retry shortly")
}

// OtherStatus maps what no domain error matched: cancellation and
// deadlines, errors that already are a status (e.g. NotModified), and
// anything else as Internal with a generic message, the cause logged
// under group.
func OtherStatus(ctx context.Context, log *slog.Logger, group string, err error) error {
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
