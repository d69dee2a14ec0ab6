package bleve_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/cmsplatform/cms/pkg/search"
	"github.com/cmsplatform/cms/pkg/search/bleve"
	"github.com/cmsplatform/cms/pkg/search/searchtest"
)

func TestConformanceOnDisk(t *testing.T) {
	searchtest.Run(t, func(t *testing.T) search.Engine {
		e, err := bleve.New(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = e.Close() })
		return e
	})
}

func TestConformanceInMemory(t *testing.T) {
	searchtest.Run(t, func(t *testing.T) search.Engine { return newMemoryEngine(t) })
}

// TestConformanceWithoutColumns runs the suite with the column index off,
// as for an index over the column budget: every search is Bleve's.
func TestConformanceWithoutColumns(t *testing.T) {
	searchtest.Run(t, func(t *testing.T) search.Engine {
		e, err := bleve.New("", bleve.WithColumnBudget(0))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = e.Close() })
		return e
	})
}

// newMemoryEngine is an in-memory engine, closed when the test ends.
func newMemoryEngine(tb testing.TB) *bleve.Engine {
	tb.Helper()
	e, err := bleve.New("")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = e.Close() })
	return e
}

// TestReopen checks that documents, versions, tombstones and the mapping
// survive closing and reopening an on-disk engine.
func TestReopen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e, err := bleve.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.EnsureIndex(ctx, "products", searchtest.ProductMapping); err != nil {
		t.Fatal(err)
	}
	doc := search.Document{ID: "a", Version: 3, Fields: map[string]any{"category": "x"}}
	if _, err := e.Bulk(ctx, "products", []search.Op{search.Upsert(doc), search.Delete("b", 7)}); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Get(ctx, "products", "a"); err == nil {
		t.Fatal("Get after Close succeeded")
	}

	e, err = bleve.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := e.EnsureIndex(ctx, "products", searchtest.ProductMapping); err != nil {
		t.Fatalf("EnsureIndex on reopened index: %v", err)
	}
	got, err := e.Get(ctx, "products", "a")
	if err != nil || got.Version != 3 || got.Fields["category"] != "x" {
		t.Fatalf("Get after reopen = %+v, %v", got, err)
	}
	res, err := e.Bulk(ctx, "products", []search.Op{
		search.Upsert(search.Document{ID: "a", Version: 2}),
		search.Upsert(search.Document{ID: "b", Version: 6}),
	})
	if err != nil || res.Stale != 2 {
		t.Fatalf("stale ops after reopen: %+v, %v; want 2 stale", res, err)
	}
}

// BenchmarkBulkAndAggregate indexes 1000 documents in one Bulk call and runs
// a terms aggregation over them.
func BenchmarkBulkAndAggregate(b *testing.B) {
	ctx := context.Background()
	m := search.Mapping{Fields: map[string]search.Kind{
		"title": search.Text, "category": search.Keyword, "stock": search.Long,
	}}
	ops := make([]search.Op, 1000)
	for i := range ops {
		ops[i] = search.Upsert(search.Document{ID: fmt.Sprintf("d%04d", i), Version: 1, Fields: map[string]any{
			"title": fmt.Sprintf("document number %d about topic %d", i, i%7), "category": fmt.Sprintf("c%02d", i%25), "stock": i % 100,
		}})
	}
	req := search.SearchRequest{Index: "bench", Query: search.Match{Field: "title", Text: "topic"}, Size: 10,
		Aggs: []search.TermsAgg{{Field: "category", Size: 10}, {Field: "stock", Size: 10}}}
	b.Run("bulk1000", func(b *testing.B) {
		for b.Loop() {
			e, _ := bleve.New("")
			if err := e.EnsureIndex(ctx, "bench", m); err != nil {
				b.Fatal(err)
			}
			if _, err := e.Bulk(ctx, "bench", ops); err != nil {
				b.Fatal(err)
			}
			_ = e.Close()
		}
	})
	b.Run("termsAgg", func(b *testing.B) {
		e, _ := bleve.New("")
		defer e.Close()
		if err := e.EnsureIndex(ctx, "bench", m); err != nil {
			b.Fatal(err)
		}
		if _, err := e.Bulk(ctx, "bench", ops); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			res, err := e.Search(ctx, req)
			if err != nil || res.Total != 1000 || len(res.Aggs["category"].Buckets) != 10 {
				b.Fatalf("search: %v, total %d", err, res.Total)
			}
		}
	})
}
