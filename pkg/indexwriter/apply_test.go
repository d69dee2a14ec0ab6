package indexwriter_test

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/cmsplatform/cms/pkg/auth"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/indexwriter"
	"github.com/cmsplatform/cms/pkg/search"
	"github.com/cmsplatform/cms/pkg/search/bleve"
	"github.com/cmsplatform/cms/pkg/store"
)

func vin(attr, lang int64, v any) content.ValueInput {
	b, _ := json.Marshal(v)
	return content.ValueInput{Attribute: attr, Language: lang, JSON: b}
}

var editor = content.Change{Caller: &auth.Principal{Name: "editor"}}

// TestApplyOrderDoesNotMatter writes a history (objects on a parent and a
// child branch, updates, a delete, a branch created and deleted), then
// applies its outbox events to one index in commit order and to another
// shuffled with duplicates: both must end with the same documents and the
// same change-tracking version.
func TestApplyOrderDoesNotMatter(t *testing.T) {
	ctx := context.Background()
	st := bootstrappedStore(t)
	s := content.New(st, nil)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	child, _, err := s.CreateBranch(ctx, editor, []content.ValueInput{vin(1000, 201, "Child"), vin(4000, 0, 4)})
	must(err)
	cb := fmt.Sprint(child.ID)
	_, ids, err := s.CreateObjects(ctx, "4", editor, []content.ObjectInput{
		{TypeID: content.TypeLanguage, Values: []content.ValueInput{vin(1000, 201, "One"), vin(1000, 202, "Eins")}},
		{TypeID: content.TypeLanguage, Values: []content.ValueInput{vin(1000, 201, "Two")}},
	})
	must(err)
	_, err = s.UpdateObjects(ctx, cb, editor, []content.ObjectInput{{ID: ids[0], Values: []content.ValueInput{vin(1000, 201, "One on child")}}})
	must(err)
	_, _, err = s.DeleteObjects(ctx, "4", editor, []string{fmt.Sprint(ids[1])})
	must(err)
	temp, _, err := s.CreateBranch(ctx, editor, []content.ValueInput{vin(1000, 201, "Temp"), vin(4000, 0, child.ID)})
	must(err)
	_, _, err = s.CreateObjects(ctx, fmt.Sprint(temp.ID), editor, []content.ObjectInput{
		{TypeID: content.TypeLanguage, Values: []content.ValueInput{vin(1000, 201, "Temp object")}}})
	must(err)
	_, err = s.DeleteBranch(ctx, fmt.Sprint(temp.ID), editor)
	must(err)
	_, err = s.UpdateObjects(ctx, "4", editor, []content.ObjectInput{{ID: ids[0], Values: []content.ValueInput{vin(1000, 202, "Eins!")}}})
	must(err)

	evs, err := st.ClaimOutbox(ctx, 1000)
	must(err)
	if len(evs) < 8 {
		t.Fatalf("%d outbox events", len(evs))
	}
	inOrder := apply(t, st, evs)
	shuffled := append(append([]store.OutboxEvent{}, evs...), evs[2:5]...)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	mixed := apply(t, st, shuffled)
	if len(inOrder) == 0 || !reflect.DeepEqual(inOrder, mixed) {
		t.Fatalf("in order: %d documents, shuffled: %d; differ", len(inOrder), len(mixed))
	}
	if d, ok := inOrder[indexdoc.DocID(child.ID, ids[0])]; !ok || d[indexdoc.NameField(201)] != "One on child" || d[indexdoc.NameField(202)] != "Eins!" {
		t.Fatalf("child document = %v", d)
	}
	// The soft-deleted object keeps its documents, flagged, on its branch
	// and on the child that inherits it.
	for _, id := range []string{indexdoc.DocID(4, ids[1]), indexdoc.DocID(child.ID, ids[1])} {
		if d, ok := inOrder[id]; !ok || d[indexdoc.FieldDeleted] != true {
			t.Fatalf("deleted object %s: document %v, want one with %s = true", id, d, indexdoc.FieldDeleted)
		}
	}
	for id := range inOrder {
		if strings.HasPrefix(id, fmt.Sprint(temp.ID)+"-") {
			t.Fatalf("document %s of the deleted branch indexed", id)
		}
	}
}

// memIndexer is an indexer of st on a fresh in-memory Bleve engine that
// writes batch objects at a time; the engine closes when the test ends.
func memIndexer(t *testing.T, st store.Store, batch int) (*indexwriter.Indexer, search.Engine) {
	t.Helper()
	eng, err := bleve.New("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Close() })
	ix, err := indexwriter.New(st, eng, indexwriter.Options{Batch: batch})
	if err != nil {
		t.Fatal(err)
	}
	return ix, eng
}

// apply applies evs to a fresh in-memory engine, checks the recorded
// version and returns the documents (id → fields, the version under
// "_version").
func apply(t *testing.T, st store.Store, evs []store.OutboxEvent) map[string]map[string]any {
	t.Helper()
	ctx := context.Background()
	ix, eng := memIndexer(t, st, 7)
	var last int64
	for _, e := range evs {
		if _, err := ix.ApplyPayload(ctx, e.Payload); err != nil {
			t.Fatalf("apply %s: %v", e.Payload, err)
		}
		last = max(last, e.TxID)
	}
	if v, err := ix.CurrentVersion(ctx); err != nil || v != last {
		t.Fatalf("version %d, %v; want %d", v, err, last)
	}
	r, err := eng.Search(ctx, search.SearchRequest{Index: ix.ObjectsIndex(), Size: search.MaxResultWindow})
	if err != nil {
		t.Fatal(err)
	}
	if r.Total != int64(len(r.Hits)) {
		t.Fatalf("%d of %d hits", len(r.Hits), r.Total)
	}
	out := map[string]map[string]any{}
	for _, h := range r.Hits {
		h.Fields["_version"] = h.Version
		out[h.ID] = h.Fields
	}
	return out
}
