package index

import (
	"context"
	"errors"

	"github.com/cmsplatform/cms/pkg/indexquery"
	"github.com/cmsplatform/cms/pkg/search"
	"github.com/cmsplatform/cms/services/internal/gateway"
	"google.golang.org/grpc/codes"
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
	}
	return gateway.OtherStatus(ctx, s.log, "index", err)
}
