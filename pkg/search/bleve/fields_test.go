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
