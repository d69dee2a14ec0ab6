// Package indexbranches resolves branch chains from the search index for
// the authorization interceptor of the groups that read the index instead
// of the store (Delivery, Index): the branch objects the indexer wrote
// name each branch's parent, read through pkg/indexdoc.Branches (no
// domain service).
package indexbranches

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/cmsplatform/cms/pkg/errkind"
	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/search"
	"github.com/cmsplatform/cms/services/internal/gateway"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ChainTTL is how long a resolved chain is kept (like users in
// pkg/auth.Cached): a moved branch is seen within it. At most
// maxCachedChains are kept.
const (
	ChainTTL        = 30 * time.Second
	maxCachedChains = 10_000
)

// Resolver implements interceptors.BranchResolver over the index. It is
// safe for concurrent use.
type Resolver struct {
	br  indexdoc.Branches
	log *slog.Logger
	mu  sync.Mutex
	m   map[string]entry
}

type entry struct {
	chain []int64
	at    time.Time
}

// New returns a Resolver reading the index an indexer with layout writes.
// It fails only without an engine.
func New(eng search.Engine, layout indexdoc.Layout, log *slog.Logger) (*Resolver, error) {
	if eng == nil {
		return nil, errors.New("indexbranches: no search engine")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Resolver{br: indexdoc.NewBranches(eng, layout.IndexPrefix), log: log, m: map[string]entry{}}, nil
}

// BranchChain returns the chain of branch (id or ApiIdentifier); an
// unknown branch is NotFound.
func (r *Resolver) BranchChain(ctx context.Context, branch string) ([]int64, error) {
	r.mu.Lock()
	e, hit := r.m[branch]
	r.mu.Unlock()
	if hit && time.Since(e.at) <= ChainTTL {
		return e.chain, nil
	}
	chain, err := r.br.Chain(ctx, branch)
	if err != nil {
		return nil, r.status(ctx, err)
	}
	r.mu.Lock()
	if len(r.m) >= maxCachedChains {
		clear(r.m)
	}
	r.m[branch] = entry{chain: chain, at: time.Now()}
	r.mu.Unlock()
	return chain, nil
}

// Branch resolves a branch identifier (id, GUID, ApiIdentifier or the
// alias "draft", see pkg/params.BranchAlias) to its id, uncached: a
// branch that just took the ApiIdentifier "draft" wins at once.
func (r *Resolver) Branch(ctx context.Context, branch string) (int64, error) {
	chain, err := r.br.Chain(ctx, branch)
	if err != nil {
		return 0, r.status(ctx, err)
	}
	return chain[0], nil
}

// AllBranchChains returns the chain of every live indexed branch.
func (r *Resolver) AllBranchChains(ctx context.Context) (map[int64][]int64, error) {
	chains, err := r.br.AllChains(ctx)
	if err != nil {
		return nil, r.status(ctx, err)
	}
	return chains, nil
}

func (r *Resolver) status(ctx context.Context, err error) error {
	switch {
	case errors.Is(err, errkind.NotFound):
		return status.Error(codes.NotFound, gateway.ClientDetail(err))
	case errors.Is(err, errkind.Invalid):
		// A branch that cannot be an identifier ("4.0", "+4"): the
		// caller's mistake, not an internal error.
		return status.Error(codes.InvalidArgument, gateway.ClientDetail(err))
	}
	return gateway.OtherStatus(ctx, r.log, "branches", err)
}
