package bleve

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2/numeric"

	"github.com/cmsplatform/cms/pkg/search"
)

// wideInt64 draws values of every magnitude and sign, and the ones next
// to the boundaries of the split (multiples of 256, the extremes).
func wideInt64(r *rand.Rand) int64 {
	switch r.IntN(5) {
	case 0:
		return []int64{math.MinInt64, math.MinInt64 + 1, -1, 0, 1, math.MaxInt64 - 1, math.MaxInt64}[r.IntN(7)]
	case 1:
		return int64(r.IntN(1<<16)) << 8 * int64(1-2*r.IntN(2))
	case 2:
		return r.Int64N(1<<20) - 1<<19
	case 3:
		return r.Int64() >> r.IntN(63)
	}
	return -r.Int64() >> r.IntN(63)
}

// A range split at numberShifts covers exactly the values in it: a value is
// in [lo, hi] if and only if one of the spans holds its term at the span's
// shift.
func TestSplitRangeCoversExactly(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	for range 3000 {
		lo, hi := wideInt64(r), wideInt64(r)
		if r.IntN(4) > 0 && lo > hi {
			lo, hi = hi, lo
		}
		spans := splitRange(lo, hi, numberShifts)
		if len(spans) > 2*len(numberShifts) {
			t.Fatalf("[%d, %d]: %d spans", lo, hi, len(spans))
		}
		for range 40 {
			v := wideInt64(r)
			switch r.IntN(4) {
			case 0:
				v = lo + int64(r.IntN(3)) - 1
			case 1:
				v = hi + int64(r.IntN(3)) - 1
			}
			in := false
			for _, s := range spans {
				term := numeric.MustNewPrefixCodedInt64(v, s.shift)
				from, to := numeric.MustNewPrefixCodedInt64(s.lo, s.shift), numeric.MustNewPrefixCodedInt64(s.hi, s.shift)
				if bytes.Compare(term, from) >= 0 && bytes.Compare(term, to) <= 0 {
					if in {
						t.Fatalf("[%d, %d]: %d in two spans", lo, hi, v)
					}
					in = true
				}
				if n, ok := s.count(); !ok || n >= 512 { // less than two terms of the next shift
					t.Fatalf("[%d, %d]: %d terms at shift %d", lo, hi, n, s.shift)
				}
			}
			if want := lo <= v && v <= hi; in != want {
				t.Fatalf("[%d, %d]: %d covered %v, want %v", lo, hi, v, in, want)
			}
		}
	}
}

// Ranges and terms on Long, Double and Date fields, answered by Bleve
// (not the columns), match what a scan of the values says: wide random
// values, open and closed ends, multi-valued fields; and documents
// indexed at Bleve's own step (an index written before numberShifts) are
// found the same way.
func TestNumberRangesMatchScan(t *testing.T) {
	ctx := context.Background()
	m := search.Mapping{Fields: map[string]search.Kind{"n": search.Long, "d": search.Double, "t": search.Date}}
	eng, ix := newTestIndex(t, "num", m)
	r := rand.New(rand.NewPCG(9, 4))
	// Within the times Bleve can index (Unix nanoseconds in an int64).
	date := func() time.Time { return time.Unix(0, wideInt64(r)>>(1+r.IntN(8))).UTC().Truncate(time.Millisecond) }
	value := map[string]func() any{
		"n": func() any { return wideInt64(r) },
		"d": func() any { return float64(wideInt64(r)) / float64(int64(1)<<r.IntN(62)) },
		"t": func() any { return date() },
	}
	docs := map[string]map[string][]any{}
	var ops []search.Op
	for i := range 400 {
		id := fmt.Sprintf("d%03d", i)
		fields, vals := map[string]any{}, map[string][]any{}
		for _, f := range []string{"n", "d", "t"} {
			for range r.IntN(3) {
				vals[f] = append(vals[f], value[f]())
			}
			if len(vals[f]) > 0 {
				fields[f] = vals[f]
			}
		}
		docs[id] = vals
		ops = append(ops, search.Upsert(search.Document{ID: id, Version: 1, Fields: fields}))
	}
	if _, err := eng.Bulk(ctx, "num", ops); err != nil {
		t.Fatal(err)
	}
	for _, op := range ops[:len(ops)/4] { // again, as an index written at Bleve's step 4
		d, err := ix.toBleve(op.Doc)
		if err != nil {
			t.Fatal(err)
		}
		if err := ix.bi.Index(op.Doc.ID, d); err != nil {
			t.Fatal(err)
		}
	}
	ids := slices.Sorted(maps.Keys(docs))
	less := func(a, b any) bool {
		switch x := a.(type) {
		case int64: // Bleve indexes a Long as a float64: past 2^53 neighbours are equal
			return float64(x) < float64(b.(int64))
		case float64:
			return x < b.(float64)
		}
		return a.(time.Time).Before(b.(time.Time))
	}
	for range 600 {
		f := []string{"n", "d", "t"}[r.IntN(3)]
		var q search.Query
		var match func(v any) bool
		pick := func() any { // a value of a document half of the time
			if vs := docs[ids[r.IntN(len(ids))]][f]; len(vs) > 0 && r.IntN(2) == 0 {
				return vs[r.IntN(len(vs))]
			}
			return value[f]()
		}
		if r.IntN(4) == 0 {
			v := pick()
			q, match = search.Term{Field: f, Value: v}, func(x any) bool { return !less(x, v) && !less(v, x) }
		} else {
			rq := search.Range{Field: f}
			lo, hi := pick(), pick()
			ok := []func(any) bool{func(any) bool { return true }, func(any) bool { return true }}
			switch r.IntN(3) {
			case 0:
				rq.Gt, ok[0] = lo, func(x any) bool { return less(lo, x) }
			case 1:
				rq.Gte, ok[0] = lo, func(x any) bool { return !less(x, lo) }
			}
			switch r.IntN(3) {
			case 0:
				rq.Lt, ok[1] = hi, func(x any) bool { return less(x, hi) }
			case 1:
				rq.Lte, ok[1] = hi, func(x any) bool { return !less(hi, x) }
			}
			if rq.Gt == nil && rq.Gte == nil && rq.Lt == nil && rq.Lte == nil {
				rq.Gte, ok[0] = lo, func(x any) bool { return !less(x, lo) }
			}
			q, match = rq, func(x any) bool { return ok[0](x) && ok[1](x) }
		}
		var want []string
		for _, id := range ids {
			if slices.ContainsFunc(docs[id][f], match) {
				want = append(want, id)
			}
		}
		req, err := search.NormalizeRequest(search.SearchRequest{Index: "num", Query: q, Size: 1000}, m)
		if err != nil {
			t.Fatal(err)
		}
		res, err := ix.searchBleve(ctx, search.SearchRequest{Query: req.Query, Size: req.Size})
		if err != nil {
			t.Fatal(err)
		}
		got := hitIDs(res)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("%#v: got %d %v\nwant %d %v", q, len(got), got, len(want), want)
		}
	}
}
