package bleve_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/cmsplatform/cms/pkg/search"
	"github.com/cmsplatform/cms/pkg/search/searchtest"
)

// TestIDsPagingAndCache covers the direct-lookup path of a bare IDs query
// (paging, totals, tombstones) and the decoded-document cache (a newer
// version is seen, a caller's changes to a hit do not leak into the next).
func TestIDsPagingAndCache(t *testing.T) {
	ctx := context.Background()
	e := newMemoryEngine(t)
	if err := e.EnsureIndex(ctx, "p", searchtest.ProductMapping); err != nil {
		t.Fatal(err)
	}
	doc := func(id string, v int64, tags ...any) search.Op {
		return search.Upsert(search.Document{ID: id, Version: v, Fields: map[string]any{"category": id, "tags": tags}})
	}
	if _, err := e.Bulk(ctx, "p", []search.Op{doc("c", 1, "x", "y"), doc("a", 1, "x"), doc("b", 1, "z"), doc("d", 1, "w")}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Bulk(ctx, "p", []search.Op{search.Delete("d", 2)}); err != nil {
		t.Fatal(err)
	}
	ids := search.IDs{"d", "c", "zz", "a", "b", "a"}
	var got []string
	var total int64
	for from := 0; from < 4; from++ {
		res, err := e.Search(ctx, search.SearchRequest{Index: "p", Query: ids, From: from, Size: 1})
		if err != nil {
			t.Fatal(err)
		}
		total = res.Total
		for _, h := range res.Hits {
			got = append(got, h.ID)
		}
	}
	if want := []string{"a", "b", "c"}; !reflect.DeepEqual(got, want) || total != 3 {
		t.Fatalf("pages = %v (total %d), want %v (total 3)", got, total, want)
	}

	// Read twice (cache filled), change the hit, read again.
	for range 2 {
		d, err := e.Get(ctx, "p", "c")
		if err != nil {
			t.Fatal(err)
		}
		d.Fields["category"] = "changed"
		d.Fields["tags"] = append(d.Fields["tags"].([]any), "appended")
	}
	d, err := e.Get(ctx, "p", "c")
	if err != nil || d.Fields["category"] != "c" || !reflect.DeepEqual(d.Fields["tags"], []any{"x", "y"}) {
		t.Fatalf("after changing a returned doc: %v %v", d.Fields, err)
	}
	if _, err := e.Bulk(ctx, "p", []search.Op{doc("c", 5, "new")}); err != nil {
		t.Fatal(err)
	}
	res, err := e.Search(ctx, search.SearchRequest{Index: "p", Query: search.Term{Field: "category", Value: "c"}, Size: 5})
	if err != nil || len(res.Hits) != 1 || res.Hits[0].Version != 5 || !reflect.DeepEqual(res.Hits[0].Fields["tags"], []any{"new"}) {
		t.Fatalf("after update: %+v %v", res.Hits, err)
	}
}
