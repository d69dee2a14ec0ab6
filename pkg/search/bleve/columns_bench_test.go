package bleve

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
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

// BenchmarkColumnsMemory: the heap the column index of 10,000 and
// 100,000 object-like documents takes once a list query (branch, type,
// not deleted, sorted by a keyed value) and an occurrences query (a
// filtered aggregation of the keyed values) have built their columns,
// per document, next to the estimate the budget is checked against
// (columns_budget.go); then the time the columns take to answer both.
// It fails when the estimate is more than 15 % off the heap, or the heap
// per object exceeds maxObjectBytes.
func BenchmarkColumnsMemory(b *testing.B) {
	const maxObjectBytes = 600
	for _, n := range []int{10000, 100000} {
		b.Run(fmt.Sprintf("objects-%d", n), func(b *testing.B) {
			ctx := context.Background()
			// No decoded-document cache: the heap measured is the columns'.
			eng, err := New("", WithDocCacheBytes(1), WithColumnBudget(1<<40))
			if err != nil {
				b.Fatal(err)
			}
			defer eng.Close()
			m := search.Mapping{Fields: map[string]search.Kind{"branch": search.Long, "typeRef": search.Long,
				"id": search.Long, "deleted": search.Bool, "modified": search.Date, "keys": search.Keyword,
				"values": search.Keyword, "ordered": search.Keyword, "name": search.Keyword, "src": search.Stored}}
			if err := eng.EnsureIndex(ctx, "mem", m); err != nil {
				b.Fatal(err)
			}
			r := rand.New(rand.NewPCG(1, 2))
			t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			for from := 0; from < n; from += 1000 {
				ops := make([]search.Op, 0, 1000)
				for i := from; i < from+1000; i++ {
					ops = append(ops, search.Upsert(search.Document{ID: fmt.Sprintf("4-%d", i), Version: 1, Fields: objectLike(r, i, t0)}))
				}
				if _, err := eng.Bulk(ctx, "mem", ops); err != nil {
					b.Fatal(err)
				}
			}
			ix, err := eng.lookup("mem")
			if err != nil {
				b.Fatal(err)
			}
			list, err := search.NormalizeRequest(search.SearchRequest{Index: "mem", Size: 20,
				Query: search.And{search.Term{Field: "branch", Value: 4}, search.Term{Field: "typeRef", Value: 7},
					search.Not{Query: search.Term{Field: "deleted", Value: true}}},
				Sort: []search.SortField{{Field: "ordered", Desc: true}}}, m)
			if err != nil {
				b.Fatal(err)
			}
			facets, err := search.NormalizeRequest(search.SearchRequest{Index: "mem", Query: list.Query,
				Aggs: []search.TermsAgg{{Field: "values", Size: 100, Prefix: "2:en:=",
					Filter: search.Term{Field: "keys", Value: "2:en:"}}}}, m)
			if err != nil {
				b.Fatal(err)
			}
			before := heapAfterGC()
			for _, req := range []search.SearchRequest{list, facets} {
				if _, ok, err := ix.searchColumns(req); !ok || err != nil { // builds the columns
					b.Fatal(ok, err)
				}
			}
			after := heapAfterGC()
			st := eng.ColumnStats()[0]
			if st.OverBudget || st.Documents != int64(n) {
				b.Fatalf("columns not built: %+v", st)
			}
			// The columns' part of the two queries (loading the hits is
			// left out: without a document cache, an in-memory index of
			// a segment per 1,000 documents looks each up in every segment).
			c := ix.cols
			for b.Loop() {
				c.mu.RLock()
				m := c.eval(ix, list.Query)
				page := c.page(m, list.Sort, 0, list.Size)
				aggs := c.aggregate(ix, facets, m)
				c.mu.RUnlock()
				if len(page) != list.Size || len(aggs) != 1 {
					b.Fatalf("page %d, aggregations %d", len(page), len(aggs))
				}
			}
			// After the loop, which resets the metrics.
			heap, est := float64(after-before)/float64(n), float64(st.Bytes)/float64(n)
			b.ReportMetric(heap, "heap-B/object")
			b.ReportMetric(est, "estimate-B/object")
			// The floor of degrading (columns_shed.go): the slots and the
			// ids column, below which every column is freed.
			c.mu.RLock()
			floor := c.estimate()
			for name, col := range c.fields {
				if name != colID {
					floor -= col.bytes()
				}
			}
			// What the list alone needs: the floor and its fields.
			plan, _ := ix.planColumns(list)
			need := floor
			for _, name := range plan.fields {
				if name != colID {
					need += c.fields[name].bytes()
				}
			}
			c.mu.RUnlock()
			b.ReportMetric(float64(floor)/float64(n), "floor-B/object")
			b.ReportMetric(float64(need)/float64(n), "list-B/object")
			// The budget holds what it says only while the estimate is
			// close to the heap; and the layout stays compact.
			if est < heap*0.85 || est > heap*1.15 || heap > maxObjectBytes {
				b.Fatalf("%.0f bytes per object on the heap, %.0f estimated (at most %d, within 15 %%)", heap, est, maxObjectBytes)
			}
		})
	}
}

// BenchmarkColumnsMillion: the heap the same columns take for 1,000,000
// object-like documents, written into them directly (a Bleve index of
// that size would take minutes and gigabytes to build here), against
// their estimate, with the checks of BenchmarkColumnsMemory; then the
// time of the list query's columns part.
func BenchmarkColumnsMillion(b *testing.B) {
	const n, maxObjectBytes = 1000000, 600
	r := rand.New(rand.NewPCG(1, 2))
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	before := heapAfterGC()
	c := newColumns(budget{bytes: 1 << 40})
	c.fields, c.built = map[string]*column{}, true
	for _, f := range []string{colID, "branch", "typeRef", "deleted", "ordered", "keys", "values"} {
		c.fields[f] = &column{}
	}
	for i := range n {
		f := docFields{}
		for k, v := range objectLike(r, i, t0) {
			if x, ok := v.(int); ok { // as normalised
				v = int64(x)
			}
			f[k] = v
		}
		c.put(fmt.Sprintf("4-%d", i), f)
	}
	for _, col := range c.fields {
		col.flush()
	}
	after := heapAfterGC()
	ix := &index{mapping: search.Mapping{Fields: map[string]search.Kind{"branch": search.Long, "typeRef": search.Long,
		"deleted": search.Bool, "ordered": search.Keyword}}}
	q := search.And{search.Term{Field: "branch", Value: int64(4)}, search.Term{Field: "typeRef", Value: int64(7)},
		search.Not{Query: search.Term{Field: "deleted", Value: true}}}
	sort := []search.SortField{{Field: "ordered", Desc: true}}
	for b.Loop() {
		if page := c.page(c.eval(ix, q), sort, 0, 20); len(page) != 20 {
			b.Fatalf("page %d", len(page))
		}
	}
	heap, est := float64(after-before)/n, float64(c.estimate())/n
	b.ReportMetric(heap, "heap-B/object")
	b.ReportMetric(est, "estimate-B/object")
	if est < heap*0.85 || est > heap*1.15 || heap > maxObjectBytes {
		b.Fatalf("%.0f bytes per object on the heap, %.0f estimated (at most %d, within 15 %%)", heap, est, maxObjectBytes)
	}
}

// objectLike is a document shaped like an object of the objects index:
// ids, flags, a date, and per attribute (six, two of them translated) a
// key, a value and, for numbers and dates, an ordered term.
func objectLike(r *rand.Rand, i int, t0 time.Time) map[string]any {
	var keys, values, ordered []any
	for a := 1; a <= 6; a++ {
		for _, lang := range []string{"en", "de"}[:1+a%2] {
			k := fmt.Sprintf("%d:%s:", a, lang)
			keys = append(keys, k)
			if a <= 3 {
				values = append(values, fmt.Sprintf("%s=%s value %d", k, lang, r.IntN(50)))
			} else {
				v := r.IntN(100000)
				values = append(values, fmt.Sprintf("%s=%d", k, v))
				ordered = append(ordered, fmt.Sprintf("%s=%012d", k, v))
			}
		}
	}
	return map[string]any{"branch": 4, "typeRef": 7 + i%3, "id": i, "deleted": i%50 == 0,
		"modified": t0.Add(time.Duration(i) * time.Minute), "keys": keys, "values": values, "ordered": ordered,
		"name": []any{fmt.Sprintf("en=Object %d", i), fmt.Sprintf("de=Objekt %d", i)}, "src": `{"x": 1}`}
}

func heapAfterGC() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
