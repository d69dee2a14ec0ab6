package content

import (
	"testing"

	"github.com/cmsplatform/cms/pkg/store"
)

// TestRestoreSoftDeleted: an update with Deleted false brings a soft-deleted
// object back with its values (a change without Deleted leaves it deleted);
// Deleted true in an update is refused; on a child branch the restore of an
// inherited object's tombstone is local to the child.
func TestRestoreSoftDeleted(t *testing.T) {
	backends(t, func(t *testing.T, s *Service, _ store.Store) {
		sc := newSchema(t, s)
		_, ids := must2(t)(s.CreateObjects(ctxBG, "4", editor, []ObjectInput{
			{TypeID: sc.article, Values: []ValueInput{vin(sc.rank, 0, 7)}}}))
		a := ids[0]
		if _, _, err := s.DeleteObjects(ctxBG, "4", editor, []string{id(a)}); err != nil {
			t.Fatal(err)
		}
		// A change without meta.deleted does not restore.
		chk(s.UpdateObjects(ctxBG, "4", editor, []ObjectInput{{ID: a, Values: []ValueInput{vin(sc.rank, 0, 8)}}}))(t)
		if o := chk(s.GetObject(ctxBG, "4", id(a), ReadOptions{}))(t); !o.Deleted {
			t.Fatal("an update without meta.deleted restored the object")
		}
		_, err := s.UpdateObjects(ctxBG, "4", editor, []ObjectInput{{ID: a, Deleted: ptr(true)}})
		wantErr(t, err, ErrInvalid, "meta.deleted true in an update")

		res := chk(s.UpdateObjects(ctxBG, "4", editor, []ObjectInput{{ID: a, Deleted: ptr(false)}}))(t)
		o := chk(s.GetObject(ctxBG, "4", id(a), ReadOptions{}))(t)
		if o.Deleted || o.LastTransaction != res.Transaction.ID {
			t.Fatalf("after the restore: deleted %v, lastTransaction %d (want live at %d)", o.Deleted, o.LastTransaction, res.Transaction.ID)
		}
		if got := valuesOf(o); len(got) != 1 || got[0] != id(sc.rank)+"/0/0/0=8" {
			t.Fatalf("values after the restore: %v", got)
		}
		live := false
		page := chk(s.GetTypedObjects(ctxBG, "4", "article", ListQuery{Deleted: &live}))(t)
		if len(page.Objects) != 1 || page.Objects[0].ID != a {
			t.Fatalf("live articles after the restore: %v", page.Objects)
		}
		// Restoring a live object is no change of its row.
		again := chk(s.UpdateObjects(ctxBG, "4", editor, []ObjectInput{{ID: a, Deleted: ptr(false)}}))(t)
		if o := chk(s.GetObject(ctxBG, "4", id(a), ReadOptions{}))(t); o.Deleted || o.LastTransaction != res.Transaction.ID {
			t.Fatalf("a second restore (tx %d) changed the row: deleted %v, lastTransaction %d", again.Transaction.ID, o.Deleted, o.LastTransaction)
		}

		// On a child: the tombstone of the inherited object is restored there.
		child := newBranch(t, s, "Spring", BranchDefault)
		if _, _, err := s.DeleteObjects(ctxBG, id(child), editor, []string{id(a)}); err != nil {
			t.Fatal(err)
		}
		chk(s.UpdateObjects(ctxBG, id(child), editor, []ObjectInput{{ID: a, Deleted: ptr(false)}}))(t)
		if o := chk(s.GetObject(ctxBG, id(child), id(a), ReadOptions{Inherited: true}))(t); o.Deleted || len(o.Values) != 1 {
			t.Fatalf("on the child after the restore: deleted %v, values %v", o.Deleted, valuesOf(o))
		}
		if o := chk(s.GetObject(ctxBG, "4", id(a), ReadOptions{}))(t); o.Deleted {
			t.Fatal("the parent's object is deleted")
		}
	})
}
