package bleve

import (
	"context"
	"fmt"
	"testing"

	"github.com/cmsplatform/cms/pkg/search"
)

// TestPageReadsVersionsInOneTransaction: the hits of a page have their
// versions read in one transaction of the version store, however many
// there are, on every search path (ids, columns, Bleve).
func TestPageReadsVersionsInOneTransaction(t *testing.T) {
	ctx := context.Background()
	e, ix := openDisk(t, t.TempDir())
	defer e.Close()
	var ops []search.Op
	var ids search.IDs
	for i := range 40 {
		id := fmt.Sprintf("d%02d", i)
		ids = append(ids, id)
		ops = append(ops, search.Upsert(search.Document{ID: id, Version: int64(i + 1),
			Fields: map[string]any{"category": fmt.Sprintf("c%d", i%2), "title": "Thing " + id, "price": float64(i)}}))
	}
	if _, err := e.Bulk(ctx, "p", ops); err != nil {
		t.Fatal(err)
	}
	db := ix.versions.(*boltVersions).db
	for _, c := range []struct {
		name string
		req  search.SearchRequest
	}{
		{"ids", search.SearchRequest{Index: "p", Query: ids, Size: 30}},
		{"columns", search.SearchRequest{Index: "p", Query: search.Term{Field: "category", Value: "c0"}, Size: 20,
			Sort: []search.SortField{{Field: "price"}}}},
		{"bleve", search.SearchRequest{Index: "p", Query: search.Match{Field: "title", Text: "thing"}, Size: 25}},
	} {
		if _, err := e.Search(ctx, c.req); err != nil { // builds columns, warms the cache
			t.Fatal(err)
		}
		before := db.Stats().TxN
		res, err := e.Search(ctx, c.req)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Hits) < 20 {
			t.Fatalf("%s: %d hits, the test wants a page of at least 20", c.name, len(res.Hits))
		}
		if n := db.Stats().TxN - before; n != 1 {
			t.Errorf("%s: a page of %d hits took %d read transactions of the version store, want 1", c.name, len(res.Hits), n)
		}
	}
}
