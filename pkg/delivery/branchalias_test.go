package delivery_test

import (
	"context"
	"encoding/json"
	"github.com/cmsplatform/cms/pkg/auth"
	"testing"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/delivery/deliverytest"
	"github.com/cmsplatform/cms/pkg/store"
)

// TestBranchAliasDraft: "draft" is the default branch 4 for both branch
// resolvers (the store's, for Management and Rendering, and the index's,
// for Delivery and Index) until a branch object carries the ApiIdentifier
// "draft" (the API gives branches none, but imported data may): then
// that branch wins in both.
func TestBranchAliasDraft(t *testing.T) {
	ctx := context.Background()
	s := deliverytest.NewSite(t)
	resolved := func() (fromStore, fromIndex int64) {
		t.Helper()
		c, err := s.Content.BranchChain(ctx, "draft")
		if err != nil {
			t.Fatalf("content: %v", err)
		}
		d, err := s.Svc.BranchChain(ctx, "draft")
		if err != nil {
			t.Fatalf("delivery: %v", err)
		}
		return c[0], d[0]
	}
	if c, d := resolved(); c != 4 || d != 4 {
		t.Fatalf("draft is branch %d (store) and %d (index), want 4", c, d)
	}
	if _, err := s.Svc.BranchChain(ctx, "drafts"); err == nil {
		t.Error("an unknown ApiIdentifier resolved")
	}

	parent, _ := json.Marshal(4)
	b, _, err := s.Content.CreateBranch(ctx, content.Change{Caller: &auth.Principal{Name: "editor"}}, []content.ValueInput{
		{Attribute: content.AttrBranchParent, JSON: parent}})
	if err != nil {
		t.Fatal(err)
	}
	tx, err := s.Store.Begin(ctx, store.TxMeta{User: "import", Branch: 4})
	if err != nil {
		t.Fatal(err)
	}
	obj, err := tx.GetObject(ctx, 4, b.ID)
	if err != nil {
		t.Fatal(err)
	}
	obj.APIIdentifier = "draft"
	if err := tx.PutObjects(ctx, obj); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	s.Publish(t)
	if _, err := s.Index.IndexBranch(ctx, 4, tx.ID()); err != nil {
		t.Fatal(err)
	}
	if c, d := resolved(); c != b.ID || d != b.ID {
		t.Fatalf("draft is branch %d (store) and %d (index), want the branch named draft %d", c, d, b.ID)
	}
}
