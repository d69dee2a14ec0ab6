package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/store"
)

// valuesAt renders ValuesAsOf's answer as "branch/attribute=JSON@tx".
func valuesAt(t *testing.T, s store.Store, branches []int64, id, asOf int64) string {
	t.Helper()
	vs, err := s.ValuesAsOf(ctxT(t), branches, []int64{id}, asOf)
	must(t, err)
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = fmt.Sprintf("%d/a%d=%s@%d", v.Branch, v.AttributeID, v.JSON, v.ModifiedTx)
	}
	return fmt.Sprint(out)
}

// rowsAt renders ObjectsAsOf's answer as "branch:id(deleted)@tx".
func rowsAt(t *testing.T, s store.Store, branches, ids []int64, asOf int64) string {
	t.Helper()
	objs, err := s.ObjectsAsOf(ctxT(t), branches, ids, asOf)
	must(t, err)
	out := make([]string, len(objs))
	for i, o := range objs {
		out[i] = fmt.Sprintf("%d:%d(%v)@%d/%d", o.Branch, o.ID, o.Deleted, o.CreatedTx, o.ModifiedTx)
	}
	return fmt.Sprint(out)
}

// testObjectHistory: the row versions beside the value versions, reads as
// of a transaction, and pages by transaction over both.
func testObjectHistory(t *testing.T, s store.Store) {
	ctx := ctxT(t)
	tx1 := write(t, s, func(tx store.Tx) {
		must(t, tx.PutObjects(ctx, obj(1, 0, 5, "g1", ""), obj(2, 0, 5, "g2", "")))
		must(t, tx.PutValues(ctx, val(1, 0, 10, 0, 0, 0, `"a"`), val(1, 0, 11, 0, 0, 0, `1`)))
	})
	tx2 := write(t, s, func(tx store.Tx) {
		must(t, tx.PutValues(ctx, val(1, 0, 10, 0, 0, 0, `"b"`), val(1, 7, 10, 0, 0, 0, `"child"`)))
	})
	tx3 := write(t, s, func(tx store.Tx) {
		n, err := tx.DeleteObjects(ctx, 0, []int64{1})
		must(t, err)
		if n != 1 {
			t.Fatalf("deleted %d rows", n)
		}
		_, err = tx.DeleteValues(ctx, 0, []int64{1}, store.ValueFilter{AttributeIDs: []int64{11}})
		must(t, err)
	})
	tx4 := write(t, s, func(tx store.Tx) {
		must(t, tx.PutObjects(ctx, obj(1, 0, 5, "g1", "api1")))
	})

	// As of each transaction.
	for _, c := range []struct {
		asOf       int64
		rows, vals string
	}{
		{tx1 - 1, "[]", "[]"},
		{tx1, fmt.Sprintf("[0:1(false)@%d/%d 0:2(false)@%d/%d]", tx1, tx1, tx1, tx1),
			fmt.Sprintf(`[0/a10="a"@%d 0/a11=1@%d]`, tx1, tx1)},
		{tx2, fmt.Sprintf("[0:1(false)@%d/%d 0:2(false)@%d/%d]", tx1, tx1, tx1, tx1),
			fmt.Sprintf(`[0/a10="b"@%d 7/a10="child"@%d 0/a11=1@%d]`, tx2, tx2, tx1)},
		{tx3, fmt.Sprintf("[0:1(true)@%d/%d 0:2(false)@%d/%d]", tx1, tx3, tx1, tx1),
			fmt.Sprintf(`[0/a10="b"@%d 7/a10="child"@%d]`, tx2, tx2)},
		{tx4, fmt.Sprintf("[0:1(false)@%d/%d 0:2(false)@%d/%d]", tx1, tx4, tx1, tx1),
			fmt.Sprintf(`[0/a10="b"@%d 7/a10="child"@%d]`, tx2, tx2)},
	} {
		if got := rowsAt(t, s, []int64{0, 7}, []int64{1, 2}, c.asOf); got != c.rows {
			t.Errorf("rows as of %d: got %s, want %s", c.asOf, got, c.rows)
		}
		if got := valuesAt(t, s, []int64{0, 7}, 1, c.asOf); got != c.vals {
			t.Errorf("values as of %d: got %s, want %s", c.asOf, got, c.vals)
		}
	}
	if got, want := valuesAt(t, s, []int64{7}, 1, tx4), fmt.Sprintf(`[7/a10="child"@%d]`, tx2); got != want {
		t.Errorf("values of branch 7 only: got %s, want %s", got, want)
	}

	// The history pages over the row's and the values' transactions.
	h, err := s.ObjectHistory(ctx, store.HistoryQuery{Branch: 0, ObjectID: 1})
	must(t, err)
	if got, want := fmt.Sprint(h.Transactions), fmt.Sprint([]int64{tx4, tx3, tx2, tx1}); got != want {
		t.Fatalf("history transactions: got %s, want %s", got, want)
	}
	if got, want := fmt.Sprint(len(h.Rows), len(h.Values)), "3 4"; got != want {
		t.Fatalf("history rows and values: got %s, want %s (%v, %s)", got, want, h.Rows, versionKeys(h.Values))
	}
	if h.Rows[0].APIIdentifier != "api1" || h.Rows[0].Deleted || !h.Rows[1].Deleted || h.Rows[1].ModifiedTx != tx3 {
		t.Fatalf("row versions: %+v", h.Rows)
	}
	h, err = s.ObjectHistory(ctx, store.HistoryQuery{Branch: 0, ObjectID: 1, BeforeTx: tx4, Limit: 2})
	must(t, err)
	if got, want := fmt.Sprint(h.Transactions), fmt.Sprint([]int64{tx3, tx2}); got != want {
		t.Fatalf("history page: got %s, want %s", got, want)
	}
	if got, want := versionKeys(h.Values), fmt.Sprint([]string{fmt.Sprintf("%d:a11/l0=-", tx3),
		fmt.Sprintf("%d:a10/l0=\"b\"", tx2)}); got != want || len(h.Rows) != 1 {
		t.Fatalf("history page values: got %s, want %s; rows %+v", got, want, h.Rows)
	}

	// Pruning keeps the newest version of every row and value: the state
	// now reads the same.
	vals := valuesAt(t, s, []int64{0, 7}, 1, tx4)
	n, _, err := s.PruneHistory(ctx, time.Now().Add(time.Hour), 0, 100)
	must(t, err)
	if n != 4 { // object 1's rows of tx1 and tx3, its a10 and a11 of tx1
		t.Fatalf("pruned %d versions, want 4", n)
	}
	if got, want := rowsAt(t, s, []int64{0}, []int64{1, 2}, tx4),
		fmt.Sprintf("[0:1(false)@%d/%d 0:2(false)@%d/%d]", tx4, tx4, tx1, tx1); got != want {
		t.Fatalf("rows after prune: got %s, want %s", got, want)
	}
	if got := valuesAt(t, s, []int64{0, 7}, 1, tx4); got != vals {
		t.Fatalf("values after prune: got %s, want %s", got, vals)
	}

	// Purging drops the row versions too.
	write(t, s, func(tx store.Tx) {
		_, err := tx.PurgeObjects(ctx, 0, []int64{2})
		must(t, err)
	})
	if got := rowsAt(t, s, []int64{0}, []int64{2}, tx4); got != "[]" {
		t.Fatalf("rows after purge: %s", got)
	}
}
