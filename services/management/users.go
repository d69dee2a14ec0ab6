package management

import (
	"context"
	"fmt"

	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/pkg/content"
	managementv1 "github.com/cmsplatform/cms/proto/gen/go/cms/management/v1"
)

// GetUserDisplayName implements Identity_GetUserDisplayName: the user
// object with its display name values (attribute 1000). Any authenticated
// caller may look names up (clients show authors of transactions).
func (s *service) GetUserDisplayName(ctx context.Context, req *managementv1.GetUserDisplayNameRequest) (*managementv1.CmsObject, error) {
	if s.content == nil {
		return s.UnimplementedManagementServiceServer.GetUserDisplayName(ctx, req)
	}
	if _, err := s.principal(ctx); err != nil {
		return nil, err
	}
	u, err := s.content.UserDisplayName(ctx, req.GetName())
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	out, err := toObject(u)
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	return conditional(ctx, out, u.Version)
}

// Permissions (pkg/auth, pkg/content accounts.go): every operation needs an
// authenticated principal in ctx (the Auth interceptor puts it there; none
// is 403, never allowed). Object operations need read or write permission
// on the branch addressed; a grant covers the branch's descendants.
// Branch objects: reading one needs read on it, changing it write on it,
// creating or deleting one write on its parent. Administrators may do
// everything. Unknown branches stay 404.

// principal returns the caller, or 403 when there is none (fail closed).
func (s *service) principal(ctx context.Context) (auth.Principal, error) {
	p, ok := auth.FromContext(ctx)
	if !ok {
		return auth.Principal{}, s.toStatus(ctx, fmt.Errorf("%w: no authenticated caller", content.ErrForbidden))
	}
	return p, nil
}

// allow checks access a on the branch with identifier branch. parentOnly
// checks the branch's ancestors only (creating or deleting a branch is a
// write on its parent).
func (s *service) allow(ctx context.Context, a auth.Access, branch string, parentOnly bool) error {
	p, err := s.principal(ctx)
	if err != nil || p.Admin {
		return err
	}
	chain, err := s.content.BranchChain(ctx, branch)
	if err != nil {
		return s.toStatus(ctx, err)
	}
	check := chain
	if parentOnly {
		check = chain[1:]
	}
	if !p.Allowed(a, check) {
		what := "branch"
		if parentOnly {
			what = "the parent of branch"
		}
		return s.toStatus(ctx, fmt.Errorf("%w: user %q has no %s permission on %s %d", content.ErrForbidden, p.Name, a, what, chain[0]))
	}
	return nil
}

// writeChange is change plus the caller's admin right, which the domain
// needs to let users and permissions be written.
func writeChange(ctx context.Context, comment string) content.Change {
	ch := change(ctx, comment)
	p, _ := auth.FromContext(ctx)
	ch.Admin = p.Admin
	return ch
}

// readableBranches keeps the branch objects of objs that p may read.
func (s *service) readableBranches(ctx context.Context, p auth.Principal, objs []content.Object) ([]content.Object, error) {
	if p.Admin {
		return objs, nil
	}
	ids := make([]int64, len(objs))
	for i, o := range objs {
		ids[i] = o.ID
	}
	chains, err := s.content.BranchChains(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := objs[:0:0]
	for _, o := range objs {
		if p.Allowed(auth.AccessRead, chains[o.ID]) {
			out = append(out, o)
		}
	}
	return out, nil
}
