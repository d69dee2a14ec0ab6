package bleve

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/cmsplatform/cms/pkg/search"
	"github.com/cmsplatform/cms/pkg/search/searchtest"
)

// openDisk opens the engine in dir with index "p" (ProductMapping).
func openDisk(tb testing.TB, dir string) (*Engine, *index) {
	tb.Helper()
	e, err := New(dir)
	if err != nil {
		tb.Fatal(err)
	}
	if err := e.EnsureIndex(context.Background(), "p", searchtest.ProductMapping); err != nil {
		tb.Fatal(err)
	}
	ix, err := e.lookup("p")
	if err != nil {
		tb.Fatal(err)
	}
	return e, ix
}

// writeLegacy indexes docs and deletes the way indexes were written
// before the version store: each version record a Bleve internal key in
// the batch of its document.
func writeLegacy(t testing.TB, ix *index, docs []search.Document, deletes map[string]int64) {
	t.Helper()
	b := ix.bi.NewBatch()
	for _, d := range docs {
		bd, err := ix.toBleve(d)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Index(d.ID, bd); err != nil {
			t.Fatal(err)
		}
		b.SetInternal(versionKey(d.ID), versionRec{ver: d.Version}.encode())
	}
	for id, v := range deletes {
		b.Delete(id)
		b.SetInternal(versionKey(id), versionRec{ver: v, deleted: true}.encode())
	}
	if err := ix.bi.Batch(b); err != nil {
		t.Fatal(err)
	}
}

// TestLegacyInternalVersions opens an index whose versions and tombstones
// are Bleve internal keys (written before the version store existed):
// reads, stale checks and totals use them, writes move them to the store,
// and the index stays legacy across reopening.
func TestLegacyInternalVersions(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "p")
	ix, err := createIndex(path, searchtest.ProductMapping)
	if err != nil {
		t.Fatal(err)
	}
	doc := func(id string, v int64, category string) search.Document {
		return search.Document{ID: id, Version: v, Fields: map[string]any{"category": category}}
	}
	writeLegacy(t, ix, []search.Document{doc("a", 3, "old"), doc("b", 4, "old")}, map[string]int64{"gone": 9})
	if err := ix.close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(path, versionsFile)); err != nil {
		t.Fatal(err)
	}

	e, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.Get(ctx, "p", "a")
	if err != nil || got.Version != 3 || got.Fields["category"] != "old" {
		t.Fatalf("Get a from a legacy index = %+v, %v", got, err)
	}
	if _, err := e.Get(ctx, "p", "gone"); !errors.Is(err, search.ErrNotFound) {
		t.Fatalf("Get of a legacy tombstone: %v, want not found", err)
	}
	res, err := e.Bulk(ctx, "p", []search.Op{
		search.Upsert(doc("a", 2, "stale")), search.Upsert(doc("gone", 8, "stale")), search.Upsert(doc("b", 5, "new")),
	})
	if err != nil || res.Stale != 2 || res.Applied != 1 {
		t.Fatalf("bulk over legacy versions = %+v, %v; want 2 stale, 1 applied", res, err)
	}
	ix, err = e.lookup("p")
	if err != nil {
		t.Fatal(err)
	}
	if old, _ := ix.bi.GetInternal(versionKey("b")); old != nil {
		t.Errorf("legacy record of b kept after b was written again")
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	// Reopened: the version file exists now, yet a and gone still live in
	// internal keys only.
	e, err = New(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	res, err = e.Bulk(ctx, "p", []search.Op{search.Upsert(doc("gone", 9, "stale")), search.Upsert(doc("a", 3, "stale"))})
	if err != nil || res.Stale != 2 {
		t.Fatalf("bulk after reopening = %+v, %v; want 2 stale", res, err)
	}
	ids, err := e.Search(ctx, search.SearchRequest{Index: "p", Query: search.IDs{"a", "b", "gone"}, Size: 1})
	if err != nil || ids.Total != 2 || len(ids.Hits) != 1 || ids.Hits[0].ID != "a" {
		t.Fatalf("ids search = %+v, %v; want total 2, first hit a", ids, err)
	}
	got, err = e.Get(ctx, "p", "b")
	if err != nil || got.Version != 5 || got.Fields["category"] != "new" {
		t.Fatalf("Get b = %+v, %v", got, err)
	}
}

// TestVersionsAfterLostWrite covers a crash between the Bleve batch and
// the version write: the document is newer than its recorded version, and
// applying the same op again is accepted and leaves the same state.
func TestVersionsAfterLostWrite(t *testing.T) {
	ctx := context.Background()
	e, ix := openDisk(t, t.TempDir())
	defer e.Close()
	up := func(v int64, c string) search.Op {
		return search.Upsert(search.Document{ID: "a", Version: v, Fields: map[string]any{"category": c}})
	}
	if _, err := e.Bulk(ctx, "p", []search.Op{up(1, "one")}); err != nil {
		t.Fatal(err)
	}
	// Version 2 reaches Bleve, its version record is lost.
	bd, err := ix.toBleve(search.Document{ID: "a", Version: 2, Fields: map[string]any{"category": "two"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.bi.Index("a", bd); err != nil {
		t.Fatal(err)
	}
	got, err := e.Get(ctx, "p", "a")
	if err != nil || got.Version != 2 || got.Fields["category"] != "two" {
		t.Fatalf("Get before the replay = %+v, %v; want the document as indexed", got, err)
	}
	res, err := e.Bulk(ctx, "p", []search.Op{up(2, "two")})
	if err != nil || res.Applied != 1 {
		t.Fatalf("replay = %+v, %v; want applied", res, err)
	}
	if res, err := e.Bulk(ctx, "p", []search.Op{up(2, "other")}); err != nil || res.Stale != 1 {
		t.Fatalf("after the replay = %+v, %v; want stale", res, err)
	}
	got, err = e.Get(ctx, "p", "a")
	if err != nil || got.Version != 2 || got.Fields["category"] != "two" {
		t.Fatalf("Get after the replay = %+v, %v", got, err)
	}
}

// TestCompactReclaimsDeletes updates half the documents of an on-disk
// index in two bulks: three segments, few enough for Bleve's merge policy
// to keep them, a third of their documents deleted copies. The compaction
// merges those away.
func TestCompactReclaimsDeletes(t *testing.T) {
	ctx := context.Background()
	e, ix := openDisk(t, t.TempDir())
	defer e.Close()
	const n = 6 * compactMinDeleted
	upsert := func(from, to int, v int64) {
		ops := make([]search.Op, 0, to-from)
		for i := from; i < to; i++ {
			ops = append(ops, search.Upsert(search.Document{ID: fmt.Sprintf("d%05d", i), Version: v,
				Fields: map[string]any{"category": fmt.Sprintf("c%d", v)}}))
		}
		if _, err := e.Bulk(ctx, "p", ops); err != nil {
			t.Fatal(err)
		}
	}
	upsert(0, n, 1)
	upsert(0, n/4, 2)
	upsert(n/4, n/2, 2)
	ix.bg.Wait() // a compaction started by the last bulks
	ix.maybeCompact()
	ix.bg.Wait()
	_, full, live := ix.segmentCounts()
	if live != n || float64(full-live) > compactDeletedRatio*float64(full) {
		t.Fatalf("after compaction: %d documents in segments, %d live; want %d live, at most %.0f%% deleted",
			full, live, n, 100*compactDeletedRatio)
	}
	if res, err := e.Count(ctx, "p", search.Term{Field: "category", Value: "c2"}); err != nil || res != n/2 {
		t.Fatalf("count after compaction = %d, %v; want %d", res, err, n/2)
	}
}
