package searchtest

import (
	"context"
	"slices"
	"testing"

	"github.com/cmsplatform/cms/pkg/search"
)

func testQueries(t *testing.T, e search.Engine) {
	name := setup(t, e, Products())
	all := []string{"p1", "p2", "p3", "p4", "p5", "p6"}
	cases := []struct {
		name string
		q    search.Query
		want []string
	}{
		{"nil", nil, all},
		{"match all", search.MatchAll{}, all},
		{"ids", search.IDs{"p4", "p2", "zz"}, []string{"p2", "p4"}},
		{"term keyword", search.Term{Field: "category", Value: "fruit"}, []string{"p1", "p2", "p3"}},
		{"term multi-valued keyword", search.Term{Field: "tags", Value: "sweet"}, []string{"p1", "p3"}},
		{"term keyword is case-sensitive", search.Term{Field: "category", Value: "Fruit"}, nil},
		{"term long", search.Term{Field: "stock", Value: 40}, []string{"p4"}},
		{"term double", search.Term{Field: "price", Value: 1.25}, []string{"p2"}},
		{"term bool", search.Term{Field: "active", Value: false}, []string{"p3"}},
		{"term date", search.Term{Field: "published", Value: day(3)}, []string{"p3"}},
		{"terms", search.Terms{Field: "category", Values: []any{"vegetable", "bakery"}}, []string{"p4", "p5"}},
		{"terms long", search.Terms{Field: "stock", Values: []any{int64(2), 100}}, []string{"p3", "p5"}},
		{"terms none", search.Terms{Field: "stock"}, nil},
		{"range double", search.Range{Field: "price", Gte: 0.75, Lt: 1.5}, []string{"p2", "p4"}},
		{"range long gt", search.Range{Field: "stock", Gt: 10}, []string{"p3", "p4"}},
		{"range long lte", search.Range{Field: "stock", Lte: 5}, []string{"p2", "p5"}},
		{"range date", search.Range{Field: "published", Gte: day(2), Lte: "2024-01-04T12:00:00Z"}, []string{"p2", "p3", "p4"}},
		{"range keyword", search.Range{Field: "category", Gte: "b", Lt: "g"}, []string{"p1", "p2", "p3", "p5"}},
		{"match", search.Match{Field: "title", Text: "apple"}, []string{"p1", "p2", "p5"}},
		{"match is case-insensitive, all tokens", search.Match{Field: "title", Text: "APPLE red", All: true}, []string{"p1"}},
		{"match any token", search.Match{Field: "title", Text: "red pie"}, []string{"p1", "p5"}},
		{"match keeps stop words", search.Match{Field: "body", Text: "the"}, []string{"p1"}},
		{"match does not stem", search.Match{Field: "body", Text: "apple"}, nil},
		{"match all text fields", search.Match{Text: "crisp"}, []string{"p1", "p2"}},
		{"match all text fields, all tokens in one field", search.Match{Text: "apple red", All: true}, []string{"p1"}},
		{"prefix text", search.Prefix{Field: "title", Value: "App"}, []string{"p1", "p2", "p5"}},
		{"prefix keyword", search.Prefix{Field: "category", Value: "veg"}, []string{"p4"}},
		{"prefix keyword is case-sensitive", search.Prefix{Field: "category", Value: "Veg"}, nil},
		{"exists multi-valued", search.Exists{Field: "tags"}, []string{"p1", "p2", "p3", "p4"}},
		{"exists long", search.Exists{Field: "stock"}, []string{"p1", "p2", "p3", "p4", "p5"}},
		{"not exists", search.Not{Query: search.Exists{Field: "price"}}, []string{"p6"}},
		{"and", search.And{search.Term{Field: "category", Value: "fruit"}, search.Term{Field: "active", Value: true}}, []string{"p1", "p2"}},
		{"or", search.Or{search.Term{Field: "category", Value: "bakery"}, search.Term{Field: "stock", Value: 100}}, []string{"p3", "p5"}},
		{"not", search.Not{Query: search.Term{Field: "category", Value: "fruit"}}, []string{"p4", "p5", "p6"}},
		{"empty and", search.And{}, all},
		{"empty or", search.Or{}, nil},
		{"nested", search.And{search.Match{Field: "title", Text: "apple"}, search.Not{Query: search.Term{Field: "tags", Value: "green"}}}, []string{"p1", "p5"}},
	}
	for _, c := range cases {
		res := mustSearch(t, e, search.SearchRequest{Index: name, Query: c.q, Size: 100})
		wantIDs(t, c.name, ids(res), c.want)
		if res.Total != int64(len(c.want)) {
			t.Errorf("%s: total = %d, want %d", c.name, res.Total, len(c.want))
		}
		for _, h := range res.Hits {
			if h.Version != 1 || len(h.Fields) == 0 {
				t.Errorf("%s: hit %s: version %d, fields %v", c.name, h.ID, h.Version, h.Fields)
			}
		}
	}
}

func testInvalidQueries(t *testing.T, e search.Engine) {
	name := setup(t, e, Products())
	bad := []search.SearchRequest{
		{Query: search.Term{Field: "nope", Value: "x"}},
		{Query: search.Term{Field: "title", Value: "apple"}},
		{Query: search.Term{Field: "stock", Value: "ten"}},
		{Query: search.Range{Field: "stock"}},
		{Query: search.Range{Field: "stock", Gt: 1, Gte: 2}},
		{Query: search.Range{Field: "active", Gt: false}},
		{Query: search.Match{Field: "category", Text: "fruit"}},
		{Query: search.Match{Field: "title", Text: "  "}},
		{Query: search.Prefix{Field: "stock", Value: "1"}},
		{Query: search.Not{}},
		{Sort: []search.SortField{{Field: "title"}}},
		{Sort: []search.SortField{{Field: "nope"}}},
		{Aggs: []search.TermsAgg{{Field: "title", Size: 5}}},
		{Aggs: []search.TermsAgg{{Field: "category", Size: 0}}},
		{Aggs: []search.TermsAgg{{Field: "stock", Size: 5, Prefix: "1"}}},
		{Aggs: []search.TermsAgg{{Field: "category", Size: 5}, {Field: "category", Size: 3}}},
		{From: -1, Size: 1},
		{From: search.MaxResultWindow, Size: 1},
	}
	for i, req := range bad {
		req.Index = name
		_, err := e.Search(context.Background(), req)
		wantErr(t, "invalid request "+string(rune('a'+i)), err, search.ErrInvalidQuery)
	}
	_, err := e.Count(context.Background(), name, search.Exists{Field: "nope"})
	wantErr(t, "Count with invalid query", err, search.ErrInvalidQuery)
}

func testSort(t *testing.T, e search.Engine) {
	name := setup(t, e, Products())
	cases := []struct {
		name string
		sort []search.SortField
		want []string
	}{
		{"default by id", nil, []string{"p1", "p2", "p3", "p4", "p5", "p6"}},
		{"double asc, missing last", []search.SortField{{Field: "price"}}, []string{"p3", "p4", "p2", "p1", "p5", "p6"}},
		{"double desc, missing last", []search.SortField{{Field: "price", Desc: true}}, []string{"p5", "p1", "p2", "p4", "p3", "p6"}},
		{"keyword asc, ties by id", []search.SortField{{Field: "category"}}, []string{"p5", "p1", "p2", "p3", "p6", "p4"}},
		{"keyword desc, ties by id", []search.SortField{{Field: "category", Desc: true}}, []string{"p4", "p6", "p1", "p2", "p3", "p5"}},
		{"long asc", []search.SortField{{Field: "stock"}}, []string{"p5", "p2", "p1", "p4", "p3", "p6"}},
		{"long desc", []search.SortField{{Field: "stock", Desc: true}}, []string{"p3", "p4", "p1", "p2", "p5", "p6"}},
		{"date desc", []search.SortField{{Field: "published", Desc: true}}, []string{"p5", "p4", "p3", "p2", "p1", "p6"}},
		{"bool desc then long", []search.SortField{{Field: "active", Desc: true}, {Field: "stock"}}, []string{"p5", "p2", "p1", "p4", "p3", "p6"}},
	}
	for _, c := range cases {
		res := mustSearch(t, e, search.SearchRequest{Index: name, Sort: c.sort, Size: 10})
		wantIDs(t, c.name, ids(res), c.want)
	}
	res := mustSearch(t, e, search.SearchRequest{Index: name, Size: 10,
		Query: search.Match{Field: "title", Text: "red apple"}, Sort: []search.SortField{{Field: search.ScoreField, Desc: true}}})
	got := ids(res)
	if len(got) != 3 || got[0] != "p1" {
		t.Errorf("score sort: ids = %v, want p1 (both tokens) first of 3", got)
	}
	if len(res.Hits) > 1 && res.Hits[0].Score <= res.Hits[1].Score {
		t.Errorf("score sort: scores %v, %v not descending", res.Hits[0].Score, res.Hits[1].Score)
	}
}

func testPaging(t *testing.T, e search.Engine) {
	name := setup(t, e, Products())
	byStock := []search.SortField{{Field: "stock"}}
	want := [][]string{{"p5", "p2"}, {"p1", "p4"}, {"p3", "p6"}, nil}
	for i, w := range want {
		res := mustSearch(t, e, search.SearchRequest{Index: name, Sort: byStock, From: 2 * i, Size: 2})
		wantIDs(t, "page", ids(res), w)
		if res.Total != 6 {
			t.Errorf("page %d: total = %d, want 6", i, res.Total)
		}
	}
	res := mustSearch(t, e, search.SearchRequest{Index: name, Size: 0})
	if res.Total != 6 || len(res.Hits) != 0 {
		t.Errorf("size 0: total %d, %d hits; want 6, 0", res.Total, len(res.Hits))
	}
	res = mustSearch(t, e, search.SearchRequest{Index: name, From: 5, Size: 100})
	wantIDs(t, "last page", ids(res), []string{"p6"})
}

func testCount(t *testing.T, e search.Engine) {
	name := setup(t, e, Products())
	ctx := context.Background()
	for _, c := range []struct {
		q    search.Query
		want int64
	}{
		{nil, 6},
		{search.Term{Field: "category", Value: "fruit"}, 3},
		{search.Not{Query: search.Exists{Field: "price"}}, 1},
		{search.Match{Field: "title", Text: "apple"}, 3},
		{search.Or{}, 0},
	} {
		n, err := e.Count(ctx, name, c.q)
		if err != nil {
			t.Fatalf("Count(%#v): %v", c.q, err)
		}
		if n != c.want {
			t.Errorf("Count(%#v) = %d, want %d", c.q, n, c.want)
		}
	}
}

func testAggs(t *testing.T, e search.Engine) {
	name := setup(t, e, Products())
	b := func(k any, n int64) search.Bucket { return search.Bucket{Key: k, Count: n} }
	cases := []struct {
		name string
		q    search.Query
		agg  search.TermsAgg
		want search.AggResult
	}{
		{"keyword", nil, search.TermsAgg{Field: "category", Size: 10},
			search.AggResult{Buckets: []search.Bucket{b("fruit", 3), b("bakery", 1), b("misc", 1), b("vegetable", 1)}}},
		{"multi-valued, size cuts, other, missing", nil, search.TermsAgg{Field: "tags", Size: 2},
			search.AggResult{Buckets: []search.Bucket{b("sweet", 2), b("green", 1)}, Other: 3, Missing: 2}},
		{"filtered by query", search.Term{Field: "active", Value: true}, search.TermsAgg{Name: "cat", Field: "category", Size: 10},
			search.AggResult{Buckets: []search.Bucket{b("fruit", 2), b("bakery", 1), b("vegetable", 1)}}},
		{"long keys ordered numerically", nil, search.TermsAgg{Field: "stock", Size: 3},
			search.AggResult{Buckets: []search.Bucket{b(int64(2), 1), b(int64(5), 1), b(int64(10), 1)}, Other: 2, Missing: 1}},
		{"double", nil, search.TermsAgg{Field: "price", Size: 1},
			search.AggResult{Buckets: []search.Bucket{b(0.5, 1)}, Other: 4, Missing: 1}},
		{"bool", nil, search.TermsAgg{Field: "active", Size: 5},
			search.AggResult{Buckets: []search.Bucket{b(true, 4), b(false, 1)}, Missing: 1}},
		{"date", search.Exists{Field: "tags"}, search.TermsAgg{Field: "published", Size: 2},
			search.AggResult{Buckets: []search.Bucket{b(day(1), 1), b(day(2), 1)}, Other: 2}},
		{"prefix", nil, search.TermsAgg{Field: "tags", Size: 10, Prefix: "s"},
			search.AggResult{Buckets: []search.Bucket{b("sweet", 2), b("sour", 1)}, Missing: 2}},
	}
	for _, c := range cases {
		res := mustSearch(t, e, search.SearchRequest{Index: name, Query: c.q, Aggs: []search.TermsAgg{c.agg}})
		got, ok := res.Aggs[c.agg.Key()]
		if !ok {
			t.Errorf("%s: no aggregation %q in %v", c.name, c.agg.Key(), res.Aggs)
			continue
		}
		if !equalAgg(got, c.want) {
			t.Errorf("%s: agg = %+v\nwant %+v", c.name, got, c.want)
		}
	}
	// Several aggregations in one request, with hits.
	res := mustSearch(t, e, search.SearchRequest{Index: name, Size: 2, Query: search.Term{Field: "category", Value: "fruit"},
		Aggs: []search.TermsAgg{{Field: "tags", Size: 10}, {Field: "active", Size: 2}}})
	if len(res.Hits) != 2 || res.Total != 3 || len(res.Aggs) != 2 {
		t.Fatalf("combined: %d hits, total %d, %d aggs; want 2, 3, 2", len(res.Hits), res.Total, len(res.Aggs))
	}
	if n := len(res.Aggs["tags"].Buckets); n != 4 {
		t.Errorf("combined: tags buckets = %v, want 4 (sweet, green, red, sour)", res.Aggs["tags"].Buckets)
	}
}

func equalAgg(a, b search.AggResult) bool {
	return a.Other == b.Other && a.Missing == b.Missing && slices.EqualFunc(a.Buckets, b.Buckets, func(x, y search.Bucket) bool {
		return x.Count == y.Count && search.CompareValues(x.Key, y.Key) == 0 && sameType(x.Key, y.Key)
	})
}

func sameType(a, b any) bool {
	switch a.(type) {
	case string:
		_, ok := b.(string)
		return ok
	case int64:
		_, ok := b.(int64)
		return ok
	case float64:
		_, ok := b.(float64)
		return ok
	case bool:
		_, ok := b.(bool)
		return ok
	}
	return search.CompareValues(a, b) == 0
}
