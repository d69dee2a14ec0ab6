package bleve_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/cmsplatform/cms/pkg/search"
)

// BenchmarkSearchIDsFields reads 1000 cached documents of 20 fields by id,
// whole ("all") and only their stored source ("source"), as Delivery
// resolves references.
func BenchmarkSearchIDsFields(b *testing.B) {
	ctx := context.Background()
	e := newMemoryEngine(b)
	m := search.Mapping{Fields: map[string]search.Kind{"src": search.Stored}}
	for i := range 19 {
		m.Fields[fmt.Sprintf("k%d", i)] = search.Keyword
	}
	if err := e.EnsureIndex(ctx, "b", m); err != nil {
		b.Fatal(err)
	}
	var ops []search.Op
	var ids search.IDs
	for d := range 1000 {
		f := map[string]any{"src": strings.Repeat("x", 500)}
		for i := range 19 {
			if i%3 == 0 {
				f[fmt.Sprintf("k%d", i)] = []any{"a", "b", "c"}
			} else {
				f[fmt.Sprintf("k%d", i)] = "v"
			}
		}
		id := fmt.Sprintf("d%04d", d)
		ids = append(ids, id)
		ops = append(ops, search.Upsert(search.Document{ID: id, Version: 1, Fields: f}))
	}
	if _, err := e.Bulk(ctx, "b", ops); err != nil {
		b.Fatal(err)
	}
	if err := e.Refresh(ctx, "b"); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		fields []string
	}{{"all", nil}, {"source", []string{"src"}}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				res, err := e.Search(ctx, search.SearchRequest{Index: "b", Query: ids, Size: len(ids), Fields: c.fields})
				if err != nil || len(res.Hits) != len(ids) {
					b.Fatalf("%d hits, %v", len(res.Hits), err)
				}
			}
		})
	}
}

// TestHeldHitsComeWithoutFields: the embedded engine honours
// SearchRequest.Held on each way it answers a page (an ids query, the
// column index, a Bleve search): a held version is neither read nor
// decoded, any other is. The conformance suite (searchtest, Held) checks
// what every engine must do.
func TestHeldHitsComeWithoutFields(t *testing.T) {
	ctx := context.Background()
	e := newMemoryEngine(t)
	if err := e.EnsureIndex(ctx, "h", search.Mapping{Fields: map[string]search.Kind{"k": search.Keyword,
		"n": search.Long, "t": search.Text, "src": search.Stored}}); err != nil {
		t.Fatal(err)
	}
	var ops []search.Op
	for i := range 6 {
		ops = append(ops, search.Upsert(search.Document{ID: fmt.Sprintf("d%d", i), Version: int64(10 + i),
			Fields: map[string]any{"k": "x", "n": int64(i), "t": "some words", "src": fmt.Sprintf(`{"i":%d}`, i)}}))
	}
	if _, err := e.Bulk(ctx, "h", ops); err != nil {
		t.Fatal(err)
	}
	if err := e.Refresh(ctx, "h"); err != nil {
		t.Fatal(err)
	}
	// Even ids are held at their version; d4 at an older one.
	held := func(id string, v int64) bool {
		return (id == "d0" && v == 10) || (id == "d2" && v == 12) || (id == "d4" && v == 13)
	}
	for _, c := range []struct {
		name string
		req  search.SearchRequest
	}{
		{"ids", search.SearchRequest{Query: search.IDs{"d0", "d1", "d2", "d3", "d4", "d5"}, Size: 6}},
		{"columns", search.SearchRequest{Query: search.Term{Field: "k", Value: "x"}, Sort: []search.SortField{{Field: "n"}}, Size: 6}},
		{"bleve", search.SearchRequest{Query: search.Match{Field: "t", Text: "words"}, Sort: []search.SortField{{Field: "n"}}, Size: 6}},
	} {
		c.req.Index, c.req.Fields, c.req.Held = "h", []string{"src"}, held
		res, err := e.Search(ctx, c.req)
		if err != nil || len(res.Hits) != 6 {
			t.Fatalf("%s: %d hits, %v", c.name, len(res.Hits), err)
		}
		for _, h := range res.Hits {
			wantNone := h.ID == "d0" || h.ID == "d2"
			if (h.Fields == nil) != wantNone {
				t.Errorf("%s: %s v%d fields %v, want none: %v", c.name, h.ID, h.Version, h.Fields, wantNone)
			}
		}
	}
}
