package indexing

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/store"
)

// tree is the branch tree: every live branch object with its parent,
// read like pkg/content does (type 40 objects on branch 4, attribute 4000).
type tree struct {
	parent   map[int64]int64 // branch → parent (0 for the default branch)
	children map[int64][]int64
	langs    *languages // language fallbacks, read on first use (fallback.go)
}

// loadTree reads the branch tree in two queries.
func loadTree(ctx context.Context, r store.Reader) (tree, error) {
	objs, err := r.ListObjects(ctx, content.BranchDefault, store.ObjectQuery{TypeIDs: []int64{content.TypeBranch}})
	if err != nil {
		return tree{}, fmt.Errorf("indexing: list branches: %w", err)
	}
	t := tree{parent: map[int64]int64{}, children: map[int64][]int64{}, langs: newLanguages()}
	ids := make([]int64, 0, len(objs))
	for _, o := range objs {
		if !o.Deleted {
			t.parent[o.ID] = 0
			ids = append(ids, o.ID)
		}
	}
	vals, err := r.ListValues(ctx, content.BranchDefault, ids, store.ValueFilter{AttributeIDs: []int64{content.AttrBranchParent}})
	if err != nil {
		return tree{}, fmt.Errorf("indexing: read branch parents: %w", err)
	}
	for _, v := range vals {
		if _, ok := t.parent[v.ObjectID]; !ok || v.ObjectID == content.BranchDefault {
			continue
		}
		if p, err := strconv.ParseInt(string(bytes.TrimSpace(v.JSON)), 10, 64); err == nil {
			t.parent[v.ObjectID] = p
		}
	}
	for b, p := range t.parent {
		if b != content.BranchDefault {
			t.children[p] = append(t.children[p], b)
		}
	}
	for _, c := range t.children {
		slices.Sort(c)
	}
	return t, nil
}

func (t tree) has(b int64) bool { _, ok := t.parent[b]; return ok }

// chain returns b, its parent, … up to the default branch; nil when b is
// not a branch or its chain is broken (a cycle or a missing parent).
func (t tree) chain(b int64) []int64 {
	var out []int64
	for cur := b; ; cur = t.parent[cur] {
		if !t.has(cur) || slices.Contains(out, cur) {
			return nil
		}
		out = append(out, cur)
		if cur == content.BranchDefault {
			return out
		}
	}
}

// subtree returns b and all its descendants, parents before children.
func (t tree) subtree(b int64) []int64 {
	if !t.has(b) {
		return nil
	}
	out := []int64{b}
	for i := 0; i < len(out); i++ {
		for _, c := range t.children[out[i]] {
			if !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
	}
	return out
}
