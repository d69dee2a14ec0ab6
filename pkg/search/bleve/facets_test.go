package bleve

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/cmsplatform/cms/pkg/search"
)

// Facet counts are the same whether the column index answers them or
// Bleve alone does (an engine without columns, as an index over the
// column budget is): random documents with multi-valued tags (values
// repeated within a document too), random queries, sorts (a field sorted
// on twice among them, which once made Bleve count that field's values
// twice) and aggregations with filters and prefixes, through Search on
// both engines, while documents are written and deleted between rounds.
func TestFacetsColumnsMatchBleveOnly(t *testing.T) {
	ctx := context.Background()
	withCols, err := New("")
	if err != nil {
		t.Fatal(err)
	}
	defer withCols.Close()
	bleveOnly, err := New("", WithColumnBudget(0))
	if err != nil {
		t.Fatal(err)
	}
	defer bleveOnly.Close()
	m := search.Mapping{Fields: map[string]search.Kind{
		"k": search.Keyword, "tags": search.Keyword, "n": search.Long, "d": search.Double, "b": search.Bool,
		"t": search.Date, "txt": search.Text, "src": search.Stored,
	}, KeywordPrefixes: []string{"sk_"}}
	engines := []*Engine{withCols, bleveOnly}
	for _, e := range engines {
		if err := e.EnsureIndex(ctx, "facets", m); err != nil {
			t.Fatal(err)
		}
	}
	r := rand.New(rand.NewPCG(3, 5))
	g := colGen{r: r}
	tags := []string{"red", "green", "blue", "sweet", "sour", "s"}
	version := int64(1)
	write := func(n int) {
		var ops []search.Op
		for range n {
			version++
			id := fmt.Sprintf("d%03d", r.IntN(300))
			if r.IntN(8) == 0 {
				ops = append(ops, search.Delete(id, version))
				continue
			}
			f := g.doc()
			if nt := r.IntN(5); nt > 0 {
				ts := make([]any, nt)
				for i := range ts {
					ts[i] = tags[r.IntN(len(tags))]
				}
				f["tags"] = ts
			}
			ops = append(ops, search.Upsert(search.Document{ID: id, Version: version, Fields: f}))
		}
		for _, e := range engines {
			if _, err := e.Bulk(ctx, "facets", ops); err != nil {
				t.Fatal(err)
			}
		}
	}
	agg := func(name string) search.TermsAgg {
		a := search.TermsAgg{Name: name, Field: []string{"tags", "k", "sk_1"}[r.IntN(3)], Size: 1 + r.IntN(6)}
		if r.IntN(2) == 0 {
			a.Filter = g.query(2)
		}
		if r.IntN(3) == 0 {
			a.Prefix = []string{"s", "a", "b", "r"}[r.IntN(4)]
		}
		return a
	}
	write(400)
	checked := 0
	for round := range 15 {
		for range 30 {
			req := search.SearchRequest{Index: "facets", Query: g.query(3), Sort: g.sort(), Size: r.IntN(10),
				Aggs: []search.TermsAgg{agg("a0"), agg("a1"), agg("a2")}}
			if r.IntN(3) == 0 { // the aggregated field sorted on twice
				f := req.Aggs[0].Field
				req.Sort = []search.SortField{{Field: f}, {Field: f, Desc: true}}
			}
			got, err := withCols.Search(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			want, err := bleveOnly.Search(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if got.Total != want.Total || !slices.Equal(hitIDs(got), hitIDs(want)) {
				t.Fatalf("round %d: %#v sort %v: columns total %d %v, bleve %d %v",
					round, req.Query, req.Sort, got.Total, hitIDs(got), want.Total, hitIDs(want))
			}
			for _, a := range req.Aggs {
				if !reflect.DeepEqual(got.Aggs[a.Key()], want.Aggs[a.Key()]) {
					t.Fatalf("round %d: %#v sort %v agg %+v:\ncolumns %+v\nbleve   %+v",
						round, req.Query, req.Sort, a, got.Aggs[a.Key()], want.Aggs[a.Key()])
				}
				if len(want.Aggs[a.Key()].Buckets) > 0 {
					checked++
				}
			}
		}
		write(1 + r.IntN(30))
	}
	ix, err := withCols.lookup("facets")
	if err != nil {
		t.Fatal(err)
	}
	if !ix.cols.built || ix.cols.off {
		t.Fatal("the engine with columns answered without them")
	}
	if checked < 100 {
		t.Fatalf("only %d aggregations with buckets compared", checked)
	}
}
