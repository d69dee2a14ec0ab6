package bleve

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/search"
)

// The column index must answer exactly as Bleve does: random documents
// (multi-valued, missing fields, many ties), random structured queries,
// sorts and pages, compared path against path, while documents are
// updated and deleted between rounds.
func TestColumnsMatchBleve(t *testing.T) {
	ctx := context.Background()
	defer func(n int) { denseSlots = n }(denseSlots)
	denseSlots = 0 // the frequent keys of these 400 documents are counted by bitset
	eng, ix := newTestIndex(t, "cols", colMapping)
	m := colMapping
	r := rand.New(rand.NewPCG(7, 11))
	g := colGen{r: r}
	version := int64(1)
	write := func(n int) {
		var ops []search.Op
		for range n {
			version++
			id := fmt.Sprintf("d%03d", r.IntN(400))
			if r.IntN(8) == 0 {
				ops = append(ops, search.Delete(id, version))
				continue
			}
			ops = append(ops, search.Upsert(search.Document{ID: id, Version: version, Fields: g.doc()}))
		}
		if _, err := eng.Bulk(ctx, "cols", ops); err != nil {
			t.Fatal(err)
		}
	}
	write(500)
	used := 0
	for round := range 20 {
		for range 30 {
			req := search.SearchRequest{Index: "cols", Query: g.query(3), Sort: g.sort(), From: r.IntN(60), Size: r.IntN(40)}
			if r.IntN(3) == 0 { // filtered facets (issue 31), against Bleve's facets one search per filter
				req.Aggs = []search.TermsAgg{{Name: "all", Field: "k", Size: 1 + r.IntN(5)},
					{Name: "f", Field: "k", Size: 1 + r.IntN(5), Filter: g.query(2), Prefix: []string{"", "a", "b"}[r.IntN(3)]}}
			}
			nreq, err := search.NormalizeRequest(req, m)
			if err != nil {
				t.Fatalf("normalize %+v: %v", req, err)
			}
			got, ok, err := ix.searchColumns(nreq)
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				t.Fatalf("column index refused %+v", nreq)
			}
			used++
			want, err := ix.searchBleve(ctx, search.SearchRequest{Query: nreq.Query, Sort: nreq.Sort, From: nreq.From, Size: nreq.Size})
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range nreq.Aggs {
				// Against the values of Bleve's hits, counted here; Bleve's
				// own facets are compared in TestFacetsColumnsMatchBleveOnly.
				if g, w := got.Aggs[a.Key()], refAgg(t, ix, nreq.Query, a); !reflect.DeepEqual(g, w) {
					t.Fatalf("round %d: %#v agg %+v:\ncolumns %+v\nhits    %+v", round, nreq.Query, a, g, w)
				}
			}
			if got.Total != want.Total || !slices.Equal(hitIDs(got), hitIDs(want)) {
				t.Fatalf("round %d: %#v sort %v from %d size %d:\ncolumns total %d %v\nbleve   total %d %v",
					round, nreq.Query, nreq.Sort, nreq.From, nreq.Size, got.Total, hitIDs(got), want.Total, hitIDs(want))
			}
		}
		write(1 + r.IntN(30))
	}
	if used == 0 {
		t.Fatal("no search went through the column index")
	}
}

// Full text, score sorts and aggregations of other than keyword fields
// are left to Bleve.
func TestColumnsDecline(t *testing.T) {
	ix := &index{mapping: search.Mapping{Fields: map[string]search.Kind{"k": search.Keyword, "txt": search.Text}}, cols: newColumns(budget{bytes: 1 << 20})}
	for _, req := range []search.SearchRequest{
		{Query: search.Match{Field: "txt", Text: "a"}},
		{Query: search.And{search.Term{Field: "k", Value: "a"}, search.Prefix{Field: "txt", Value: "a"}}},
		{Query: search.MatchAll{}, Sort: []search.SortField{{Field: search.ScoreField}}},
		{Query: search.MatchAll{}, Aggs: []search.TermsAgg{{Field: "txt", Size: 3}}},
		{Query: search.MatchAll{}, Aggs: []search.TermsAgg{{Field: "k", Size: 3, Filter: search.Match{Field: "txt", Text: "a"}}}},
	} {
		if _, ok := ix.planColumns(req); ok {
			t.Errorf("planColumns accepted %+v", req)
		}
	}
	if _, ok := ix.planColumns(search.SearchRequest{Query: search.And{search.Prefix{Field: "k", Value: "a"}, search.Exists{Field: "txt"}}}); !ok {
		t.Error("planColumns refused a structured query")
	}
}

// An index whose columns outgrow the budget frees them a field at a time
// (here n, the only one but the ids), says so once at WARN and in
// ColumnStats, and Bleve answers the searches needing it; once enough
// documents are deleted, n's column is built again; when even the ids
// outgrow the budget, everything is freed.
func TestColumnsBudget(t *testing.T) {
	ctx := context.Background()
	var logs bytes.Buffer
	// About 90 estimated bytes per document (two columns): 4 fit, 9 do not.
	eng, err := New("", WithColumnBudget(700), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	m := search.Mapping{Fields: map[string]search.Kind{"n": search.Long}}
	if err := eng.EnsureIndex(ctx, "lim", m); err != nil {
		t.Fatal(err)
	}
	put := func(from, to int, version int64) {
		var ops []search.Op
		for i := from; i < to; i++ {
			ops = append(ops, search.Upsert(search.Document{ID: fmt.Sprint(i), Version: version, Fields: map[string]any{"n": i}}))
		}
		if _, err := eng.Bulk(ctx, "lim", ops); err != nil {
			t.Fatal(err)
		}
	}
	req := search.SearchRequest{Index: "lim", Sort: []search.SortField{{Field: "n", Desc: true}}, Size: 2}
	check := func(total int64, first string) {
		t.Helper()
		res, err := eng.Search(ctx, req)
		if err != nil || res.Total != total || res.Hits[0].ID != first {
			t.Fatalf("search = %+v, %v; want total %d, first %s", res, err, total, first)
		}
	}
	stats := func() ColumnStats {
		t.Helper()
		s := eng.ColumnStats()
		if len(s) != 1 || s[0].Index != "lim" || s[0].Budget != 700 {
			t.Fatalf("ColumnStats = %+v", s)
		}
		return s[0]
	}
	put(0, 4, 1)
	check(4, "3")
	if s := stats(); s.OverBudget || s.Documents != 4 || s.Bytes <= 0 || s.Bytes > 700 {
		t.Fatalf("under the budget: %+v", s)
	}
	put(4, 9, 1)
	check(9, "8")
	ix, _ := eng.lookup("lim")
	if s := stats(); !s.OverBudget || s.AllFreed || !slices.Equal(s.Freed, []string{"n"}) || s.Bytes <= 0 || s.Bytes > 700 ||
		ix.cols.fields["n"] != nil || ix.cols.fields[colID] == nil {
		t.Fatalf("over the budget: %+v", s)
	}
	if n := strings.Count(logs.String(), "level=WARN msg=\"search columns over budget: fields freed"); n != 1 ||
		!strings.Contains(logs.String(), "fields=n ") {
		t.Fatalf("%d WARN lines:\n%s", n, logs.String())
	}
	// Deleted down to 3 documents: the columns are built again.
	var dels []search.Op
	for i := 3; i < 9; i++ {
		dels = append(dels, search.Delete(fmt.Sprint(i), 2))
	}
	if _, err := eng.Bulk(ctx, "lim", dels); err != nil {
		t.Fatal(err)
	}
	check(3, "2")
	if s := stats(); s.OverBudget || len(s.Freed) != 0 || s.Documents != 3 || ix.cols.fields["n"] == nil {
		t.Fatalf("back under the budget: %+v", s)
	}
	// Over again: n freed again, not logged again.
	put(10, 15, 3)
	check(8, "14")
	if s := stats(); !s.OverBudget || s.AllFreed || !slices.Equal(s.Freed, []string{"n"}) {
		t.Fatalf("over the budget again: %+v", s)
	}
	if n := strings.Count(logs.String(), "level=WARN"); n != 1 {
		t.Fatalf("%d WARN lines:\n%s", n, logs.String())
	}
	// Far over: even the slots and ids do not fit, everything is freed,
	// said once more.
	put(15, 40, 3)
	check(33, "39")
	if s := stats(); !s.AllFreed || s.Bytes != 0 || ix.cols.ids != nil || ix.cols.slots.tab != nil {
		t.Fatalf("all freed: %+v", s)
	}
	if n := strings.Count(logs.String(), "level=WARN msg=\"search columns over budget: all freed"); n != 1 {
		t.Fatalf("%d WARN lines:\n%s", n, logs.String())
	}
}

func hitIDs(r search.SearchResult) []string {
	out := make([]string, len(r.Hits))
	for i, h := range r.Hits {
		out[i] = h.ID
	}
	return out
}

// colMapping is the mapping of colGen's documents.
var colMapping = search.Mapping{Fields: map[string]search.Kind{
	"k": search.Keyword, "n": search.Long, "d": search.Double, "b": search.Bool,
	"t": search.Date, "txt": search.Text, "src": search.Stored,
}, KeywordPrefixes: []string{"sk_"}}

// colGen makes random documents and queries over small value domains.
type colGen struct{ r *rand.Rand }

var colWords = []string{"", "a", "ab", "abc", "b", "ba", "B", "z", "Ä"}

func (g colGen) kw() string { return colWords[g.r.IntN(len(colWords))] }
func (g colGen) num() int64 { return int64(g.r.IntN(9) - 4) }
func (g colGen) dbl() float64 {
	return float64(g.r.IntN(9)-4) / 2
}
func (g colGen) date() time.Time {
	return time.Date(2020, 1, 1+g.r.IntN(6), 0, 0, 0, 0, time.UTC)
}

func (g colGen) doc() map[string]any {
	f := map[string]any{"src": "x"}
	maybe := func(name string, v func() any) {
		switch g.r.IntN(4) {
		case 0:
		case 1:
			f[name] = []any{v(), v(), v()}
		default:
			f[name] = v()
		}
	}
	maybe("k", func() any { return g.kw() })
	maybe("n", func() any { return g.num() })
	maybe("d", func() any { return g.dbl() })
	maybe("t", func() any { return g.date() })
	maybe("sk_1", func() any { return g.kw() })
	if g.r.IntN(3) > 0 {
		f["b"] = g.r.IntN(2) == 0
	}
	if g.r.IntN(2) == 0 {
		f["txt"] = "some words"
	}
	return f
}

func (g colGen) value(field string) any {
	switch field {
	case "n":
		return g.num()
	case "d":
		return g.dbl()
	case "t":
		return g.date()
	case "b":
		return g.r.IntN(2) == 0
	}
	return g.kw()
}

func (g colGen) query(depth int) search.Query {
	fields := []string{"k", "n", "d", "t", "b", "sk_1"}
	f := fields[g.r.IntN(len(fields))]
	n := 9
	if depth == 0 {
		n = 6
	}
	switch g.r.IntN(n) {
	case 0:
		return search.Term{Field: f, Value: g.value(f)}
	case 1:
		return search.Terms{Field: f, Values: []any{g.value(f), g.value(f)}}
	case 2:
		if f == "b" {
			f = "n"
		}
		q := search.Range{Field: f}
		switch g.r.IntN(3) {
		case 0:
			q.Gt = g.value(f)
		case 1:
			q.Gte = g.value(f)
		}
		switch g.r.IntN(3) {
		case 0:
			q.Lt = g.value(f)
		case 1:
			q.Lte = g.value(f)
		}
		if q.Gt == nil && q.Gte == nil && q.Lt == nil && q.Lte == nil {
			q.Gte = g.value(f)
		}
		return q
	case 3:
		return search.Exists{Field: []string{"k", "n", "txt", "t", "sk_1", "b"}[g.r.IntN(6)]}
	case 4:
		if v := g.kw(); v != "" {
			return search.Prefix{Field: "k", Value: v}
		}
		return search.MatchAll{}
	case 5:
		return search.IDs{fmt.Sprintf("d%03d", g.r.IntN(400)), fmt.Sprintf("d%03d", g.r.IntN(400))}
	case 6:
		return search.And{g.query(depth - 1), g.query(depth - 1)}
	case 7:
		return search.Or{g.query(depth - 1), g.query(depth - 1)}
	}
	return search.Not{Query: g.query(depth - 1)}
}

func (g colGen) sort() []search.SortField {
	fields := []string{"k", "n", "d", "t", "b", "sk_1"}
	var out []search.SortField
	for range g.r.IntN(3) {
		out = append(out, search.SortField{Field: fields[g.r.IntN(len(fields))], Desc: g.r.IntN(2) == 0})
	}
	return out
}

// A reopened index builds its columns from the documents on disk (the
// first search), then follows new writes and deletes.
func TestColumnsReopen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	m := search.Mapping{Fields: map[string]search.Kind{"n": search.Long, "k": search.Keyword}}
	open := func() (*Engine, *index) {
		eng, err := New(dir)
		if err != nil {
			t.Fatal(err)
		}
		if err := eng.EnsureIndex(ctx, "re", m); err != nil {
			t.Fatal(err)
		}
		ix, err := eng.lookup("re")
		if err != nil {
			t.Fatal(err)
		}
		return eng, ix
	}
	eng, _ := open()
	var ops []search.Op
	for i := range 50 {
		ops = append(ops, search.Upsert(search.Document{ID: fmt.Sprintf("d%02d", i), Version: 1, Fields: map[string]any{"n": i % 7, "k": fmt.Sprint(i % 3)}}))
	}
	if _, err := eng.Bulk(ctx, "re", ops); err != nil {
		t.Fatal(err)
	}
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}
	eng, ix := open()
	defer eng.Close()
	req, err := search.NormalizeRequest(search.SearchRequest{Index: "re", Query: search.Term{Field: "k", Value: "1"},
		Sort: []search.SortField{{Field: "n", Desc: true}}, Size: 30}, m)
	if err != nil {
		t.Fatal(err)
	}
	check := func(step string) {
		t.Helper()
		got, ok, err := ix.searchColumns(req)
		want, err2 := ix.searchBleve(ctx, req)
		if !ok || err != nil || err2 != nil || got.Total != want.Total || !slices.Equal(hitIDs(got), hitIDs(want)) {
			t.Fatalf("%s: columns %v %v %v, bleve %v %v", step, ok, hitIDs(got), err, hitIDs(want), err2)
		}
	}
	check("reopened")
	if _, err := eng.Bulk(ctx, "re", []search.Op{search.Delete("d01", 2),
		search.Upsert(search.Document{ID: "d04", Version: 2, Fields: map[string]any{"n": 100, "k": "1"}}),
		search.Upsert(search.Document{ID: "d60", Version: 2, Fields: map[string]any{"n": -1, "k": "1"}})}); err != nil {
		t.Fatal(err)
	}
	check("written")
}

// Searches running while Bulk writes neither fail nor race (run with
// -race). As with a Bleve search, hits are read after the page is chosen,
// so a document written meanwhile shows its new fields (or is dropped).
func TestColumnsConcurrent(t *testing.T) {
	// Within the budget, and outgrowing it (about 80 estimated bytes per
	// document: the columns are freed once the index passes about 55
	// documents, while searches run).
	for _, b := range []int64{DefaultColumnBudget, 4 << 10} {
		t.Run(fmt.Sprint(b), func(t *testing.T) { testColumnsConcurrent(t, b) })
	}
}

func testColumnsConcurrent(t *testing.T, budget int64) {
	ctx := context.Background()
	eng, err := New("", WithColumnBudget(budget))
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	m := search.Mapping{Fields: map[string]search.Kind{"n": search.Long}}
	if err := eng.EnsureIndex(ctx, "con", m); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	errs := make(chan error, 4)
	for w := range 3 {
		go func() {
			for {
				select {
				case <-done:
					errs <- nil
					return
				default:
				}
				res, err := eng.Search(ctx, search.SearchRequest{Index: "con", Query: search.Range{Field: "n", Gte: int64(w)},
					Sort: []search.SortField{{Field: "n"}}, Size: 10})
				if err == nil && res.Total > 100 {
					err = fmt.Errorf("total %d of at most 100 documents", res.Total)
				}
				if len(res.Hits) > 10 {
					err = fmt.Errorf("%d hits for size 10", len(res.Hits))
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for v := range 40 {
		var ops []search.Op
		for i := range 10 {
			id := fmt.Sprint((v*10 + i) % 100)
			if i == 9 {
				ops = append(ops, search.Delete(id, int64(v+1)))
				continue
			}
			ops = append(ops, search.Upsert(search.Document{ID: id, Version: int64(v + 1), Fields: map[string]any{"n": (v * i) % 13}}))
		}
		if _, err := eng.Bulk(ctx, "con", ops); err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// refAgg is a terms aggregation of keyword field a.Field counted from the
// hits of a Bleve search (at most 1,000 documents).
func refAgg(t *testing.T, ix *index, q search.Query, a search.TermsAgg) search.AggResult {
	t.Helper()
	if a.Filter != nil {
		q = search.And{q, a.Filter}
	}
	res, err := ix.searchBleve(context.Background(), search.SearchRequest{Query: q, Size: 1000})
	if err != nil {
		t.Fatal(err)
	}
	out := search.AggResult{Docs: res.Total}
	counts := map[string]int64{}
	for _, h := range res.Hits {
		keys := colKeys(h.Fields[a.Field])
		if len(keys) == 0 {
			out.Missing++
		}
		for _, k := range keys {
			if strings.HasPrefix(k, a.Prefix) {
				counts[k]++
			}
		}
	}
	for k, n := range counts {
		out.Buckets = append(out.Buckets, search.Bucket{Key: k, Count: n})
	}
	out.Buckets, out.Other = search.TopBuckets(out.Buckets, a.Size)
	return out
}
