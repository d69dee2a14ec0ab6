package delivery

import (
	"context"

	deliveryv1 "github.com/cmsplatform/cms/proto/gen/go/cms/delivery/v1"
	"github.com/cmsplatform/cms/services/internal/interceptors"
	"google.golang.org/protobuf/proto"
)

// Read access. Delivery is read-only for everybody: every branch-scoped
// RPC declares PERMISSION_READ on its branch (proto option
// cms.options.v1.access), which the authorization interceptor enforces
// with the chains resolved from the index (indexbranches, no store
// needed); admins read everything. A "delivery user" is therefore simply a
// user with read grants only: Delivery answers, Management refuses its
// writes. The branch list is open to every authenticated user and lists
// the branches the caller may read.

// BranchResolvers implements app.BranchResolving.
func (g *Group) BranchResolvers() map[string]interceptors.BranchResolver {
	if g.api.dom == nil {
		return nil
	}
	return map[string]interceptors.BranchResolver{
		deliveryv1.DeliveryService_ServiceDesc.ServiceName:       g.api,
		deliveryv1.DeliveryBinaryService_ServiceDesc.ServiceName: g.api,
	}
}

// ReadYourWrites implements interceptors.ReadYourWritesResolver: it
// honours X-Cms-Min-Version before the branch is resolved (the branch may
// only appear with it).
func (s *service) ReadYourWrites(ctx context.Context, _ proto.Message) error {
	_, err := s.readYourWrites(ctx)
	return err
}

// BranchChain implements interceptors.BranchResolver from the index.
func (s *service) BranchChain(ctx context.Context, branch string) ([]int64, error) {
	return s.chains.BranchChain(ctx, branch)
}
