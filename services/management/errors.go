package management

import (
	"context"

	"github.com/cmsplatform/cms/services/internal/gateway"
)

// toStatus maps domain errors with the one mapping of all groups
// (gateway.DomainStatus).
func (s *service) toStatus(ctx context.Context, err error) error {
	return gateway.DomainStatus(ctx, s.log, "management", err)
}
