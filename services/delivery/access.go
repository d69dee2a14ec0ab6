package delivery

import (
	"context"
	"sync"
	"time"

	"github.com/cmsplatform/cms/pkg/auth"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Read access. Delivery is read-only for everybody: a user needs a read
// (or write) grant on the requested branch or one of its ancestors
// (content attributes 1104/1105, pkg/auth.Principal.Allowed); admins read
// everything. A "delivery user" is therefore simply a user with read
// grants only: Delivery answers, Management refuses its writes. The group
// runs behind the auth interceptor, which rejects unauthenticated calls;
// without a principal in the context (tests, or a deployment that turns
// authentication off) no check is made. Branch chains come from the index
// and are kept chainTTL, like users in pkg/auth.Cached.
const chainTTL = 30 * time.Second

type chainCache struct {
	mu sync.Mutex
	m  map[string]chainEntry
}

type chainEntry struct {
	chain []int64
	at    time.Time
}

// authorize checks that the caller may read branch; "" is the branch list
// (the branch objects live on the default branch).
func (s *service) authorize(ctx context.Context, branch string) error {
	p, ok := auth.FromContext(ctx)
	if !ok || p.Admin {
		return nil
	}
	if branch == "" {
		branch = "4"
	}
	s.chains.mu.Lock()
	e, hit := s.chains.m[branch]
	s.chains.mu.Unlock()
	if !hit || time.Since(e.at) > chainTTL {
		chain, err := s.dom.BranchChain(ctx, branch)
		if err != nil {
			return s.toStatus(ctx, err)
		}
		e = chainEntry{chain: chain, at: time.Now()}
		s.chains.mu.Lock()
		if s.chains.m == nil || len(s.chains.m) > 10_000 {
			s.chains.m = map[string]chainEntry{}
		}
		s.chains.m[branch] = e
		s.chains.mu.Unlock()
	}
	if !p.Allowed(auth.AccessRead, e.chain) {
		return status.Errorf(codes.PermissionDenied, "user %q may not read branch %s", p.Name, branch)
	}
	return nil
}
