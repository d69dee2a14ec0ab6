package bleve

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"

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
	eng, err := New("", WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	m := search.Mapping{Fields: map[string]search.Kind{
		"branch": search.Long, "type": search.Keyword, "deleted": search.Bool, "name": search.Keyword, "n": search.Long,
	}}
	if err := eng.EnsureIndex(ctx, "shed", m); err != nil {
		t.Fatal(err)
	}
	ix, err := eng.lookup("shed")
	if err != nil {
		t.Fatal(err)
	}
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
	// Every column built, n used least recently.
	if !answer(byN) || !answer(byName) {
		t.Fatal("the columns refused a search within the budget")
	}
	c := ix.cols
	c.mu.Lock()
	all, nBytes := c.estimate(), c.fields["n"].bytes()
	// Room for everything but about half of n.
	c.budget.bytes = all - nBytes/2
	c.mu.Unlock()
	put(0, 1) // the next write notices (an update: no slice grows)
	s := ix.cols.stats()
	if !s.OverBudget || s.AllFreed || !slices.Equal(s.Freed, []string{"n"}) || s.Bytes <= 0 || s.Bytes > s.Budget {
		t.Fatalf("one field over: %+v", s)
	}
	if !answer(byName) {
		t.Fatal("a search over the fields held went to Bleve")
	}
	if answer(byN) {
		t.Fatal("a search needing the freed field was answered from the columns")
	}
	if s := ix.cols.stats(); !slices.Equal(s.Freed, []string{"n"}) {
		t.Fatalf("the refused search rebuilt n: %+v", s)
	}
	if w := strings.Count(logs.String(), "level=WARN"); w != 1 || !strings.Contains(logs.String(), "fields=n ") {
		t.Fatalf("%d WARN lines:\n%s", w, logs.String())
	}
	// Room again: the next search needing n builds it.
	c.mu.Lock()
	c.budget.bytes = 2 * all
	c.mu.Unlock()
	if !answer(byN) {
		t.Fatal("n was not built again once it fit")
	}
	if s := ix.cols.stats(); s.OverBudget || len(s.Freed) != 0 || c.fields["n"] == nil {
		t.Fatalf("back within the budget: %+v", s)
	}
}
