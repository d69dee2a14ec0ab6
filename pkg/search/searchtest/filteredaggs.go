package searchtest

import (
	"testing"

	"github.com/cmsplatform/cms/pkg/search"
)

// testFilteredAggs checks TermsAgg.Filter: each aggregation counts the
// matching documents its filter also matches (Docs, Missing and Buckets
// over that subset) while Total and Hits stay those of the query, and
// filtered and unfiltered aggregations mix in one request.
func testFilteredAggs(t *testing.T, e search.Engine) {
	name := setup(t, e, Products())
	b := func(k any, n int64) search.Bucket { return search.Bucket{Key: k, Count: n} }
	fruit := search.Term{Field: "category", Value: "fruit"}
	cases := []struct {
		name  string
		q     search.Query
		total int64
		agg   search.TermsAgg
		want  search.AggResult
	}{
		{"filter on all", nil, 6, search.TermsAgg{Field: "tags", Size: 10, Filter: search.Term{Field: "active", Value: true}},
			search.AggResult{Buckets: []search.Bucket{b("green", 1), b("orange", 1), b("red", 1), b("sour", 1), b("sweet", 1)},
				Missing: 1, Docs: 4}},
		{"range filter within a query", fruit, 3, search.TermsAgg{Field: "tags", Size: 10, Filter: search.Range{Field: "price", Gte: 1.0}},
			search.AggResult{Buckets: []search.Bucket{b("green", 1), b("red", 1), b("sour", 1), b("sweet", 1)}, Docs: 2}},
		{"filter, prefix and size", fruit, 3, search.TermsAgg{Field: "tags", Size: 1, Prefix: "s",
			Filter: search.Not{Query: search.Term{Field: "tags", Value: "red"}}},
			search.AggResult{Buckets: []search.Bucket{b("sour", 1)}, Other: 1, Docs: 2}},
		{"filter matching only documents without the field", nil, 6, search.TermsAgg{Field: "tags", Size: 10,
			Filter: search.Not{Query: search.Exists{Field: "tags"}}},
			search.AggResult{Missing: 2, Docs: 2}},
		{"filter matching nothing", fruit, 3, search.TermsAgg{Field: "tags", Size: 10, Filter: search.Term{Field: "category", Value: "misc"}},
			search.AggResult{}},
		{"no filter: docs are the total", fruit, 3, search.TermsAgg{Field: "category", Size: 10},
			search.AggResult{Buckets: []search.Bucket{b("fruit", 3)}, Docs: 3}},
	}
	for _, c := range cases {
		res := mustSearch(t, e, search.SearchRequest{Index: name, Query: c.q, Aggs: []search.TermsAgg{c.agg}})
		if res.Total != c.total {
			t.Errorf("%s: total = %d, want %d", c.name, res.Total, c.total)
		}
		if got := res.Aggs[c.agg.Key()]; !equalAgg(got, c.want) || got.Docs != c.want.Docs {
			t.Errorf("%s: agg = %+v\nwant %+v", c.name, got, c.want)
		}
	}
	// Filtered and unfiltered aggregations of one field, with hits.
	res := mustSearch(t, e, search.SearchRequest{Index: name, Size: 2, Sort: []search.SortField{{Field: "price"}}, Aggs: []search.TermsAgg{
		{Name: "all", Field: "tags", Size: 10},
		{Name: "cheap", Field: "tags", Size: 10, Filter: search.Range{Field: "price", Lt: 1.0}},
		{Name: "dear", Field: "tags", Size: 10, Filter: search.Range{Field: "price", Gte: 1.0}},
	}})
	if res.Total != 6 || len(res.Hits) != 2 || res.Hits[0].ID != "p3" || res.Hits[1].ID != "p4" {
		t.Errorf("mixed: total %d, hits %v; want 6, [p3 p4]", res.Total, ids(res))
	}
	for key, want := range map[string]search.AggResult{
		"all":   {Buckets: []search.Bucket{b("sweet", 2), b("green", 1), b("orange", 1), b("red", 1), b("sour", 1)}, Missing: 2, Docs: 6},
		"cheap": {Buckets: []search.Bucket{b("orange", 1), b("sweet", 1)}, Docs: 2},
		"dear":  {Buckets: []search.Bucket{b("green", 1), b("red", 1), b("sour", 1), b("sweet", 1)}, Missing: 1, Docs: 3},
	} {
		if got := res.Aggs[key]; !equalAgg(got, want) || got.Docs != want.Docs {
			t.Errorf("mixed %s: agg = %+v\nwant %+v", key, got, want)
		}
	}
	// The aggregated field sorted on twice (smallest value ascending, then
	// largest descending) changes no count: Bleve once counted its values
	// once per sort entry.
	res = mustSearch(t, e, search.SearchRequest{Index: name, Size: 3, Query: fruit,
		Sort: []search.SortField{{Field: "tags"}, {Field: "tags", Desc: true}}, Aggs: []search.TermsAgg{
			{Name: "all", Field: "tags", Size: 10},
			{Name: "dear", Field: "tags", Size: 10, Filter: search.Range{Field: "price", Gte: 1.0}},
		}})
	// Smallest tags: green (p2), red (p1), sweet (p3).
	if res.Total != 3 || len(res.Hits) != 3 || res.Hits[0].ID != "p2" || res.Hits[1].ID != "p1" || res.Hits[2].ID != "p3" {
		t.Errorf("sorted twice: total %d, hits %v; want 3, [p2 p1 p3]", res.Total, ids(res))
	}
	for key, want := range map[string]search.AggResult{
		"all":  {Buckets: []search.Bucket{b("sweet", 2), b("green", 1), b("red", 1), b("sour", 1)}, Docs: 3},
		"dear": {Buckets: []search.Bucket{b("green", 1), b("red", 1), b("sour", 1), b("sweet", 1)}, Docs: 2},
	} {
		if got := res.Aggs[key]; !equalAgg(got, want) || got.Docs != want.Docs {
			t.Errorf("sorted twice %s: agg = %+v\nwant %+v", key, got, want)
		}
	}
	// An invalid filter is an invalid query.
	if _, err := e.Search(t.Context(), search.SearchRequest{Index: name, Aggs: []search.TermsAgg{
		{Field: "tags", Size: 1, Filter: search.Term{Field: "title", Value: "x"}}}}); err == nil {
		t.Error("filter with a term on a text field: no error")
	}
}
