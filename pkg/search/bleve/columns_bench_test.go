package bleve

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/search"
)

// BenchmarkColumns: one page (20 hits) of 10,000 documents, filtered by a
// range matching 1 % or 100 % of them and sorted by a number, through the
// column index and through a Bleve search, in the same run.
// speedup = Bleve time / column time.
func BenchmarkColumns(b *testing.B) {
	ctx := context.Background()
	eng, err := New(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer eng.Close()
	m := search.Mapping{Fields: map[string]search.Kind{"branch": search.Long, "type": search.Long,
		"price": search.Double, "ordered": search.Keyword, "src": search.Stored}}
	if err := eng.EnsureIndex(ctx, "bench", m); err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for chunk := range 10 {
		var ops []search.Op
		for i := range 1000 {
			p := float64(r.IntN(100000)) / 100
			ops = append(ops, search.Upsert(search.Document{ID: fmt.Sprintf("4-%d", chunk*1000+i), Version: 1, Fields: map[string]any{
				"branch": 4, "type": 7, "price": p, "ordered": []any{fmt.Sprintf("n:1=%08.2f", p), "n:2=x"}, "src": `{"x": 1}`}}))
		}
		if _, err := eng.Bulk(ctx, "bench", ops); err != nil {
			b.Fatal(err)
		}
	}
	ix, err := eng.lookup("bench")
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		gte  string
	}{{"match-1pct", "n:1=00990.00"}, {"match-100pct", "n:1="}} {
		q := search.And{search.Term{Field: "branch", Value: 4}, search.Not{Query: search.Term{Field: "type", Value: 5}},
			search.Range{Field: "ordered", Gte: c.gte, Lt: "n:1>"}}
		req, err := search.NormalizeRequest(search.SearchRequest{Index: "bench", Query: q, Size: 20, From: 0,
			Sort: []search.SortField{{Field: "price", Desc: true}}, Fields: []string{"src"}}, m)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			if _, ok, err := ix.searchColumns(req); !ok || err != nil { // builds the columns
				b.Fatal(ok, err)
			}
			var cols, blv time.Duration
			for b.Loop() {
				t0 := time.Now()
				res, _, err := ix.searchColumns(req)
				t1 := time.Now()
				want, err2 := ix.searchBleve(ctx, req)
				blv += time.Since(t1)
				cols += t1.Sub(t0)
				if err != nil || err2 != nil || res.Total != want.Total || len(res.Hits) != len(want.Hits) {
					b.Fatalf("columns %d/%d, bleve %d/%d: %v %v", res.Total, len(res.Hits), want.Total, len(want.Hits), err, err2)
				}
			}
			b.ReportMetric(float64(cols.Microseconds())/float64(b.N), "columns-µs/op")
			b.ReportMetric(float64(blv.Microseconds())/float64(b.N), "bleve-µs/op")
			b.ReportMetric(float64(blv)/float64(cols), "speedup")
		})
	}
}
