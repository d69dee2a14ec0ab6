package searchtest

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/search"
)

func testEnsureIndex(t *testing.T, e search.Engine) {
	ctx := context.Background()
	name := IndexName(t)
	if err := e.EnsureIndex(ctx, name, ProductMapping); err != nil {
		t.Fatalf("EnsureIndex: %v", err)
	}
	if err := e.EnsureIndex(ctx, name, ProductMapping); err != nil {
		t.Fatalf("EnsureIndex again (idempotent): %v", err)
	}
	other := search.Mapping{Fields: map[string]search.Kind{"title": search.Keyword}}
	wantErr(t, "EnsureIndex with other mapping", e.EnsureIndex(ctx, name, other), search.ErrMappingConflict)
	bad := search.Mapping{Fields: map[string]search.Kind{"a.b": search.Keyword}}
	wantErr(t, "EnsureIndex dotted field", e.EnsureIndex(ctx, IndexName(t), bad), search.ErrInvalidMapping)
	bad = search.Mapping{Fields: map[string]search.Kind{"a": "geo"}}
	wantErr(t, "EnsureIndex unknown kind", e.EnsureIndex(ctx, IndexName(t), bad), search.ErrInvalidMapping)
	wantErr(t, "EnsureIndex bad name", e.EnsureIndex(ctx, "Upper", ProductMapping), search.ErrInvalidMapping)

	missing := IndexName(t)
	_, err := e.Bulk(ctx, missing, []search.Op{search.Upsert(Products()[0])})
	wantErr(t, "Bulk on missing index", err, search.ErrIndexNotFound)
	_, err = e.Get(ctx, missing, "p1")
	wantErr(t, "Get on missing index", err, search.ErrIndexNotFound)
	_, err = e.Search(ctx, search.SearchRequest{Index: missing, Size: 1})
	wantErr(t, "Search on missing index", err, search.ErrIndexNotFound)
	_, err = e.Count(ctx, missing, nil)
	wantErr(t, "Count on missing index", err, search.ErrIndexNotFound)
}

func testBulkAndGet(t *testing.T, e search.Engine) {
	ctx := context.Background()
	name := setup(t, e, Products())
	got, err := e.Get(ctx, name, "p1")
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	want := search.Document{ID: "p1", Version: 1, Fields: map[string]any{
		"title": "Red Apple", "body": "A crisp fruit from the orchard", "category": "fruit",
		"tags": []any{"red", "sweet"}, "price": 1.5, "stock": int64(10), "active": true,
		"published": day(1),
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Get p1 = %#v\nwant %#v", got, want)
	}
	p5, err := e.Get(ctx, name, "p5")
	if err != nil {
		t.Fatalf("Get p5: %v", err)
	}
	if ts, ok := p5.Fields["published"].(time.Time); !ok || !ts.Equal(day(5)) {
		t.Errorf("p5 published = %#v, want %v (date from an RFC 3339 string)", p5.Fields["published"], day(5))
	}
	if f, ok := p5.Fields["price"].(float64); !ok || f != 12 {
		t.Errorf("p5 price = %#v, want float64 12", p5.Fields["price"])
	}
	p6, err := e.Get(ctx, name, "p6")
	if err != nil {
		t.Fatalf("Get p6: %v", err)
	}
	if len(p6.Fields) != 2 {
		t.Errorf("p6 fields = %v, want only title and category", p6.Fields)
	}
	_, err = e.Get(ctx, name, "nope")
	wantErr(t, "Get unknown id", err, search.ErrNotFound)

	// Dates keep millisecond precision in UTC, whatever the input zone.
	cet := time.FixedZone("CET", 3600)
	in := time.Date(2024, 2, 1, 13, 0, 0, 123456789, cet)
	bulk(t, e, name, search.Upsert(search.Document{ID: "d", Version: 1, Fields: map[string]any{"published": in}}))
	d, err := e.Get(ctx, name, "d")
	if err != nil {
		t.Fatalf("Get d: %v", err)
	}
	wantT := time.Date(2024, 2, 1, 12, 0, 0, 123000000, time.UTC)
	if ts, _ := d.Fields["published"].(time.Time); !ts.Equal(wantT) || ts.Location() != time.UTC {
		t.Errorf("d published = %v, want %v", d.Fields["published"], wantT)
	}
}

func testInvalidDocument(t *testing.T, e search.Engine) {
	ctx := context.Background()
	name := setup(t, e, nil)
	cases := []search.Document{
		{ID: "x", Version: 1, Fields: map[string]any{"unknown": "v"}},
		{ID: "x", Version: 1, Fields: map[string]any{"stock": "ten"}},
		{ID: "x", Version: 1, Fields: map[string]any{"stock": 1.5}},
		{ID: "x", Version: 1, Fields: map[string]any{"active": "yes"}},
		{ID: "x", Version: 1, Fields: map[string]any{"published": "yesterday"}},
		{ID: "", Version: 1},
		{ID: "x", Version: 0},
	}
	for _, bad := range cases {
		ops := []search.Op{search.Upsert(search.Document{ID: "good", Version: 1, Fields: map[string]any{"category": "c"}}), search.Upsert(bad)}
		_, err := e.Bulk(ctx, name, ops)
		wantErr(t, "Bulk with invalid document", err, search.ErrInvalidDocument)
	}
	_, err := e.Bulk(ctx, name, []search.Op{search.Delete("", 1)})
	wantErr(t, "delete with empty id", err, search.ErrInvalidDocument)
	refresh(t, e, name)
	if _, err := e.Get(ctx, name, "good"); err == nil {
		t.Errorf("a Bulk call with an invalid document wrote its valid one")
	}
}
