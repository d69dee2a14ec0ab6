package searchtest

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/cmsplatform/cms/pkg/search"
)

// testKeywordPrefixes: fields named by Mapping.KeywordPrefixes are
// keywords without being declared: documents may carry them (multi-valued
// too), term and exists queries find them, Get and Search return them,
// and sorting by one orders by the smallest value ascending and the
// largest descending with missing values last in both directions, ties
// by id; sorting by a prefixed field no document has yet works (all
// missing). Names outside the prefixes stay unmapped. The mapping with
// prefixes is a different mapping than the one without.
func testKeywordPrefixes(t *testing.T, e search.Engine) {
	ctx := context.Background()
	m := search.Mapping{Fields: map[string]search.Kind{"category": search.Keyword}, KeywordPrefixes: []string{"sk_"}}
	name := IndexName(t)
	if err := e.EnsureIndex(ctx, name, m); err != nil {
		t.Fatalf("EnsureIndex: %v", err)
	}
	if err := e.EnsureIndex(ctx, name, search.Mapping{Fields: m.Fields}); !errors.Is(err, search.ErrMappingConflict) {
		t.Errorf("EnsureIndex without prefixes = %v, want ErrMappingConflict", err)
	}
	docs := map[string]map[string]any{
		"a": {"category": "x", "sk_p_en": []any{"m", "c"}, "sk_q_de": "2024"},
		"b": {"category": "x", "sk_p_en": "d"},
		"c": {"category": "y", "sk_p_en": []any{"a", "z"}},
		"d": {"category": "y"},
		"e": {"category": "y", "sk_p_en": "d"},
	}
	var ops []search.Op
	for id, f := range docs {
		ops = append(ops, search.Upsert(search.Document{ID: id, Version: 1, Fields: f}))
	}
	bulk(t, e, name, ops...)
	refresh(t, e, name)

	_, err := e.Bulk(ctx, name, []search.Op{search.Upsert(search.Document{ID: "f", Version: 1,
		Fields: map[string]any{"other_x": "v"}})})
	if !errors.Is(err, search.ErrInvalidDocument) {
		t.Errorf("Bulk with an unprefixed unmapped field = %v, want ErrInvalidDocument", err)
	}
	if _, err := e.Bulk(ctx, name, []search.Op{search.Upsert(search.Document{ID: "f", Version: 1,
		Fields: map[string]any{"sk_n": 3}})}); !errors.Is(err, search.ErrInvalidDocument) {
		t.Errorf("Bulk with a number in a prefixed field = %v, want ErrInvalidDocument", err)
	}

	search1 := func(what string, req search.SearchRequest, want []string) {
		t.Helper()
		req.Index, req.Size = name, 10
		res, err := e.Search(ctx, req)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if got := ids(res); !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	search1("sort asc (min)", search.SearchRequest{Sort: []search.SortField{{Field: "sk_p_en"}}},
		[]string{"c", "a", "b", "e", "d"})
	search1("sort desc (max)", search.SearchRequest{Sort: []search.SortField{{Field: "sk_p_en", Desc: true}}},
		[]string{"c", "a", "b", "e", "d"})
	search1("sort desc then id", search.SearchRequest{Query: search.Term{Field: "category", Value: "y"},
		Sort: []search.SortField{{Field: "sk_p_en", Desc: true}}}, []string{"c", "e", "d"})
	search1("sort by a field only a has", search.SearchRequest{Sort: []search.SortField{{Field: "sk_q_de", Desc: true}}},
		[]string{"a", "b", "c", "d", "e"})
	search1("sort by a prefixed field no document has", search.SearchRequest{Sort: []search.SortField{{Field: "sk_none"}}},
		[]string{"a", "b", "c", "d", "e"})
	search1("paged sort", search.SearchRequest{From: 1, Sort: []search.SortField{{Field: "sk_p_en"}}},
		[]string{"a", "b", "e", "d"})
	search1("term on a prefixed field", search.SearchRequest{Query: search.Term{Field: "sk_p_en", Value: "z"}},
		[]string{"c"})
	search1("exists on a prefixed field", search.SearchRequest{Query: search.Exists{Field: "sk_q_de"},
		Sort: []search.SortField{{Field: "category"}}}, []string{"a"})

	got, err := e.Get(ctx, name, "a")
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if want := (map[string]any{"category": "x", "sk_p_en": []any{"m", "c"}, "sk_q_de": "2024"}); !reflect.DeepEqual(got.Fields, want) {
		t.Errorf("Get fields = %v, want %v", got.Fields, want)
	}
	if _, err := e.Search(ctx, search.SearchRequest{Index: name, Query: search.Term{Field: "nope", Value: "x"}}); !errors.Is(err, search.ErrInvalidQuery) {
		t.Errorf("term on an unmapped unprefixed field = %v, want ErrInvalidQuery", err)
	}
}
