package indexwriter_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/cmsplatform/cms/pkg/auth"
	"strings"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/indexwriter"
	"github.com/cmsplatform/cms/pkg/search"
	"github.com/cmsplatform/cms/pkg/search/bleve"
	"github.com/cmsplatform/cms/pkg/search/elastic"
	"github.com/cmsplatform/cms/pkg/store"
	"github.com/cmsplatform/cms/pkg/testenv"
)

// drain applies and acks every pending outbox event, like the relay and
// the indexer would.
func drain(t *testing.T, st store.Store, ix *indexwriter.Indexer) {
	t.Helper()
	ctx := context.Background()
	for {
		evs, err := st.ClaimOutbox(ctx, 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) == 0 {
			return
		}
		var done []int64
		for _, e := range evs {
			if _, err := ix.ApplyPayload(ctx, e.Payload); err != nil {
				t.Fatalf("apply: %v", err)
			}
			done = append(done, e.ID)
		}
		if err := st.AckOutbox(ctx, done); err != nil {
			t.Fatal(err)
		}
	}
}

// sources returns id → FieldSource of every document of index.
func sources(t *testing.T, eng search.Engine, index string) map[string]string {
	t.Helper()
	r, err := eng.Search(context.Background(), search.SearchRequest{Index: index, Size: search.MaxResultWindow})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, h := range r.Hits {
		out[h.ID], _ = h.Fields[indexdoc.FieldSource].(string)
	}
	return out
}

func sameSources(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	if len(want) == 0 {
		t.Fatalf("%s: empty reference", what)
	}
	for id, src := range want {
		if got[id] != src {
			t.Errorf("%s: document %s = %.120q, want %.120q", what, id, got[id], src)
		}
	}
	for id := range got {
		if _, ok := want[id]; !ok {
			t.Errorf("%s: extra document %s", what, id)
		}
	}
}

// TestRebuild rebuilds while writes are applied mid-build, switches the
// alias over a pre-alias concrete index, rebuilds again (deleting the
// previous index) and repairs one branch in place; each time the index
// must equal a reference built from the final store state.
func TestRebuildBleve(t *testing.T) {
	eng, err := bleve.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	testRebuild(t, eng)
}

// TestRebuildElasticsearch runs the same on the real Elasticsearch
// (skipped without CMS_ELASTICSEARCH_URL, failing under CI=true).
func TestRebuildElasticsearch(t *testing.T) {
	url := testenv.URL(t, testenv.ElasticsearchURL)
	prefix := fmt.Sprintf("cmstest-rebuild-%d-", time.Now().UnixNano())
	eng, err := elastic.New(url, elastic.WithPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = eng.Close()
		testenv.DeleteIndexes(t, url, prefix)
	})
	testRebuild(t, eng)
}

func testRebuild(t *testing.T, eng search.Engine) {
	ctx := context.Background()
	st := bootstrappedStore(t)
	s := content.New(st, nil)
	ix, err := indexwriter.New(st, eng, indexwriter.Options{Batch: 7})
	if err != nil {
		t.Fatal(err)
	}
	child, _, err := s.CreateBranch(ctx, editor, []content.ValueInput{vin(1000, 201, "Child"), vin(4000, 0, 4)})
	if err != nil {
		t.Fatal(err)
	}
	var in []content.ObjectInput
	for i := range 30 {
		in = append(in, content.ObjectInput{TypeID: content.TypeLanguage, Values: []content.ValueInput{vin(1000, 201, fmt.Sprint("L", i))}})
	}
	_, ids, err := s.CreateObjects(ctx, "4", editor, in)
	if err != nil {
		t.Fatal(err)
	}
	drain(t, st, ix)
	al := eng.(search.Aliaser)

	// A comment whose event is lost (claimed and acked, never applied):
	// only Rebuild can bring it into the comments index.
	com, err := s.CreateComment(ctx, content.Actor{Caller: &auth.Principal{Name: "ann"}}, 4, ids[1], "<div>Lost <b>event</b></div>")
	if err != nil {
		t.Fatal(err)
	}
	lostEvs, err := st.ClaimOutbox(ctx, 100)
	if err != nil || len(lostEvs) != 1 {
		t.Fatalf("claim the comment event: %d events, %v", len(lostEvs), err)
	}
	if err := st.AckOutbox(ctx, []int64{lostEvs[0].ID}); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Get(ctx, ix.CommentsIndex(), indexdoc.CommentDocID(com.ID)); err == nil {
		t.Fatalf("comment %d indexed before the rebuild", com.ID)
	}

	// Writes while the new index is built go through Apply as usual.
	var calls int
	var last indexwriter.Progress
	var added []int64
	res, err := ix.Rebuild(ctx, st.LastTransactionID, func(p indexwriter.Progress) {
		calls++
		last = p
		if calls != 2 {
			return
		}
		var err error
		if _, added, err = s.CreateObjects(ctx, "4", editor, []content.ObjectInput{
			{TypeID: content.TypeLanguage, Values: []content.ValueInput{vin(1000, 201, "During rebuild")}}}); err != nil {
			t.Error(err)
		}
		if _, err := s.UpdateObjects(ctx, fmt.Sprint(child.ID), editor, []content.ObjectInput{
			{ID: ids[0], Values: []content.ValueInput{vin(1000, 201, "Changed on child")}}}); err != nil {
			t.Error(err)
		}
		if _, _, err := s.DeleteObjects(ctx, "4", editor, []string{fmt.Sprint(ids[len(ids)-1])}); err != nil {
			t.Error(err)
		}
		drain(t, st, ix)
	})
	if err != nil {
		t.Fatalf("Rebuild: %v", err)
	}
	if calls < 3 || last.Total == 0 || last.Done != last.Total {
		t.Errorf("progress: %d calls, last %+v", calls, last)
	}
	if res.Previous != "" {
		t.Errorf("first rebuild replaced %q, want the concrete index", res.Previous)
	}
	if got, err := al.ResolveAlias(ctx, ix.ObjectsIndex()); err != nil || got != res.Index {
		t.Fatalf("alias → %q, %v; want %q", got, err, res.Index)
	}
	if _, err := eng.Get(ctx, "indexer-reindex", "target"); !errors.Is(err, search.ErrNotFound) {
		t.Errorf("reindex marker left behind: %v", err)
	}
	if res.Comments != 1 {
		t.Errorf("Rebuild wrote %d comment documents, want 1", res.Comments)
	}
	cdoc, err := eng.Get(ctx, ix.CommentsIndex(), indexdoc.CommentDocID(com.ID))
	if err != nil {
		t.Fatalf("comment %d not indexed by Rebuild: %v", com.ID, err)
	}
	if cdoc.Fields[indexdoc.FieldCommentObjectRef] != ids[1] || cdoc.Fields[indexdoc.FieldCommentObjectType] != content.TypeLanguage {
		t.Errorf("rebuilt comment document: %v", cdoc.Fields)
	}
	want := reference(t, st)
	got := sources(t, eng, ix.ObjectsIndex())
	sameSources(t, "after rebuild with concurrent writes", got, want)
	if _, ok := got[indexdoc.DocID(4, added[0])]; !ok {
		t.Errorf("object created during the rebuild is missing")
	}
	if src, ok := got[indexdoc.DocID(4, ids[len(ids)-1])]; !ok || !strings.Contains(src, `"deleted":true`) {
		t.Errorf("object deleted during the rebuild: source %q (indexed %v), want it indexed as deleted", src, ok)
	}

	// A second rebuild deletes the first index.
	res2, err := ix.Rebuild(ctx, st.LastTransactionID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res2.Previous != res.Index {
		t.Errorf("second rebuild replaced %q, want %q", res2.Previous, res.Index)
	}
	if _, err := eng.Count(ctx, res.Index, nil); !errors.Is(err, search.ErrIndexNotFound) {
		t.Errorf("old index still there: %v", err)
	}
	sameSources(t, "after second rebuild", sources(t, eng, ix.ObjectsIndex()), want)

	// RebuildBranch repairs in place: a stray document goes, a lost one comes back.
	stray := indexdoc.DocID(child.ID, 999999)
	lost := indexdoc.DocID(child.ID, ids[3])
	if _, err := eng.Bulk(ctx, ix.ObjectsIndex(), []search.Op{
		search.Upsert(search.Document{ID: stray, Version: 1, Fields: map[string]any{indexdoc.FieldBranch: child.ID, indexdoc.FieldID: int64(999999)}}),
		search.Delete(lost, 2),
	}); err != nil {
		t.Fatal(err)
	}
	// The tombstone of "lost" at version 2 is older than the rebuild's version.
	br, err := ix.RebuildBranch(ctx, child.ID, st.LastTransactionID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if br.Branches != 1 {
		t.Errorf("RebuildBranch covered %d branches", br.Branches)
	}
	sameSources(t, "after branch rebuild", sources(t, eng, ix.ObjectsIndex()), want)
}

// reference builds the documents of the current store state into a fresh
// engine.
func reference(t *testing.T, st store.Store) map[string]string {
	t.Helper()
	eng, err := bleve.New("")
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	ix, err := indexwriter.New(st, eng, indexwriter.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Rebuild(context.Background(), st.LastTransactionID, nil); err != nil {
		t.Fatal(err)
	}
	return sources(t, eng, ix.ObjectsIndex())
}
