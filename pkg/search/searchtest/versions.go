package searchtest

import (
	"context"
	"testing"

	"github.com/cmsplatform/cms/pkg/search"
)

func cat(id string, v int64, category string) search.Op {
	return search.Upsert(search.Document{ID: id, Version: v, Fields: map[string]any{"category": category}})
}

func wantDoc(t *testing.T, e search.Engine, index, id string, version int64, category string) {
	t.Helper()
	d, err := e.Get(context.Background(), index, id)
	if err != nil {
		t.Fatalf("Get %s: %v", id, err)
	}
	if d.Version != version || d.Fields["category"] != category {
		t.Errorf("Get %s = version %d, category %v; want %d, %q", id, d.Version, d.Fields["category"], version, category)
	}
}

func wantGone(t *testing.T, e search.Engine, index, id string) {
	t.Helper()
	_, err := e.Get(context.Background(), index, id)
	wantErr(t, "Get "+id, err, search.ErrNotFound)
}

func wantResult(t *testing.T, what string, got search.BulkResult, applied, stale int) {
	t.Helper()
	if got.Applied != applied || got.Stale != stale {
		t.Errorf("%s: bulk result %+v, want applied %d, stale %d", what, got, applied, stale)
	}
}

func testStaleVersion(t *testing.T, e search.Engine) {
	name := setup(t, e, nil)
	wantResult(t, "v5", bulk(t, e, name, cat("a", 5, "new")), 1, 0)
	wantResult(t, "older v3", bulk(t, e, name, cat("a", 3, "old")), 0, 1)
	wantResult(t, "equal v5", bulk(t, e, name, cat("a", 5, "same")), 0, 1)
	wantDoc(t, e, name, "a", 5, "new")
	refresh(t, e, name)
	res := mustSearch(t, e, search.SearchRequest{Index: name, Size: 10, Query: search.Terms{Field: "category", Values: []any{"old", "same"}}})
	wantIDs(t, "stale values not searchable", ids(res), nil)
	res = mustSearch(t, e, search.SearchRequest{Index: name, Size: 10, Query: search.Term{Field: "category", Value: "new"}})
	if len(res.Hits) != 1 || res.Hits[0].Version != 5 {
		t.Errorf("search hit = %+v, want a at version 5", res.Hits)
	}
	wantResult(t, "newer v6", bulk(t, e, name, cat("a", 6, "newest")), 1, 0)
	wantDoc(t, e, name, "a", 6, "newest")
}

func testDeleteTombstone(t *testing.T, e search.Engine) {
	name := setup(t, e, nil)
	bulk(t, e, name, cat("a", 1, "x"))
	wantResult(t, "delete v5", bulk(t, e, name, search.Delete("a", 5)), 1, 0)
	wantGone(t, e, name, "a")
	wantResult(t, "late upsert v3", bulk(t, e, name, cat("a", 3, "zombie")), 0, 1)
	wantResult(t, "late delete v4", bulk(t, e, name, search.Delete("a", 4)), 0, 1)
	wantGone(t, e, name, "a")
	refresh(t, e, name)
	if n, err := e.Count(context.Background(), name, nil); err != nil || n != 0 {
		t.Errorf("Count after delete = %d, %v; want 0", n, err)
	}
	wantResult(t, "recreate v6", bulk(t, e, name, cat("a", 6, "back")), 1, 0)
	wantDoc(t, e, name, "a", 6, "back")

	// A delete that arrives before the document ever existed still leaves a
	// tombstone.
	wantResult(t, "delete unknown v5", bulk(t, e, name, search.Delete("ghost", 5)), 1, 0)
	wantResult(t, "older create v4", bulk(t, e, name, cat("ghost", 4, "boo")), 0, 1)
	wantGone(t, e, name, "ghost")
	wantResult(t, "newer create v7", bulk(t, e, name, cat("ghost", 7, "alive")), 1, 0)
	wantDoc(t, e, name, "ghost", 7, "alive")
}

func testOrderWithinBulk(t *testing.T, e search.Engine) {
	name := setup(t, e, nil)
	res := bulk(t, e, name, cat("o", 3, "a"), cat("o", 2, "b"), cat("o", 4, "c"), search.Delete("o", 1), cat("p", 1, "p"))
	wantResult(t, "mixed bulk", res, 3, 2)
	wantDoc(t, e, name, "o", 4, "c")
	res = bulk(t, e, name, search.Delete("p", 2), cat("p", 3, "q"), search.Delete("p", 4))
	wantResult(t, "delete, recreate, delete", res, 3, 0)
	wantGone(t, e, name, "p")
}

func testRefresh(t *testing.T, e search.Engine) {
	ctx := context.Background()
	name := setup(t, e, Products())
	fruit := search.Term{Field: "category", Value: "fruit"}
	count := func(q search.Query) int64 {
		t.Helper()
		n, err := e.Count(ctx, name, q)
		if err != nil {
			t.Fatalf("Count: %v", err)
		}
		return n
	}
	bulk(t, e, name, cat("p7", 1, "fruit"))
	wantDoc(t, e, name, "p7", 1, "fruit") // Get is real-time, before Refresh.
	refresh(t, e, name)
	if n := count(fruit); n != 4 {
		t.Errorf("after adding p7: %d fruit, want 4", n)
	}
	bulk(t, e, name, cat("p1", 2, "veg2"), search.Delete("p2", 2))
	refresh(t, e, name)
	if n := count(fruit); n != 2 {
		t.Errorf("after moving p1, deleting p2: %d fruit, want 2", n)
	}
	res := mustSearch(t, e, search.SearchRequest{Index: name, Size: 5, Query: search.Term{Field: "category", Value: "veg2"}})
	if len(res.Hits) != 1 || res.Hits[0].ID != "p1" || res.Hits[0].Version != 2 || len(res.Hits[0].Fields) != 1 {
		t.Errorf("updated p1 = %+v, want version 2 with only category", res.Hits)
	}
}

func testDeleteIndex(t *testing.T, e search.Engine) {
	ctx := context.Background()
	name := setup(t, e, Products())
	bulk(t, e, name, search.Delete("p1", 9))
	if err := e.DeleteIndex(ctx, name); err != nil {
		t.Fatalf("DeleteIndex: %v", err)
	}
	_, err := e.Get(ctx, name, "p2")
	wantErr(t, "Get after DeleteIndex", err, search.ErrIndexNotFound)
	wantErr(t, "DeleteIndex again", e.DeleteIndex(ctx, name), search.ErrIndexNotFound)
	if err := e.EnsureIndex(ctx, name, ProductMapping); err != nil {
		t.Fatalf("EnsureIndex after delete: %v", err)
	}
	refresh(t, e, name)
	if n, err := e.Count(ctx, name, nil); err != nil || n != 0 {
		t.Errorf("Count of recreated index = %d, %v; want 0", n, err)
	}
	// Tombstones went with the index.
	wantResult(t, "upsert into recreated index", bulk(t, e, name, cat("p1", 1, "fresh")), 1, 0)
	wantDoc(t, e, name, "p1", 1, "fresh")
}
