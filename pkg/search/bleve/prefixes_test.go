package bleve_test

import (
	"context"
	"testing"

	"github.com/cmsplatform/cms/pkg/search"
	"github.com/cmsplatform/cms/pkg/search/bleve"
)

// TestKeywordPrefixesReopen: an on-disk index with keyword prefixes keeps
// indexing and sorting prefixed fields (as keywords, a date-like string
// included) after it is reopened.
func TestKeywordPrefixesReopen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	m := search.Mapping{Fields: map[string]search.Kind{"c": search.Keyword}, KeywordPrefixes: []string{"sk_"}}
	open := func() search.Engine {
		e, err := bleve.New(dir)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.EnsureIndex(ctx, "p", m); err != nil {
			t.Fatal(err)
		}
		return e
	}
	e := open()
	if _, err := e.Bulk(ctx, "p", []search.Op{search.Upsert(search.Document{ID: "a", Version: 1,
		Fields: map[string]any{"sk_d": "2024-01-01T00:00:00Z"}})}); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = open()
	defer e.Close()
	if _, err := e.Bulk(ctx, "p", []search.Op{
		search.Upsert(search.Document{ID: "b", Version: 1, Fields: map[string]any{"sk_d": "1999-01-01T00:00:00Z"}}),
		search.Upsert(search.Document{ID: "c", Version: 1, Fields: map[string]any{"c": "x"}}),
	}); err != nil {
		t.Fatal(err)
	}
	if err := e.Refresh(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	res, err := e.Search(ctx, search.SearchRequest{Index: "p", Size: 10, Sort: []search.SortField{{Field: "sk_d", Desc: true}}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range res.Hits {
		got = append(got, h.ID)
	}
	if len(got) != 3 || got[0] != "a" || got[1] != "b" || got[2] != "c" {
		t.Errorf("sort desc after reopen = %v, want [a b c]", got)
	}
	n, err := e.Count(ctx, "p", search.Term{Field: "sk_d", Value: "1999-01-01T00:00:00Z"})
	if err != nil || n != 1 {
		t.Errorf("term on a date-like keyword = %d, %v; want 1", n, err)
	}
}
