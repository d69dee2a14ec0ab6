package delivery

import (
	"context"
	"errors"
	"fmt"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/indexing"
	"github.com/cmsplatform/cms/pkg/search"
)

// maxChainDepth bounds a branch chain (a cycle in broken data ends it).
const maxChainDepth = 64

// BranchChain returns the branch named by param (id or ApiIdentifier)
// followed by its ancestors up to the default branch, read from the
// indexed branch objects: the chain pkg/auth.Principal.Allowed checks
// read grants against.
func (s *Service) BranchChain(ctx context.Context, param string) ([]int64, error) {
	b, err := s.branchID(ctx, param)
	if err != nil {
		return nil, err
	}
	chain := []int64{b}
	for cur := b; cur != content.BranchDefault && len(chain) < maxChainDepth; {
		doc, err := s.eng.Get(ctx, s.objects, indexing.DocID(content.BranchDefault, cur))
		if errors.Is(err, search.ErrNotFound) {
			return chain, nil
		}
		if err != nil {
			return nil, fmt.Errorf("delivery: read branch %d: %w", cur, err)
		}
		src, err := indexing.DecodeSource(doc.Fields)
		if err != nil {
			return nil, err
		}
		parent := parentOf(src)
		if parent == 0 || containsID(chain, parent) {
			return chain, nil
		}
		chain = append(chain, parent)
		cur = parent
	}
	return chain, nil
}
