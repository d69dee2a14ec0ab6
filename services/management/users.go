package management

import (
	"context"

	managementv1 "github.com/cmsplatform/cms/proto/gen/go/cms/management/v1"
)

// GetUserDisplayName implements Identity_GetUserDisplayName: the user
// object with its display name values (attribute 1000).
func (s *service) GetUserDisplayName(ctx context.Context, req *managementv1.GetUserDisplayNameRequest) (*managementv1.CmsObject, error) {
	if s.content == nil {
		return s.UnimplementedManagementServiceServer.GetUserDisplayName(ctx, req)
	}
	u, err := s.content.UserDisplayName(ctx, req.GetName())
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	out, err := toObject(u)
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	return conditional(ctx, out)
}
