package management

import (
	"context"
	"errors"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/params"
	"github.com/cmsplatform/cms/pkg/store"
	"github.com/cmsplatform/cms/services/internal/gateway"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// toStatus is the one mapping of domain errors to gRPC status (and, through
// the gateway's reason table, HTTP status). Unknown errors become Internal
// with a generic message; the cause goes to the log.
func (s *service) toStatus(ctx context.Context, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, content.ErrAmbiguous):
		return gateway.WithReason(codes.InvalidArgument, gateway.ReasonUnprocessable, err.Error(), nil) // 422
	case errors.Is(err, content.ErrNotFound):
		return status.Error(codes.NotFound, err.Error()) // 404
	case errors.Is(err, content.ErrTooLarge):
		return gateway.WithReason(codes.ResourceExhausted, gateway.ReasonPayloadTooLarge, err.Error(), nil) // 413
	case errors.Is(err, content.ErrInvalid), errors.Is(err, params.ErrInvalid), errors.Is(err, store.ErrInvalidArgument):
		return status.Error(codes.InvalidArgument, err.Error()) // 400
	case errors.Is(err, content.ErrPreconditionFailed):
		return gateway.WithReason(codes.FailedPrecondition, gateway.ReasonPreconditionFailed, err.Error(), nil) // 412
	case errors.Is(err, content.ErrForbidden):
		return status.Error(codes.PermissionDenied, err.Error()) // 403
	}
	return gateway.OtherStatus(ctx, s.log, "management", err)
}
