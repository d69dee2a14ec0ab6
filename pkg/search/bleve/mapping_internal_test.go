package bleve

import (
	"context"
	"testing"

	"github.com/cmsplatform/cms/pkg/search"
)

// TestMappingKeepsNoTermVectors: the Bleve mapping of an index keeps no
// term vectors and builds no composite "_all" field (they cost segment
// building and nothing reads them), while text and keyword searches, the
// relevance order and Exists still answer as before.
func TestMappingKeepsNoTermVectors(t *testing.T) {
	m := search.Mapping{Fields: map[string]search.Kind{
		"title": search.Text, "tag": search.Keyword, "n": search.Long,
	}}
	im, err := indexMapping(m)
	if err != nil {
		t.Fatal(err)
	}
	dm := im.DefaultMapping
	if all := dm.Properties[allField]; all == nil || all.Enabled {
		t.Errorf("the composite %s field is built: %+v", allField, all)
	}
	for _, name := range []string{"title", "tag", fieldPresent} {
		p := dm.Properties[name]
		if p == nil || len(p.Fields) != 1 {
			t.Fatalf("field %s: %+v", name, p)
		}
		if p.Fields[0].IncludeTermVectors {
			t.Errorf("field %s keeps term vectors", name)
		}
	}

	ctx := context.Background()
	e, err := New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	if err := e.EnsureIndex(ctx, "docs", m); err != nil {
		t.Fatal(err)
	}
	docs := []search.Document{
		{ID: "a", Version: 1, Fields: map[string]any{"title": "spring release notes", "tag": "x", "n": int64(1)}},
		{ID: "b", Version: 1, Fields: map[string]any{"title": "release release release", "tag": "y"}},
		{ID: "c", Version: 1, Fields: map[string]any{"title": "autumn", "tag": "x"}},
	}
	var ops []search.Op
	for _, d := range docs {
		ops = append(ops, search.Upsert(d))
	}
	if _, err := e.Bulk(ctx, "docs", ops); err != nil {
		t.Fatal(err)
	}
	if err := e.Refresh(ctx, "docs"); err != nil {
		t.Fatal(err)
	}
	res, err := e.Search(ctx, search.SearchRequest{Index: "docs", Query: search.Match{Text: "release"}, Size: 10,
		Sort: []search.SortField{{Field: search.ScoreField, Desc: true}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) != 2 || res.Hits[0].ID != "b" || res.Hits[1].ID != "a" || res.Hits[0].Score <= res.Hits[1].Score {
		t.Fatalf("match release: %+v, want b (three occurrences) before a", res.Hits)
	}
	for q, want := range map[search.Query]int64{
		search.Match{Field: "title", Text: "spring notes", All: true}: 1,
		search.Term{Field: "tag", Value: "x"}:                         2,
		search.Exists{Field: "n"}:                                     1,
	} {
		if n, err := e.Count(ctx, "docs", q); err != nil || n != want {
			t.Errorf("count %#v = %d (%v), want %d", q, n, err, want)
		}
	}
}
