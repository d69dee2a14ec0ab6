package storetest

import (
	"fmt"
	"testing"

	"github.com/cmsplatform/cms/pkg/store"
)

// testListBranchObjectIDs: the ids of a branch's own rows and values
// (a value without a row counts, another branch's rows do not), each
// once, ascending, paged by afterID and limit.
func testListBranchObjectIDs(t *testing.T, s store.Store) {
	ctx := ctxT(t)
	write(t, s, func(tx store.Tx) {
		must(t, tx.PutObjects(ctx, obj(10, 1, 0, "g10", ""), obj(11, 1, 0, "g11", ""), obj(12, 1, 0, "g12", ""),
			obj(11, 2, 0, "g11", ""), obj(14, 2, 0, "g14", "")))
		must(t, tx.PutValues(ctx, val(10, 1, 5, 0, 0, 0, `"a"`), val(12, 2, 5, 0, 0, 0, `"b"`),
			val(12, 2, 6, 0, 0, 0, `"c"`), val(11, 2, 5, 0, 0, 0, `"d"`)))
	})
	page := func(after int64, limit int) string {
		ids, err := s.ListBranchObjectIDs(ctx, 2, after, limit)
		must(t, err)
		return fmt.Sprint(ids)
	}
	if got := page(0, 0); got != "[11 12 14]" {
		t.Fatalf("all of branch 2 = %s, want [11 12 14]", got)
	}
	if got := page(0, 2); got != "[11 12]" {
		t.Fatalf("first page = %s, want [11 12]", got)
	}
	if got := page(12, 2); got != "[14]" {
		t.Fatalf("second page = %s, want [14]", got)
	}
	if got := page(14, 2); got != "[]" {
		t.Fatalf("after the last = %s, want []", got)
	}
}

// testTransactionObjectIDs: the objects whose row or values on a branch
// a transaction wrote, not those of another branch or transaction.
func testTransactionObjectIDs(t *testing.T, s store.Store) {
	ctx := ctxT(t)
	first := write(t, s, func(tx store.Tx) {
		must(t, tx.PutObjects(ctx, obj(20, 1, 0, "g20", ""), obj(21, 1, 0, "g21", ""), obj(22, 2, 0, "g22", "")))
	})
	second := write(t, s, func(tx store.Tx) {
		must(t, tx.PutValues(ctx, val(21, 1, 5, 0, 0, 0, `"a"`), val(21, 1, 6, 0, 0, 0, `"b"`), val(22, 2, 5, 0, 0, 0, `"c"`)))
		_, err := tx.DeleteObjects(ctx, 1, []int64{20})
		must(t, err)
	})
	for _, c := range []struct {
		branch, tx int64
		want       string
	}{{1, first, "[20 21]"}, {1, second, "[20 21]"}, {2, second, "[22]"}, {2, second + 1, "[]"}} {
		ids, err := s.TransactionObjectIDs(ctx, c.branch, c.tx)
		must(t, err)
		if fmt.Sprint(ids) != c.want && !(c.want == "[]" && len(ids) == 0) {
			t.Errorf("branch %d transaction %d: %v, want %s", c.branch, c.tx, ids, c.want)
		}
	}
}
