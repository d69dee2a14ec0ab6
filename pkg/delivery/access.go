package delivery

import (
	"context"
	"errors"
	"fmt"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/model"
	"github.com/cmsplatform/cms/pkg/search"
)

// BranchChain returns the branch named by param (id or ApiIdentifier)
// followed by its ancestors up to the default branch, read from the
// indexed branch objects: the chain pkg/auth.Principal.Allowed checks
// read grants against.
func (s *Service) BranchChain(ctx context.Context, param string) ([]int64, error) {
	b, err := s.branchID(ctx, param)
	if err != nil {
		return nil, err
	}
	chain, err := indexedChain(b, func(cur int64) (int64, bool, error) {
		doc, err := s.eng.Get(ctx, s.objects, indexdoc.DocID(content.BranchDefault, cur))
		if errors.Is(err, search.ErrNotFound) {
			return 0, false, nil
		}
		if err != nil {
			return 0, false, fmt.Errorf("delivery: read branch %d: %w", cur, err)
		}
		src, err := indexdoc.DecodeSource(doc.Fields)
		if err != nil {
			return 0, false, err
		}
		return parentOf(src), true, nil
	})
	if err != nil {
		return nil, err
	}
	return chain, nil
}

// indexedChain is the chain of branch b (model.WalkChain) as the index
// shows it: parent returns a branch's parent and whether the index has the
// branch. A branch the index lacks ends the chain but is part of it (a
// grant on it still counts), and a broken chain is no error.
func indexedChain(b int64, parent func(branch int64) (int64, bool, error)) ([]int64, error) {
	chain, err := model.WalkChain(b, func(id int64) (int64, bool, error) {
		switch id {
		case 0:
			return 0, false, nil
		case content.BranchDefault:
			return 0, true, nil
		}
		p, _, err := parent(id)
		return p, true, err
	})
	if errors.Is(err, model.ErrNoBranch) || errors.Is(err, model.ErrBranchCycle) {
		return chain, nil
	}
	return chain, err
}
