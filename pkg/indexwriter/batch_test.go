package indexwriter_test

import (
	"context"
	"fmt"
	"github.com/cmsplatform/cms/pkg/auth"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cmsplatform/cms/pkg/changes"
	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/indexwriter"
	"github.com/cmsplatform/cms/pkg/search"
	"github.com/cmsplatform/cms/pkg/search/bleve"
	"github.com/cmsplatform/cms/pkg/store"
)

// batchHistory writes a mixed history: objects of a custom type on the
// default and a child branch, repeated updates of one object, a language
// object renamed, a comment, a deleted object and a branch created and
// deleted. It returns the events in commit order and the deleted object.
func batchHistory(t *testing.T, st store.Store) ([]changes.Event, int64) {
	t.Helper()
	ctx := context.Background()
	s := content.New(st, nil)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	_, typ, err := s.CreateObjects(ctx, "4", editor, []content.ObjectInput{{TypeID: content.RootID}})
	must(err)
	child, _, err := s.CreateBranch(ctx, editor, []content.ValueInput{vin(1000, 201, "Child"), vin(4000, 0, 4)})
	must(err)
	cb := fmt.Sprint(child.ID)
	var ids []int64
	for i := range 6 {
		_, id, err := s.CreateObjects(ctx, "4", editor, []content.ObjectInput{{TypeID: typ[0],
			Values: []content.ValueInput{vin(1000, 201, fmt.Sprint("Object ", i))}}})
		must(err)
		ids = append(ids, id...)
	}
	for i := range 5 {
		_, err = s.UpdateObjects(ctx, "4", editor, []content.ObjectInput{{ID: ids[0],
			Values: []content.ValueInput{vin(1000, 201, fmt.Sprint("Zero, edit ", i))}}})
		must(err)
	}
	_, err = s.UpdateObjects(ctx, cb, editor, []content.ObjectInput{{ID: ids[1], Values: []content.ValueInput{vin(1000, 202, "Eins")}}})
	must(err)
	_, err = s.UpdateObjects(ctx, "4", editor, []content.ObjectInput{{ID: content.LanguageEnUS,
		Values: []content.ValueInput{vin(1000, 201, "English")}}})
	must(err)
	_, err = s.CreateComment(ctx, content.Actor{Caller: &auth.Principal{Name: "Ann"}}, 4, ids[2], `<div>a comment</div>`)
	must(err)
	_, _, err = s.DeleteObjects(ctx, "4", editor, []string{fmt.Sprint(ids[3])})
	must(err)
	temp, _, err := s.CreateBranch(ctx, editor, []content.ValueInput{vin(1000, 201, "Temp"), vin(4000, 0, child.ID)})
	must(err)
	_, _, err = s.CreateObjects(ctx, fmt.Sprint(temp.ID), editor, []content.ObjectInput{{TypeID: typ[0],
		Values: []content.ValueInput{vin(1000, 201, "On temp")}}})
	must(err)
	_, err = s.DeleteBranch(ctx, fmt.Sprint(temp.ID), editor)
	must(err)
	_, err = s.UpdateObjects(ctx, "4", editor, []content.ObjectInput{{ID: ids[4], Values: []content.ValueInput{vin(1000, 201, "Four")}}})
	must(err)
	out, err := st.ClaimOutbox(ctx, 1000)
	must(err)
	evs := make([]changes.Event, 0, len(out))
	for _, oe := range out {
		ev, err := changes.Parse(oe.Payload)
		must(err)
		evs = append(evs, ev)
	}
	return evs, ids[3]
}

// TestApplyBatchEqualsApply applies one history event by event and in
// batches of several sizes: every batch size must leave the same documents
// (sources and fields), comments and change-tracking version, with every
// document versioned at least with the last transaction it shows.
func TestApplyBatchEqualsApply(t *testing.T) {
	st := bootstrappedStore(t)
	evs, deleted := batchHistory(t, st)
	want := applyInBatches(t, st, evs, 1)
	if len(want) == 0 {
		t.Fatal("no documents")
	}
	for _, size := range []int{3, 8, len(evs)} {
		got := applyInBatches(t, st, evs, size)
		if !reflect.DeepEqual(withoutVersions(got), withoutVersions(want)) {
			t.Errorf("batches of %d: documents differ from one event at a time:\n got  %v\n want %v",
				size, slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
		}
		for id, d := range got {
			if !strings.HasPrefix(id, indexdoc.ObjectsIndex+"/") {
				continue
			}
			src, err := indexdoc.DecodeSource(d)
			if err != nil {
				t.Fatalf("%s: %v", id, err)
			}
			if v := d["_version"].(int64); v < src.LastTransaction {
				t.Errorf("batches of %d: %s versioned %d, older than its state (%d)", size, id, v, src.LastTransaction)
			}
		}
		if d, ok := got[indexdoc.ObjectsIndex+"/"+indexdoc.DocID(content.BranchDefault, deleted)]; !ok || d[indexdoc.FieldDeleted] != true {
			t.Errorf("batches of %d: deleted object %d: document %v, want one with %s = true", size, deleted, d, indexdoc.FieldDeleted)
		}
	}
}

// TestApplyBatchCoalesces: five updates of one object in one batch build
// its document once per branch, and replaying the batch's first event
// afterwards (an older version) writes nothing.
func TestApplyBatchCoalesces(t *testing.T) {
	ctx := context.Background()
	st := bootstrappedStore(t)
	s := content.New(st, nil)
	_, typ, err := s.CreateObjects(ctx, "4", editor, []content.ObjectInput{{TypeID: content.RootID}})
	if err != nil {
		t.Fatal(err)
	}
	_, ids, err := s.CreateObjects(ctx, "4", editor, []content.ObjectInput{{TypeID: typ[0],
		Values: []content.ValueInput{vin(1000, 201, "Object")}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.ClaimOutbox(ctx, 1000); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if _, err := s.UpdateObjects(ctx, "4", editor, []content.ObjectInput{{ID: ids[0],
			Values: []content.ValueInput{vin(1000, 201, fmt.Sprint("Edit ", i))}}}); err != nil {
			t.Fatal(err)
		}
	}
	out, err := st.ClaimOutbox(ctx, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var evs []changes.Event
	for _, oe := range out {
		ev, err := changes.Parse(oe.Payload)
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	eng, err := bleve.New("")
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	ix, err := indexwriter.New(st, eng, indexwriter.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := ix.ApplyBatch(ctx, evs)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 5 || res.Ops != 1 || res.Applied != 1 {
		t.Fatalf("%d events: %+v, want one op applied", len(evs), res)
	}
	doc, err := eng.Get(ctx, ix.ObjectsIndex(), indexdoc.DocID(content.BranchDefault, ids[0]))
	if err != nil || doc.Version != evs[4].Transaction || doc.Fields[indexdoc.NameField(201)] != "Edit 4" {
		t.Fatalf("document %+v, %v; want version %d and the last name", doc, err, evs[4].Transaction)
	}
	if v, err := ix.CurrentVersion(ctx); err != nil || v != evs[4].Transaction {
		t.Fatalf("version %d, %v; want %d", v, err, evs[4].Transaction)
	}
	res, err = ix.ApplyBatch(ctx, evs[:1])
	if err != nil || res.Applied != 0 || res.Stale != 1 {
		t.Fatalf("replay: %+v, %v; want one stale op", res, err)
	}
}

// applyInBatches applies evs in batches of size (1: Apply) to a fresh
// in-memory engine, checks the recorded version and returns the object
// and comment documents (id → fields, the version under "_version").
func applyInBatches(t *testing.T, st store.Store, evs []changes.Event, size int) map[string]map[string]any {
	t.Helper()
	ctx := context.Background()
	ix, eng := memIndexer(t, st, 2)
	for chunk := range slices.Chunk(evs, size) {
		var err error
		if size == 1 {
			_, err = ix.Apply(ctx, chunk[0])
		} else {
			_, err = ix.ApplyBatch(ctx, chunk)
		}
		if err != nil {
			t.Fatalf("apply %+v: %v", chunk, err)
		}
	}
	last := evs[len(evs)-1].Transaction
	if v, err := ix.CurrentVersion(ctx); err != nil || v != last {
		t.Fatalf("batches of %d: version %d, %v; want %d", size, v, err, last)
	}
	out := map[string]map[string]any{}
	for _, index := range []string{ix.ObjectsIndex(), ix.CommentsIndex()} {
		r, err := eng.Search(ctx, search.SearchRequest{Index: index, Size: search.MaxResultWindow})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range r.Hits {
			h.Fields["_version"] = h.Version
			out[index+"/"+h.ID] = h.Fields
		}
	}
	return out
}

// withoutVersions drops the "_version" entries of docs.
func withoutVersions(docs map[string]map[string]any) map[string]map[string]any {
	out := make(map[string]map[string]any, len(docs))
	for id, d := range docs {
		c := maps.Clone(d)
		delete(c, "_version")
		out[id] = c
	}
	return out
}
