// Package searchtest is the conformance suite every search.Engine must pass.
// Both the embedded (Bleve) and the distributed (Elasticsearch) engine run it
// from their tests; any difference between them is a bug in one of them.
package searchtest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/search"
	"github.com/cmsplatform/cms/pkg/testenv"
)

// Factory returns a fresh engine for one test; it registers its own cleanup
// (closing the engine, deleting what the test left behind).
type Factory func(t *testing.T) search.Engine

// Run runs the whole suite against engines made by factory.
func Run(t *testing.T, factory Factory) {
	testenv.RunCases(t, factory, []testenv.Case[search.Engine]{
		{Name: "EnsureIndex", Run: testEnsureIndex},
		{Name: "BulkAndGet", Run: testBulkAndGet},
		{Name: "InvalidDocumentWritesNothing", Run: testInvalidDocument},
		{Name: "Queries", Run: testQueries},
		{Name: "InvalidQueries", Run: testInvalidQueries},
		{Name: "Sort", Run: testSort},
		{Name: "InMemorySort", Run: testInMemorySort},
		{Name: "Paging", Run: testPaging},
		{Name: "Count", Run: testCount},
		{Name: "TermsAggregations", Run: testAggs},
		{Name: "FilteredAggregations", Run: testFilteredAggs},
		{Name: "StaleVersionIgnored", Run: testStaleVersion},
		{Name: "DeleteTombstone", Run: testDeleteTombstone},
		{Name: "OrderWithinBulk", Run: testOrderWithinBulk},
		{Name: "RefreshReadYourWrites", Run: testRefresh},
		{Name: "DeleteIndex", Run: testDeleteIndex},
		{Name: "Stored", Run: testStored},
		{Name: "Aliases", Run: testAliases},
		{Name: "KeywordPrefixes", Run: testKeywordPrefixes},
	})
}

var seq atomic.Int64

// IndexName returns a unique valid index name for t.
func IndexName(t testing.TB) string {
	base := strings.ToLower(t.Name())
	base = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, base)
	if len(base) > 60 {
		base = base[len(base)-60:]
	}
	return fmt.Sprintf("t%d-%d-%s", time.Now().UnixNano()%1e6, seq.Add(1), strings.Trim(base, "-"))
}

// ProductMapping is the mapping of the fixture documents.
var ProductMapping = search.Mapping{Fields: map[string]search.Kind{
	"title":     search.Text,
	"body":      search.Text,
	"category":  search.Keyword,
	"tags":      search.Keyword,
	"price":     search.Double,
	"stock":     search.Long,
	"active":    search.Bool,
	"published": search.Date,
}}

func day(d int) time.Time { return time.Date(2024, 1, d, 12, 0, 0, 0, time.UTC) }

// Products returns the fixture documents, all at version 1.
func Products() []search.Document {
	doc := func(id string, f map[string]any) search.Document {
		return search.Document{ID: id, Version: 1, Fields: f}
	}
	return []search.Document{
		doc("p1", map[string]any{"title": "Red Apple", "body": "A crisp fruit from the orchard", "category": "fruit",
			"tags": []string{"red", "sweet"}, "price": 1.5, "stock": 10, "active": true, "published": day(1)}),
		doc("p2", map[string]any{"title": "Green Apple", "body": "Sour and crisp", "category": "fruit",
			"tags": []string{"green", "sour"}, "price": 1.25, "stock": 5, "active": true, "published": day(2)}),
		doc("p3", map[string]any{"title": "Banana", "body": "Yellow fruit, sweet", "category": "fruit",
			"tags": []string{"sweet"}, "price": 0.5, "stock": 100, "active": false, "published": day(3)}),
		doc("p4", map[string]any{"title": "Carrot", "body": "An orange root vegetable", "category": "vegetable",
			"tags": []string{"orange"}, "price": 0.75, "stock": 40, "active": true, "published": day(4)}),
		doc("p5", map[string]any{"title": "Apple Pie", "body": "Baked with red apples", "category": "bakery",
			"price": 12.0, "stock": 2, "active": true, "published": "2024-01-05T12:00:00Z"}),
		doc("p6", map[string]any{"title": "Mystery Box", "category": "misc"}),
	}
}

// setup ensures a fresh index with ProductMapping, loads docs and refreshes.
func setup(t *testing.T, e search.Engine, docs []search.Document) string {
	t.Helper()
	ctx := context.Background()
	name := IndexName(t)
	if err := e.EnsureIndex(ctx, name, ProductMapping); err != nil {
		t.Fatalf("EnsureIndex: %v", err)
	}
	ops := make([]search.Op, len(docs))
	for i, d := range docs {
		ops[i] = search.Upsert(d)
	}
	if len(ops) > 0 {
		res, err := e.Bulk(ctx, name, ops)
		if err != nil {
			t.Fatalf("Bulk: %v", err)
		}
		if res.Applied != len(ops) || res.Stale != 0 {
			t.Fatalf("Bulk result = %+v, want %d applied", res, len(ops))
		}
	}
	refresh(t, e, name)
	return name
}

func refresh(t *testing.T, e search.Engine, index string) {
	t.Helper()
	if err := e.Refresh(context.Background(), index); err != nil {
		t.Fatalf("Refresh: %v", err)
	}
}

func bulk(t *testing.T, e search.Engine, index string, ops ...search.Op) search.BulkResult {
	t.Helper()
	res, err := e.Bulk(context.Background(), index, ops)
	if err != nil {
		t.Fatalf("Bulk: %v", err)
	}
	return res
}

func mustSearch(t *testing.T, e search.Engine, req search.SearchRequest) search.SearchResult {
	t.Helper()
	res, err := e.Search(context.Background(), req)
	if err != nil {
		t.Fatalf("Search(%+v): %v", req, err)
	}
	return res
}

// ids returns the hit ids in order.
func ids(res search.SearchResult) []string {
	out := make([]string, len(res.Hits))
	for i, h := range res.Hits {
		out[i] = h.ID
	}
	return out
}

func wantIDs(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: ids = %v, want %v", what, got, want)
	}
}

func wantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("%s: err = %v, want %v", what, err, target)
	}
}
