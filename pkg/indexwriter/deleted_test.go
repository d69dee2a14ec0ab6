package indexwriter_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/cmsplatform/cms/pkg/changes"
	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/search"
	"github.com/cmsplatform/cms/pkg/store"
)

// TestSoftDeleteKeepsDocumentRestoreRevives: a soft-deleted object keeps
// its document (on its branch and on a child inheriting it) with the
// deleted flag and its values, so the Index API can find it (deleted on a
// child branch only: flagged there, live on the parent); restoring
// the row (Deleted = false, as store.Tx.PutObjects documents) makes the
// document live again; and the objects of a purged branch leave
// tombstones, not documents.
func TestSoftDeleteKeepsDocumentRestoreRevives(t *testing.T) {
	ctx := context.Background()
	st := bootstrappedStore(t)
	s := content.New(st, nil)
	ix, eng := memIndexer(t, st, 7)
	child, _, err := s.CreateBranch(ctx, editor, []content.ValueInput{vin(1000, 201, "Child"), vin(4000, 0, 4)})
	if err != nil {
		t.Fatal(err)
	}
	_, ids, err := s.CreateObjects(ctx, "4", editor, []content.ObjectInput{
		{TypeID: content.TypeLanguage, Values: []content.ValueInput{vin(1000, 201, "Doomed")}}})
	if err != nil {
		t.Fatal(err)
	}
	id := ids[0]
	_, del, err := s.DeleteObjects(ctx, "4", editor, []string{fmt.Sprint(id)})
	if err != nil {
		t.Fatal(err)
	}
	drain(t, st, ix)
	deletedFlag := func(branch int64) (bool, search.Document) {
		t.Helper()
		doc, err := eng.Get(ctx, ix.ObjectsIndex(), indexdoc.DocID(branch, id))
		if err != nil {
			t.Fatalf("document of %d on branch %d: %v", id, branch, err)
		}
		d, _ := doc.Fields[indexdoc.FieldDeleted].(bool)
		return d, doc
	}
	for _, b := range []int64{4, child.ID} {
		d, doc := deletedFlag(b)
		if !d {
			t.Fatalf("branch %d: deleted object indexed with %s = %v", b, indexdoc.FieldDeleted, doc.Fields[indexdoc.FieldDeleted])
		}
		src, err := indexdoc.DecodeSource(doc.Fields)
		if err != nil || !src.Deleted || src.LastTransaction != del.ID || len(src.Values) == 0 {
			t.Fatalf("branch %d: source of the deleted object = %+v, %v", b, src, err)
		}
		if doc.Fields[indexdoc.NameField(201)] != "Doomed" {
			t.Fatalf("branch %d: the deleted object lost its display name: %v", b, doc.Fields)
		}
	}

	// Restore: the row live again, with the change event content emits
	// for a write of the object.
	tx, err := st.Begin(ctx, store.TxMeta{User: "editor"})
	if err != nil {
		t.Fatal(err)
	}
	row, err := st.GetObject(ctx, 4, id)
	if err != nil {
		t.Fatal(err)
	}
	row.Deleted = false
	if err := tx.PutObjects(ctx, row); err != nil {
		t.Fatal(err)
	}
	restore := tx.ID()
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Apply(ctx, changes.Event{Branch: 4, Transaction: restore, Kind: changes.KindUpdated, ObjectIDs: []int64{id}}); err != nil {
		t.Fatal(err)
	}
	for _, b := range []int64{4, child.ID} {
		if d, doc := deletedFlag(b); d || doc.Version != restore {
			t.Fatalf("branch %d after the restore: deleted = %v at version %d, want live at %d", b, d, doc.Version, restore)
		}
	}
	// An older event (the delete's, replayed) does not delete it again.
	if _, err := ix.Apply(ctx, changes.Event{Branch: 4, Transaction: del.ID, Kind: changes.KindDeleted, ObjectIDs: []int64{id}}); err != nil {
		t.Fatal(err)
	}
	if d, _ := deletedFlag(4); d {
		t.Fatal("a replayed delete event flagged the restored object deleted again")
	}

	// Deleted on the child only: deleted there, live on the parent.
	_, local, err := s.CreateObjects(ctx, "4", editor, []content.ObjectInput{
		{TypeID: content.TypeLanguage, Values: []content.ValueInput{vin(1000, 201, "Parent's")}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.DeleteObjects(ctx, fmt.Sprint(child.ID), editor, []string{fmt.Sprint(local[0])}); err != nil {
		t.Fatal(err)
	}
	drain(t, st, ix)
	for b, want := range map[int64]bool{4: false, child.ID: true} {
		doc, err := eng.Get(ctx, ix.ObjectsIndex(), indexdoc.DocID(b, local[0]))
		if err != nil || doc.Fields[indexdoc.FieldDeleted] != want {
			t.Fatalf("object deleted on the child, branch %d: %v, %v; want %s = %v", b, doc.Fields, err, indexdoc.FieldDeleted, want)
		}
	}

	// A purged branch leaves tombstones: its objects are gone.
	_, onChild, err := s.CreateObjects(ctx, fmt.Sprint(child.ID), editor, []content.ObjectInput{
		{TypeID: content.TypeLanguage, Values: []content.ValueInput{vin(1000, 201, "On child")}}})
	if err != nil {
		t.Fatal(err)
	}
	drain(t, st, ix)
	if _, err := eng.Get(ctx, ix.ObjectsIndex(), indexdoc.DocID(child.ID, onChild[0])); err != nil {
		t.Fatalf("object on the child: %v", err)
	}
	if _, err := s.DeleteBranch(ctx, fmt.Sprint(child.ID), editor); err != nil {
		t.Fatal(err)
	}
	drain(t, st, ix)
	for _, docID := range []string{indexdoc.DocID(child.ID, onChild[0]), indexdoc.DocID(child.ID, id), indexdoc.DocID(child.ID, local[0]), indexdoc.DocID(4, child.ID)} {
		if _, err := eng.Get(ctx, ix.ObjectsIndex(), docID); !errors.Is(err, search.ErrNotFound) {
			t.Errorf("document %s after the branch was deleted: %v, want a tombstone", docID, err)
		}
	}
}
