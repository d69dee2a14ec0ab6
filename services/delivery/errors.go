package delivery

import (
	"context"
	"errors"

	"github.com/cmsplatform/cms/pkg/delivery"
	"github.com/cmsplatform/cms/pkg/params"
	"github.com/cmsplatform/cms/services/internal/gateway"
	"google.golang.org/grpc/codes"
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
	case errors.Is(err, delivery.ErrInvalidArgument), errors.Is(err, params.ErrInvalid):
		return status.Error(codes.InvalidArgument, err.Error())
	case errors.Is(err, delivery.ErrUnsupported):
		return status.Error(codes.Unimplemented, err.Error()) // 501
	}
	return gateway.OtherStatus(ctx, s.log, "delivery", err)
}
