package content

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/cmsplatform/cms/pkg/changes"
	"github.com/cmsplatform/cms/pkg/store"
)

// countingReader counts the object and value reads of a store.Reader.
type countingReader struct {
	store.Reader
	reads int
}

func (c *countingReader) GetObject(ctx context.Context, branch, id int64) (store.Object, error) {
	c.reads++
	return c.Reader.GetObject(ctx, branch, id)
}

func (c *countingReader) GetObjects(ctx context.Context, branch int64, ids []int64) ([]store.Object, error) {
	c.reads++
	return c.Reader.GetObjects(ctx, branch, ids)
}

func (c *countingReader) ListObjects(ctx context.Context, branch int64, q store.ObjectQuery) ([]store.Object, error) {
	c.reads++
	return c.Reader.ListObjects(ctx, branch, q)
}

func (c *countingReader) ListValues(ctx context.Context, branch int64, ids []int64, f store.ValueFilter) ([]store.Value, error) {
	c.reads++
	return c.Reader.ListValues(ctx, branch, ids, f)
}

func (c *countingReader) GetObjectsIn(ctx context.Context, branches, ids []int64) ([]store.Object, error) {
	c.reads++
	return c.Reader.GetObjectsIn(ctx, branches, ids)
}

func (c *countingReader) ListValuesIn(ctx context.Context, branches, ids []int64, f store.ValueFilter) ([]store.Value, error) {
	c.reads++
	return c.Reader.ListValuesIn(ctx, branches, ids, f)
}

// TestTouchedAlongTheChain: an object created on a middle branch and
// edited on its child (values only: no object row on the grandchild)
// touches its type, ApiIdentifier and GUID, read along the whole chain
// grandchild → middle → default in three reads however many objects the
// event names.
func TestTouchedAlongTheChain(t *testing.T) {
	backends(t, func(t *testing.T, s *Service, st store.Store) {
		sc := newSchema(t, s)
		_, note := must2(t)(s.CreateObjects(ctxBG, "4", editor, []ObjectInput{
			{TypeID: RootID, APIIdentifier: ptr("note"), Values: []ValueInput{vin(AttrName, LanguageEnUS, "Note")}}}))
		middle := newBranch(t, s, "Middle", BranchDefault)
		grand := newBranch(t, s, "Grand", middle)
		_, ids := must2(t)(s.CreateObjects(ctxBG, id(middle), editor, []ObjectInput{
			{TypeID: sc.article, APIIdentifier: ptr("page"), Values: []ValueInput{vin(sc.title, LanguageEnUS, "Middle")}},
			{TypeID: note[0], APIIdentifier: ptr("box")},
		}))
		page, box := ids[0], ids[1]
		res := chk(s.UpdateObjects(ctxBG, id(grand), editor, []ObjectInput{{ID: page,
			Values: []ValueInput{vin(sc.title, LanguageEnUS, "Grand")}}}))(t)
		rows := chk(st.GetObjectsIn(ctxBG, []int64{middle}, []int64{page, box}))(t)
		if len(rows) != 2 {
			t.Fatalf("rows on the middle branch: %+v", rows)
		}
		ev := changes.Event{Branch: grand, Transaction: res.Transaction.ID, Kind: changes.KindUpdated, ObjectIDs: []int64{page, page}}

		r := &countingReader{Reader: st}
		touch := chk(Touched(ctxBG, r, ev))(t)
		if !slices.Equal(touch.Chain, []int64{grand, middle, BranchDefault}) || !slices.Equal(touch.Objects, []int64{page}) ||
			!slices.Equal(touch.Types, []int64{sc.article}) || !slices.Equal(touch.APIIdentifiers, []string{"page"}) ||
			!slices.Equal(touch.GUIDs, []string{rows[0].GUID}) || len(touch.Missing) != 0 || touch.Effective[page].Branch != middle {
			t.Fatalf("Touched(edit on the grandchild) = %+v", touch)
		}
		if !touch.Has(note[0], sc.article) || touch.Has(note[0]) {
			t.Errorf("Has: %+v", touch.Types)
		}
		if r.reads != 3 {
			t.Errorf("%d reads for one object, want 3", r.reads)
		}

		// Many objects, one missing: still three reads.
		r.reads = 0
		ev.ObjectIDs = []int64{box, 999999, page}
		touch = chk(Touched(ctxBG, r, ev))(t)
		if got := fmt.Sprint(touch.Types, touch.APIIdentifiers, touch.Missing); got != fmt.Sprint([]int64{sc.article, note[0]}, []string{"page", "box"}, []int64{999999}) {
			t.Errorf("Touched(three objects) = %s", got)
		}
		if r.reads != 3 {
			t.Errorf("%d reads for three objects, want 3", r.reads)
		}
		// The default branch does not see the middle branch's objects;
		// its chain is itself, read in one query.
		r.reads = 0
		ev.Branch = BranchDefault
		if touch := chk(Touched(ctxBG, r, ev))(t); len(touch.Types) != 0 || len(touch.Missing) != 3 || r.reads != 1 {
			t.Errorf("Touched on the default branch = %+v in %d reads", touch, r.reads)
		}
	})
}
