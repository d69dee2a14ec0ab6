package delivery

import (
	"context"
)

// BranchChain returns the branch named by param (id or ApiIdentifier)
// followed by its ancestors up to the default branch, read from the
// indexed branch objects (indexdoc.Branches.Chain): the chain
// pkg/auth.Principal.Allowed checks read grants against.
func (s *Service) BranchChain(ctx context.Context, param string) ([]int64, error) {
	chain, err := s.branches.Chain(ctx, param)
	return chain, branchErr(err, param)
}
