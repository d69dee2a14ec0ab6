package rendering

import (
	"context"
	"log/slog"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/services/internal/gateway"
	"github.com/cmsplatform/cms/services/internal/interceptors"
)

// StoreBranches resolves the branch chains the authorization interceptor
// checks read grants against from the store the group renders from
// (pkg/content, the current Management view): a branch or grant written a
// moment ago counts in the next request, with no wait for the index, and
// an unreachable store answers 503 like the render itself would.
func StoreBranches(cs *content.Service, log *slog.Logger) interceptors.BranchResolver {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return storeBranches{cs: cs, log: log}
}

type storeBranches struct {
	cs  *content.Service
	log *slog.Logger
}

// BranchChain implements interceptors.BranchResolver.
func (b storeBranches) BranchChain(ctx context.Context, branch string) ([]int64, error) {
	chain, err := b.cs.BranchChain(ctx, branch)
	if err != nil {
		return nil, gateway.DomainStatus(ctx, b.log, "rendering", err)
	}
	return chain, nil
}
