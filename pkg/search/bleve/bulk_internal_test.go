package bleve

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/cmsplatform/cms/pkg/search"
)

// A bulk of thousands of documents is written as several batches built
// side by side, yet a full-text search (Bleve's own path, not the
// columns) running meanwhile sees all of it or none: never a part, never
// an old and a new copy of one document at once. An id written twice in
// one bulk keeps one copy.
func TestSplitBulkAllOrNone(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	ctx := context.Background()
	eng, ix := newTestIndex(t, "split", search.Mapping{Fields: map[string]search.Kind{"t": search.Text}})
	adv, err := ix.bi.Advanced()
	if err != nil {
		t.Fatal(err)
	}
	_, holder := scorchOf(adv)
	if holder == nil {
		t.Fatalf("a new index is a %T, not held scorch", adv)
	}
	const n = 4 * splitBatchDocs
	bulk := func(word string, ver int64) []search.Op {
		ops := make([]search.Op, 0, n+1)
		for i := range n {
			ops = append(ops, search.Upsert(search.Document{ID: fmt.Sprint(i), Version: ver, Fields: map[string]any{"t": word}}))
		}
		// The first id again, newer: one copy, in the last word.
		return append(ops, search.Upsert(search.Document{ID: "0", Version: ver + 1, Fields: map[string]any{"t": word}}))
	}
	count := func(q search.Query) (int64, error) {
		res, err := ix.searchBleve(ctx, search.SearchRequest{Query: q, Size: 0})
		return res.Total, err
	}
	words := []string{"alpha", "beta", "gamma"}
	done := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	seen := make([]map[int64]bool, 3)
	for r := range 3 {
		seen[r] = map[int64]bool{}
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				all, err := count(search.Match{Field: "t", Text: "alpha beta gamma"})
				if err == nil && all != 0 && all != n {
					err = fmt.Errorf("%d documents match any word, want 0 or %d", all, n)
				}
				for _, w := range words {
					if err != nil {
						break
					}
					var c int64
					if c, err = count(search.Match{Field: "t", Text: w}); err == nil && c != 0 && c != n {
						err = fmt.Errorf("%d documents say %q, want 0 or %d", c, w, n)
					}
				}
				if err != nil {
					errs <- err
					return
				}
				seen[r][all] = true
			}
		})
	}
	for v, w := range words {
		if _, err := eng.Bulk(ctx, "split", bulk(w, int64(2*v+1))); err != nil {
			t.Fatal(err)
		}
		if c, err := count(search.Match{Field: "t", Text: w}); err != nil || c != n {
			t.Fatalf("after the bulk of %q: %d documents say it (%v), want %d", w, c, err, n)
		}
	}
	close(done)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got := holder.splits.Load(); got != int64(len(words)) {
		t.Errorf("%d of %d bulks were split", got, len(words))
	}
	if holder.held != nil {
		t.Error("the readers are still held after the bulks succeeded")
	}
	t.Logf("totals seen by readers: %v %v %v", seen[0], seen[1], seen[2])
}
