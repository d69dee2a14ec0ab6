package indexdoc_test

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/cmsplatform/cms/pkg/auth"
	"slices"
	"strconv"
	"testing"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/delivery/deliverytest"
	"github.com/cmsplatform/cms/pkg/indexdoc"
)

// TestBranchesReadTheIndexedTree: on each engine, the branch chains read
// from the index (no domain service) are the store's once published: a
// grandchild's chain runs up to the default branch, every live branch has
// its chain, "draft" is the default branch, an unknown branch is
// ErrNoBranch and a parameter that is no identifier ErrBadBranch.
func TestBranchesReadTheIndexedTree(t *testing.T) {
	deliverytest.OnEachEngine(t, func(t *testing.T, s *deliverytest.Site) {
		ctx := context.Background()
		branch := func(parent int64) int64 {
			t.Helper()
			p, _ := json.Marshal(parent)
			b, _, err := s.Content.CreateBranch(ctx, content.Change{Caller: &auth.Principal{Name: "editor"}}, []content.ValueInput{
				{Attribute: content.AttrBranchParent, JSON: p}})
			if err != nil {
				t.Fatal(err)
			}
			return b.ID
		}
		a := branch(4)
		b := branch(a)
		s.Publish(t)
		br := indexdoc.NewBranches(s.Engine, s.Options.Layout.IndexPrefix)
		chain, err := br.Chain(ctx, strconv.FormatInt(b, 10))
		if err != nil || !slices.Equal(chain, []int64{b, a, 4}) {
			t.Fatalf("Chain(%d) = %v, %v; want [%d %d 4]", b, chain, err, b, a)
		}
		all, err := br.AllChains(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want, err := s.Content.AllBranchChains(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for id, c := range want {
			if !slices.Equal(all[id], c) {
				t.Errorf("branch %d: index chain %v, store chain %v", id, all[id], c)
			}
		}
		if id, err := br.ID(ctx, "draft"); err != nil || id != 4 {
			t.Errorf("draft = %d, %v", id, err)
		}
		if _, err := br.ID(ctx, "987654"); !errors.Is(err, indexdoc.ErrNoBranch) {
			t.Errorf("unknown branch: %v, want ErrNoBranch", err)
		}
		if _, err := br.Chain(ctx, "4.0"); !errors.Is(err, indexdoc.ErrBadBranch) {
			t.Errorf("4.0: %v, want ErrBadBranch", err)
		}
	})
}
