package index

import (
	"context"
	"errors"

	"github.com/cmsplatform/cms/pkg/search"
	"github.com/cmsplatform/cms/services/internal/gateway"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// toStatus maps domain errors with the one mapping of all groups
// (gateway.DomainStatus). Index requests carry the client's query into the
// engine, so a query the engine refuses is the client's mistake (400).
func (s *service) toStatus(ctx context.Context, err error) error {
	if errors.Is(err, search.ErrInvalidQuery) {
		return status.Error(codes.InvalidArgument, err.Error())
	}
	return gateway.DomainStatus(ctx, s.log, "index", err)
}
