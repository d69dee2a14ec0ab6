package delivery

import (
	"context"

	"github.com/cmsplatform/cms/services/internal/gateway"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// errNoEngine answers when the group runs without a search engine.
var errNoEngine = status.Error(codes.Unavailable, "delivery: no search index configured")

// toStatus maps domain errors with the one mapping of all groups
// (gateway.DomainStatus).
func (s *service) toStatus(ctx context.Context, err error) error {
	return gateway.DomainStatus(ctx, s.log, "delivery", err)
}
