package delivery_test

import (
	"context"
	"encoding/json"
	"github.com/cmsplatform/cms/pkg/auth"
	"slices"
	"strconv"
	"testing"

	"github.com/cmsplatform/cms/pkg/changes"
	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/delivery"
	"github.com/cmsplatform/cms/pkg/delivery/deliverytest"
)

// TestChangeTagsAlongTheChain: Delivery's eviction reads what a change
// touched along the event's branch chain (content.TouchOf) and the branch
// tree once per event. An object created on a middle branch and deleted on
// its child is gone from the child's index but still has its type on the
// middle branch: the deletion evicts the child's lists of that type, not
// its whole model and every typed list. An event naming several branch
// objects costs two index requests (the tree and the objects), not one
// more subtree scan per branch object.
func TestChangeTagsAlongTheChain(t *testing.T) {
	s := deliverytest.NewSite(t)
	ctx := context.Background()
	svc, eng := rvCounted(t, s)
	editor := content.Change{Caller: &auth.Principal{Name: "editor"}}
	branch := func(parent int64) int64 {
		p, _ := json.Marshal(parent)
		b, _, err := s.Content.CreateBranch(ctx, editor, []content.ValueInput{{Attribute: content.AttrBranchParent, JSON: p}})
		if err != nil {
			t.Fatal(err)
		}
		return b.ID
	}
	middle := branch(content.BranchDefault)
	grand := branch(middle)
	api := "inheritedPage"
	_, ids, err := s.Content.CreateObjects(ctx, strconv.FormatInt(middle, 10), editor, []content.ObjectInput{{TypeID: s.WebPage, APIIdentifier: &api}})
	if err != nil {
		t.Fatal(err)
	}
	x := ids[0]
	s.Publish(t)
	_, tr, err := s.Content.DeleteObjects(ctx, strconv.FormatInt(grand, 10), editor, []string{strconv.FormatInt(x, 10)})
	if err != nil {
		t.Fatal(err)
	}
	s.Publish(t)

	tags, err := svc.ChangeTags(ctx, changes.Event{Branch: grand, Transaction: tr.ID, Kind: changes.KindDeleted, ObjectIDs: []int64{x}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{delivery.ListTag(grand), delivery.TypeListTag(grand, s.WebPage), delivery.ObjTag(grand, x), delivery.APITag(grand, api)} {
		if !slices.Contains(tags, want) {
			t.Errorf("tags %v lack %s", tags, want)
		}
	}
	for _, unwanted := range []string{delivery.ModelTag(grand), delivery.AnyTypeListTag(grand), delivery.ListTag(middle)} {
		if slices.Contains(tags, unwanted) {
			t.Errorf("tags %v have %s: the deleted object's type is known on the middle branch", tags, unwanted)
		}
	}

	eng.searches.Store(0)
	tags, err = svc.ChangeTags(ctx, changes.Event{Branch: content.BranchDefault, Transaction: tr.ID, Kind: changes.KindUpdated,
		ObjectIDs: []int64{middle, grand}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(tags, delivery.BranchesTag) || !slices.Contains(tags, delivery.ModelTag(grand)) {
		t.Errorf("changed branch objects: tags %v lack the branch list or the grandchild's model", tags)
	}
	if n := eng.searches.Load(); n != 2 {
		t.Errorf("%d index requests for an event naming two branch objects, want 2", n)
	}
}

// TestEarlyChangeTags: a change of EarlyEvictObjects objects or more names
// the query-shaped tags of its branch and the branches below for eviction
// on receipt; a smaller one, a comment and a deleted branch name none.
func TestEarlyChangeTags(t *testing.T) {
	s := deliverytest.NewSite(t)
	ctx := context.Background()
	svc, _ := rvCounted(t, s)
	editor := content.Change{Caller: &auth.Principal{Name: "editor"}}
	p, _ := json.Marshal(content.BranchDefault)
	child, _, err := s.Content.CreateBranch(ctx, editor, []content.ValueInput{{Attribute: content.AttrBranchParent, JSON: p}})
	if err != nil {
		t.Fatal(err)
	}
	s.Publish(t)
	ids := make([]int64, delivery.EarlyEvictObjects)
	for i := range ids {
		ids[i] = int64(100000 + i)
	}
	for _, c := range []struct {
		ev   changes.Event
		want []string
	}{
		{changes.Event{Branch: content.BranchDefault, Transaction: 99, Kind: changes.KindUpdated, ObjectIDs: ids},
			[]string{delivery.ListTag(4), delivery.AnyTypeListTag(4), delivery.ListTag(child.ID), delivery.AnyTypeListTag(child.ID)}},
		{changes.Event{Branch: child.ID, Transaction: 99, Kind: changes.KindCreated, ObjectIDs: ids},
			[]string{delivery.ListTag(child.ID), delivery.AnyTypeListTag(child.ID)}},
		{changes.Event{Branch: content.BranchDefault, Transaction: 99, Kind: changes.KindUpdated, ObjectIDs: ids[1:]}, nil},
		{changes.Event{Branch: content.BranchDefault, Transaction: 99, Kind: changes.KindComment, ObjectIDs: ids}, nil},
	} {
		got, err := svc.EarlyChangeTags(ctx, c.ev)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s of %d objects on %d: %v, %v; want %v", c.ev.Kind, len(c.ev.ObjectIDs), c.ev.Branch, got, err, c.want)
		}
	}
}
