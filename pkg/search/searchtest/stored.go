package searchtest

import (
	"context"
	"strings"
	"testing"

	"github.com/cmsplatform/cms/pkg/search"
)

// testStored: a Stored field is returned by Get and Search exactly as
// written, whatever its length (beyond Lucene's term limit), and no query,
// sort or aggregation may use it.
func testStored(t *testing.T, e search.Engine) {
	ctx := context.Background()
	m := search.Mapping{Fields: map[string]search.Kind{"category": search.Keyword, "src": search.Stored}}
	name := IndexName(t)
	if err := e.EnsureIndex(ctx, name, m); err != nil {
		t.Fatalf("EnsureIndex: %v", err)
	}
	big := `{"values":"` + strings.Repeat("é", 40000) + `"}` // > 32766 bytes
	small := `{"a":[1,2],"b":{"XML":"<div/>"}}`
	bulk(t, e, name,
		search.Upsert(search.Document{ID: "s1", Version: 1, Fields: map[string]any{"category": "x", "src": big}}),
		search.Upsert(search.Document{ID: "s2", Version: 1, Fields: map[string]any{"category": "x", "src": small}}),
		search.Upsert(search.Document{ID: "s3", Version: 1, Fields: map[string]any{"category": "y"}}))
	refresh(t, e, name)
	d, err := e.Get(ctx, name, "s1")
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if d.Fields["src"] != big {
		t.Errorf("Get s1 src: got %d bytes, want the %d written", len(d.Fields["src"].(string)), len(big))
	}
	res, err := e.Search(ctx, search.SearchRequest{Index: name, Query: search.Term{Field: "category", Value: "x"}, Size: 10})
	if err != nil {
		t.Fatalf("Search: %v", err)
	}
	if len(res.Hits) != 2 || res.Hits[0].Fields["src"] != big || res.Hits[1].Fields["src"] != small {
		t.Errorf("Search hits do not carry the stored values: %+v", res.Hits)
	}
	// Not indexed: a term on its content finds nothing, and is refused.
	for _, q := range []search.Query{
		search.Term{Field: "src", Value: small},
		search.Prefix{Field: "src", Value: "{"},
		search.Exists{Field: "src"},
		search.Range{Field: "src", Gte: "a"},
		search.Match{Field: "src", Text: "a"},
	} {
		_, err := e.Search(ctx, search.SearchRequest{Index: name, Query: q, Size: 1})
		wantErr(t, "query on a stored field", err, search.ErrInvalidQuery)
	}
	_, err = e.Search(ctx, search.SearchRequest{Index: name, Sort: []search.SortField{{Field: "src"}}, Size: 1})
	wantErr(t, "sort on a stored field", err, search.ErrInvalidQuery)
	_, err = e.Search(ctx, search.SearchRequest{Index: name, Aggs: []search.TermsAgg{{Field: "src", Size: 5}}})
	wantErr(t, "aggregation on a stored field", err, search.ErrInvalidQuery)
	// Full-text search over all text fields does not see it either.
	n, err := e.Count(ctx, name, search.Match{Text: "XML"})
	if err == nil && n != 0 {
		t.Errorf("a match over all text fields found %d documents through a stored field", n)
	}
	_, err = e.Bulk(ctx, name, []search.Op{search.Upsert(search.Document{ID: "bad", Version: 1, Fields: map[string]any{"src": 5}})})
	wantErr(t, "non-string stored value", err, search.ErrInvalidDocument)
	t.Run("FieldSelection", func(t *testing.T) { testFieldSelection(t, e) })
	t.Run("Held", func(t *testing.T) { testHeld(t, e) })
}
