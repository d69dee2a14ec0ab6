package indexwriter

import (
	"context"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/model"
	"github.com/cmsplatform/cms/pkg/store"
)

// tree is the branch tree (model.BranchTree) with the language fallbacks
// of its branches.
type tree struct {
	model.BranchTree
	langs *languages // language fallbacks, read on first use (fallback.go)
}

// loadTree reads the branch tree in two queries.
func loadTree(ctx context.Context, r store.Reader) (tree, error) {
	bt, _, err := content.ReadBranchTree(ctx, r)
	if err != nil {
		return tree{}, err
	}
	return tree{BranchTree: bt, langs: newLanguages()}, nil
}

// chain returns b, its parent, … up to the default branch; nil when b is
// not a branch or its chain is broken (a cycle or a missing parent).
func (t tree) chain(b int64) []int64 {
	c, err := t.Chain(b)
	if err != nil {
		return nil
	}
	return c
}
