package indexwriter_test

import (
	"context"
	"fmt"
	"github.com/cmsplatform/cms/pkg/auth"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/indexwriter"
	"github.com/cmsplatform/cms/pkg/search"
	"github.com/cmsplatform/cms/pkg/search/bleve"
	"github.com/cmsplatform/cms/pkg/store"
)

// TestCommentEventsOrderDoesNotMatter writes comments (create, update,
// delete, on a branch that is then deleted) and applies the outbox in
// commit order and shuffled with duplicates: both indexes must hold the
// same comment documents and timestamp; a full IndexAllComments agrees
// on the fields.
func TestCommentEventsOrderDoesNotMatter(t *testing.T) {
	ctx := context.Background()
	st := bootstrappedStore(t)
	s := content.New(st, nil)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	_, ids, err := s.CreateObjects(ctx, "4", editor, []content.ObjectInput{{TypeID: content.TypeLanguage,
		Values: []content.ValueInput{vin(1000, 201, "One")}}})
	must(err)
	obj := ids[0]
	ann := content.Actor{Caller: &auth.Principal{Name: "Ann"}}
	c1, err := s.CreateComment(ctx, ann, 4, obj, `<div>first <span data-user="Bea">@Bea</span></div>`)
	must(err)
	c2, err := s.CreateComment(ctx, ann, 4, obj, `<div>second</div>`)
	must(err)
	must(s.UpdateComment(ctx, ann, c1.ID, `<div>first, edited</div>`))
	must(s.DeleteComment(ctx, ann, c2.ID))
	temp, _, err := s.CreateBranch(ctx, editor, []content.ValueInput{vin(1000, 201, "Temp"), vin(4000, 0, 4)})
	must(err)
	cTemp, err := s.CreateComment(ctx, ann, temp.ID, obj, `<div>on temp</div>`)
	must(err)
	_, err = s.DeleteBranch(ctx, fmt.Sprint(temp.ID), editor)
	must(err)
	last, err := s.GetComment(ctx, c2.ID)
	must(err)

	evs, err := st.ClaimOutbox(ctx, 1000)
	must(err)
	inOrder, ts1 := applyComments(t, st, evs)
	shuffled := append(append([]store.OutboxEvent{}, evs...), evs[1:4]...)
	rand.New(rand.NewPCG(3, 4)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	mixed, _ := applyComments(t, st, shuffled)
	if !reflect.DeepEqual(inOrder, mixed) {
		t.Fatalf("in order %v\nshuffled %v", inOrder, mixed)
	}
	if len(inOrder) != 2 {
		t.Fatalf("documents %v, want c1 and c2 (c%d purged with its branch)", inOrder, cTemp.ID)
	}
	d1 := inOrder[indexdoc.CommentDocID(c1.ID)]
	if d1[indexdoc.FieldCommentText] != "first, edited" || d1[indexdoc.FieldCommentMentioned] != nil ||
		d1[indexdoc.FieldCommentObjectType] != content.TypeLanguage || d1[indexdoc.FieldCommentUserKey] != "ann" ||
		d1[indexdoc.FieldCommentDeleted] != false {
		t.Errorf("c1 document %v", d1)
	}
	if d2 := inOrder[indexdoc.CommentDocID(c2.ID)]; d2[indexdoc.FieldCommentDeleted] != true {
		t.Errorf("c2 document %v", d2)
	}
	// The timestamp is the last comment transaction's time (the branch
	// deletion is not a comment event): c2's deletion came after c1's edit
	// but before the temp branch comment.
	if !ts1.After(last.Modified) && !ts1.Equal(last.Modified) {
		t.Errorf("timestamp %v before c2's deletion %v", ts1, last.Modified)
	}

	// A full rebuild of the comments index agrees with the events (but
	// the purged comment is gone from the store, so it is not rebuilt).
	eng, err := bleve.New("")
	must(err)
	defer eng.Close()
	ix, err := indexwriter.New(st, eng, indexwriter.Options{})
	must(err)
	_, err = ix.IndexAllComments(ctx, evs[len(evs)-1].TxID)
	must(err)
	full := commentDocs(t, eng, ix)
	for id, d := range inOrder {
		f := full[id]
		delete(d, "_version")
		delete(f, "_version")
		if !reflect.DeepEqual(d, f) {
			t.Errorf("%s: events %v, full %v", id, d, f)
		}
	}
}

// applyComments applies evs to a fresh engine and returns the comment
// documents (version under "_version") and the comment timestamp.
func applyComments(t *testing.T, st store.Store, evs []store.OutboxEvent) (map[string]map[string]any, time.Time) {
	t.Helper()
	ctx := context.Background()
	ix, eng := memIndexer(t, st, 3)
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
	ts, ok, err := ix.CommentTimestamp(ctx)
	if err != nil || !ok {
		t.Fatalf("comment timestamp: %v %v", ok, err)
	}
	return commentDocs(t, eng, ix), ts
}

func commentDocs(t *testing.T, eng search.Engine, ix *indexwriter.Indexer) map[string]map[string]any {
	t.Helper()
	r, err := eng.Search(context.Background(), search.SearchRequest{Index: ix.CommentsIndex(), Size: search.MaxResultWindow})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]any{}
	for _, h := range r.Hits {
		h.Fields["_version"] = h.Version
		out[h.ID] = h.Fields
	}
	return out
}
