package bleve

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/search"
)

// With a budget between "every column" and "every column but one", the
// index frees the least recently used field alone: a search over the
// fields still held is answered from the columns, as Bleve answers it; a
// search needing the freed field is answered by Bleve; the freed field is
// reported (ColumnStats, one WARN line); and its column is built again
// once it fits.
func TestColumnsShedOneField(t *testing.T) {
	ctx := context.Background()
	var logs bytes.Buffer
	m := search.Mapping{Fields: map[string]search.Kind{
		"branch": search.Long, "type": search.Keyword, "deleted": search.Bool, "name": search.Keyword, "n": search.Long,
	}}
	eng, ix := newTestIndex(t, "shed", m, WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	version := int64(0)
	put := func(from, to int) {
		var ops []search.Op
		for i := from; i < to; i++ {
			version++
			ops = append(ops, search.Upsert(search.Document{ID: fmt.Sprintf("d%03d", i), Version: version, Fields: map[string]any{
				"branch": 1 + i%2, "type": []string{"a", "b", "c"}[i%3], "deleted": i%7 == 0,
				"name": fmt.Sprintf("name %02d", i%40), "n": (i * 37) % 101,
			}}))
		}
		if _, err := eng.Bulk(ctx, "shed", ops); err != nil {
			t.Fatal(err)
		}
	}
	put(0, 600)
	list := func(sort string) search.SearchRequest {
		req, err := search.NormalizeRequest(search.SearchRequest{Index: "shed", Query: search.And{
			search.Term{Field: "branch", Value: 1}, search.Terms{Field: "type", Values: []any{"a", "c"}},
			search.Not{Query: search.Term{Field: "deleted", Value: true}},
		}, Sort: []search.SortField{{Field: sort}}, From: 10, Size: 20}, m)
		if err != nil {
			t.Fatal(err)
		}
		return req
	}
	byName, byN := list("name"), list("n")
	// answer returns whether the columns answered req, after checking that
	// the answer (columns or Bleve) is Bleve's.
	answer := func(req search.SearchRequest) bool {
		t.Helper()
		got, ok, err := ix.searchColumns(req)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			if got, err = eng.Search(ctx, req); err != nil {
				t.Fatal(err)
			}
		}
		want, err := ix.searchBleve(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if got.Total != want.Total || len(got.Hits) != 20 || !slices.Equal(hitIDs(got), hitIDs(want)) {
			t.Fatalf("sort %v (columns %v): total %d %v, Bleve total %d %v", req.Sort, ok, got.Total, hitIDs(got), want.Total, hitIDs(want))
		}
		return ok
	}
	// Every column built, name used least recently though more often than
	// n: recency decides.
	for _, req := range []search.SearchRequest{byName, byName, byN} {
		if !answer(req) {
			t.Fatal("the columns refused a search within the budget")
		}
	}
	c := ix.cols
	c.mu.Lock()
	all, nameBytes := c.estimate(), c.fields["name"].bytes()
	// Room for everything but about half of name.
	c.budget.bytes = all - nameBytes/2
	c.mu.Unlock()
	put(0, 1) // the next write notices (an update: no slice grows)
	s := ix.cols.stats()
	if !s.OverBudget || s.AllFreed || !slices.Equal(s.Freed, []string{"name"}) || s.Bytes <= 0 || s.Bytes > s.Budget {
		t.Fatalf("one field over: %+v", s)
	}
	if !answer(byN) {
		t.Fatal("a search over the fields held went to Bleve")
	}
	if answer(byName) {
		t.Fatal("a search needing the freed field was answered from the columns")
	}
	if s := ix.cols.stats(); !slices.Equal(s.Freed, []string{"name"}) {
		t.Fatalf("the refused search rebuilt name: %+v", s)
	}
	if w := strings.Count(logs.String(), "level=WARN"); w != 1 || !strings.Contains(logs.String(), "fields=name ") {
		t.Fatalf("%d WARN lines:\n%s", w, logs.String())
	}
	// Room again: the next search needing name builds it.
	c.mu.Lock()
	c.budget.bytes = 2 * all
	c.mu.Unlock()
	if !answer(byName) {
		t.Fatal("name was not built again once it fit")
	}
	if s := ix.cols.stats(); s.OverBudget || len(s.Freed) != 0 || c.fields["name"] == nil {
		t.Fatalf("back within the budget: %+v", s)
	}
}

// Under a budget that holds some of the columns, random searches (some
// from the columns, some from Bleve, fields freed and built again as the
// searches move between them) answer exactly as Bleve does while
// documents are written between rounds.
func TestColumnsShedMatchBleve(t *testing.T) {
	ctx := context.Background()
	eng, ix := newTestIndex(t, "cols", colMapping, WithLogger(slog.New(slog.DiscardHandler)))
	m := colMapping
	r := rand.New(rand.NewPCG(3, 5))
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
	// Every column once, to size the budget: about half of them fit.
	all := search.And{search.Exists{Field: "k"}, search.Exists{Field: "n"}, search.Exists{Field: "d"},
		search.Exists{Field: "b"}, search.Exists{Field: "t"}}
	if _, ok, err := ix.searchColumns(search.SearchRequest{Query: search.Or{all, search.Term{Field: "k", Value: "a"},
		search.Range{Field: "n", Gte: int64(0)}, search.Range{Field: "d", Gte: 0.0}, search.Term{Field: "b", Value: true},
		search.Range{Field: "t", Gte: time.Unix(0, 0).UTC()}}, Size: 1}); !ok || err != nil {
		t.Fatalf("columns: %v %v", ok, err)
	}
	c := ix.cols
	c.mu.Lock()
	c.budget.bytes = c.estimate() * 6 / 10
	c.mu.Unlock()
	write(1) // the next write notices
	fromColumns, fromBleve, freedSeen := 0, 0, false
	for round := range 20 {
		for range 30 {
			req := search.SearchRequest{Index: "cols", Query: g.query(3), Sort: g.sort(), From: r.IntN(60), Size: r.IntN(40)}
			nreq, err := search.NormalizeRequest(req, m)
			if err != nil {
				t.Fatalf("normalize %+v: %v", req, err)
			}
			got, ok, err := ix.searchColumns(nreq)
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				fromColumns++
			} else {
				fromBleve++
				if got, err = eng.Search(ctx, nreq); err != nil {
					t.Fatal(err)
				}
			}
			want, err := ix.searchBleve(ctx, search.SearchRequest{Query: nreq.Query, Sort: nreq.Sort, From: nreq.From, Size: nreq.Size})
			if err != nil {
				t.Fatal(err)
			}
			if got.Total != want.Total || !slices.Equal(hitIDs(got), hitIDs(want)) {
				t.Fatalf("round %d (columns %v): %#v sort %v from %d size %d:\ngot   total %d %v\nbleve total %d %v",
					round, ok, nreq.Query, nreq.Sort, nreq.From, nreq.Size, got.Total, hitIDs(got), want.Total, hitIDs(want))
			}
			if s := c.stats(); s.AllFreed || s.Bytes > s.Budget {
				t.Fatalf("round %d: %+v", round, s)
			} else if len(s.Freed) > 0 {
				freedSeen = true
			}
		}
		write(1 + r.IntN(30))
	}
	if fromColumns == 0 || fromBleve == 0 || !freedSeen {
		t.Fatalf("%d searches from the columns, %d from Bleve, fields freed %v: the budget did not split them", fromColumns, fromBleve, freedSeen)
	}
	t.Logf("%d searches from the columns, %d from Bleve", fromColumns, fromBleve)
}
