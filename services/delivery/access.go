package delivery

import (
	"context"
	"sync"
	"time"

	"github.com/cmsplatform/cms/pkg/auth"
	deliveryv1 "github.com/cmsplatform/cms/proto/gen/go/cms/delivery/v1"
	"github.com/cmsplatform/cms/services/internal/interceptors"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// Read access. Delivery is read-only for everybody: every branch-scoped
// RPC declares PERMISSION_READ on its branch (proto option
// cms.options.v1.access), which the authorization interceptor enforces
// with the chains resolved here from the index (no store needed); admins
// read everything. A "delivery user" is therefore simply a user with read
// grants only: Delivery answers, Management refuses its writes. The branch
// list is open to every authenticated user and lists the branches the
// caller may read. Branch chains are kept chainTTL, like users in
// pkg/auth.Cached.
const chainTTL = 30 * time.Second

type chainCache struct {
	mu sync.Mutex
	m  map[string]chainEntry
}

type chainEntry struct {
	chain []int64
	at    time.Time
}

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
	md, _ := metadata.FromIncomingContext(ctx)
	_, err := s.readYourWrites(ctx, md)
	return err
}

// BranchChain implements interceptors.BranchResolver from the index.
func (s *service) BranchChain(ctx context.Context, branch string) ([]int64, error) {
	s.chains.mu.Lock()
	e, hit := s.chains.m[branch]
	s.chains.mu.Unlock()
	if hit && time.Since(e.at) <= chainTTL {
		return e.chain, nil
	}
	chain, err := s.dom.BranchChain(ctx, branch)
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	s.chains.mu.Lock()
	if s.chains.m == nil || len(s.chains.m) > 10_000 {
		s.chains.m = map[string]chainEntry{}
	}
	s.chains.m[branch] = chainEntry{chain: chain, at: time.Now()}
	s.chains.mu.Unlock()
	return chain, nil
}

// mayRead is the read check of the HTTP cache, which answers without the
// gRPC interceptors: the same rule (pkg/auth.Principal.Allowed on the
// branch chain) that PERMISSION_READ declares for every branch-scoped
// Delivery RPC.
func (s *service) mayRead(ctx context.Context, branch string) error {
	p, ok := auth.FromContext(ctx)
	if !ok {
		return status.Error(codes.Unauthenticated, "no caller")
	}
	if p.Admin {
		return nil
	}
	chain, err := s.BranchChain(ctx, branch)
	if err != nil {
		return err
	}
	if !p.Allowed(auth.AccessRead, chain) {
		return status.Errorf(codes.PermissionDenied, "user %q may not read branch %s", p.Name, branch)
	}
	return nil
}
