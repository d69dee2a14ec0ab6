package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/store"
)

// versionKeys renders versions as "tx:attribute=JSON" ("-" = deleted).
func versionKeys(vs []store.ValueVersion) string {
	out := make([]string, len(vs))
	for i, v := range vs {
		j := string(v.JSON)
		if v.Deleted {
			j = "-"
		}
		out[i] = fmt.Sprintf("%d:a%d/l%d=%s", v.Tx, v.AttributeID, v.Language, j)
	}
	return fmt.Sprint(out)
}

func testValueHistory(t *testing.T, s store.Store) {
	ctx := ctxT(t)
	tx1 := write(t, s, func(tx store.Tx) {
		must(t, tx.PutValues(ctx, val(1, 0, 10, 0, 0, 0, `"a"`), val(1, 0, 11, 0, 0, 0, `1`),
			val(2, 0, 10, 0, 0, 0, `"other"`)))
	})
	tx2 := write(t, s, func(tx store.Tx) {
		must(t, tx.PutValues(ctx, val(1, 0, 10, 0, 0, 0, `"b"`)))
	})
	tx3 := write(t, s, func(tx store.Tx) {
		_, err := tx.DeleteValues(ctx, 0, []int64{1}, store.ValueFilter{AttributeIDs: []int64{11}})
		must(t, err)
	})
	got, err := s.ValueHistory(ctx, store.HistoryQuery{Branch: 0, ObjectID: 1})
	must(t, err)
	want := fmt.Sprint([]string{
		fmt.Sprintf("%d:a11/l0=-", tx3),
		fmt.Sprintf("%d:a10/l0=\"b\"", tx2),
		fmt.Sprintf("%d:a10/l0=\"a\"", tx1), fmt.Sprintf("%d:a11/l0=1", tx1),
	})
	if versionKeys(got) != want {
		t.Fatalf("history:\n got %s\nwant %s", versionKeys(got), want)
	}
	// Paged by transaction: the limit never splits one.
	got, err = s.ValueHistory(ctx, store.HistoryQuery{ObjectID: 1, BeforeTx: tx3, Limit: 1})
	must(t, err)
	if w := fmt.Sprint([]string{fmt.Sprintf("%d:a10/l0=\"b\"", tx2)}); versionKeys(got) != w {
		t.Fatalf("page before %d: got %s, want %s", tx3, versionKeys(got), w)
	}
	got, err = s.ValueHistory(ctx, store.HistoryQuery{ObjectID: 1, BeforeTx: tx2, Limit: 1})
	must(t, err)
	if len(got) != 2 || got[0].Tx != tx1 {
		t.Fatalf("page before %d: got %s", tx2, versionKeys(got))
	}

	// Pruning keeps the versions still newest of their value.
	// In batches of one transaction: the first covers tx1 alone.
	n, last, err := s.PruneHistory(ctx, time.Now().Add(time.Hour), 0, 1)
	must(t, err)
	if n != 2 || last != tx1 { // tx1's a10 and a11, both superseded
		t.Fatalf("pruned %d versions up to %d, want 2 up to %d", n, last, tx1)
	}
	for last != 0 {
		n, last, err = s.PruneHistory(ctx, time.Now().Add(time.Hour), last, 1)
		must(t, err)
		if n != 0 {
			t.Fatalf("pruned %d more versions", n)
		}
	}
	if n, _, err := s.PruneHistory(ctx, time.Now().Add(-time.Hour), 0, 100); err != nil || n != 0 {
		t.Fatalf("pruned %d versions of no transaction old enough (%v)", n, err)
	}
	got, err = s.ValueHistory(ctx, store.HistoryQuery{ObjectID: 1})
	must(t, err)
	want = fmt.Sprint([]string{fmt.Sprintf("%d:a11/l0=-", tx3), fmt.Sprintf("%d:a10/l0=\"b\"", tx2)})
	if versionKeys(got) != want {
		t.Fatalf("after prune:\n got %s\nwant %s", versionKeys(got), want)
	}
	got, err = s.ValueHistory(ctx, store.HistoryQuery{ObjectID: 2})
	must(t, err)
	if len(got) != 1 {
		t.Fatalf("object 2 lost its only version: %s", versionKeys(got))
	}

	// Purging an object drops its history.
	write(t, s, func(tx store.Tx) {
		_, err := tx.PurgeObjects(ctx, 0, []int64{1})
		must(t, err)
	})
	got, err = s.ValueHistory(ctx, store.HistoryQuery{ObjectID: 1})
	must(t, err)
	if len(got) != 0 {
		t.Fatalf("history after purge: %s", versionKeys(got))
	}
}
