package bleve_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/cmsplatform/cms/pkg/search"
	"github.com/cmsplatform/cms/pkg/search/bleve"
)

// TestLargeBulk: a Bulk large enough to be prepared on several cores
// (1,000 upserts and a delete) indexes every document with its fields and
// version, full text and keyword alike; one invalid document among 1,000
// fails the whole Bulk, writing nothing.
func TestLargeBulk(t *testing.T) {
	ctx := context.Background()
	e, err := bleve.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	m := search.Mapping{Fields: map[string]search.Kind{"kind": search.Keyword, "n": search.Long, "text": search.Text}}
	if err := e.EnsureIndex(ctx, "big", m); err != nil {
		t.Fatal(err)
	}
	ops := make([]search.Op, 0, 1001)
	for i := range 1000 {
		ops = append(ops, search.Upsert(search.Document{ID: fmt.Sprint("d", i), Version: int64(i + 1),
			Fields: map[string]any{"kind": fmt.Sprint("k", i%7), "n": int64(i), "text": fmt.Sprintf("word%d common", i)}}))
	}
	ops = append(ops, search.Delete("d3", 100))
	res, err := e.Bulk(ctx, "big", ops)
	if err != nil || res.Applied != 1001 {
		t.Fatalf("Bulk: %+v, %v", res, err)
	}
	if err := e.Refresh(ctx, "big"); err != nil {
		t.Fatal(err)
	}
	count := func(q search.Query) int64 {
		t.Helper()
		r, err := e.Search(ctx, search.SearchRequest{Index: "big", Query: q, Size: 0})
		if err != nil {
			t.Fatal(err)
		}
		return r.Total
	}
	if n := count(search.MatchAll{}); n != 999 {
		t.Errorf("%d documents, want 999", n)
	}
	if n := count(search.Match{Field: "text", Text: "common"}); n != 999 {
		t.Errorf("full text: %d documents, want 999", n)
	}
	if n := count(search.Term{Field: "kind", Value: "k3"}); n != 142 { // 143, d3 deleted
		t.Errorf("keyword: %d documents, want 142", n)
	}
	d, err := e.Get(ctx, "big", "d999")
	if err != nil || d.Version != 1000 || d.Fields["n"] != int64(999) {
		t.Errorf("d999: %+v, %v", d, err)
	}

	bad := make([]search.Op, 0, 1000)
	for i := range 1000 {
		f := map[string]any{"kind": "again", "n": int64(i)}
		if i == 777 {
			f["unmapped"] = "x"
		}
		bad = append(bad, search.Upsert(search.Document{ID: fmt.Sprint("b", i), Version: 1, Fields: f}))
	}
	if _, err := e.Bulk(ctx, "big", bad); !errors.Is(err, search.ErrInvalidDocument) {
		t.Fatalf("a Bulk with an invalid document: %v, want ErrInvalidDocument", err)
	}
	if n := count(search.Term{Field: "kind", Value: "again"}); n != 0 {
		t.Errorf("the failed Bulk wrote %d documents", n)
	}
}
