package storetest

import (
	"fmt"
	"testing"

	"github.com/cmsplatform/cms/pkg/store"
)

// rowKeys renders object rows as "id@branch" for comparisons.
func rowKeys(objs []store.Object) string {
	out := make([]string, len(objs))
	for i, o := range objs {
		out[i] = fmt.Sprintf("%d@%d", o.ID, o.Branch)
	}
	return fmt.Sprint(out)
}

// testChainReads covers store.ChainReader: rows of several branches in one
// call, ordered by id then branch, and paging that counts distinct ids.
func testChainReads(t *testing.T, s store.Store) {
	ctx := ctxT(t)
	write(t, s, func(tx store.Tx) {
		must(t, tx.PutObjects(ctx,
			obj(10, 4, 7, "g10", "ten"),
			obj(10, 5, 7, "g10", "ten"), // override on branch 5
			obj(11, 5, 8, "g11", ""),
			obj(12, 4, 7, "g12", "twelve"),
			obj(12, 6, 7, "g12", "twelve"), // branch 6 is not in the chain
			obj(13, 6, 7, "g13", "")))
		must(t, tx.PutValues(ctx,
			val(10, 4, 1000, 201, 0, 0, `"parent"`),
			val(10, 5, 1000, 201, 0, 0, `"child"`),
			val(10, 4, 1001, 0, 0, 0, `1`),
			val(12, 6, 1000, 201, 0, 0, `"other"`)))
	})
	chain := []int64{5, 4}

	got, err := s.GetObjectsIn(ctx, chain, []int64{12, 10, 11, 13, 99})
	must(t, err)
	if k := rowKeys(got); k != "[10@4 10@5 11@5 12@4]" {
		t.Fatalf("GetObjectsIn = %s", k)
	}
	if got, err := s.GetObjectsIn(ctx, nil, []int64{10}); err != nil || len(got) != 0 {
		t.Fatalf("GetObjectsIn without branches = %v, %v", got, err)
	}

	got, err = s.FindObjectsIn(ctx, chain, []string{"g11"}, []string{"twelve"})
	must(t, err)
	if k := rowKeys(got); k != "[11@5 12@4]" {
		t.Fatalf("FindObjectsIn(chain) = %s", k)
	}
	got, err = s.FindObjectsIn(ctx, nil, nil, []string{"twelve", "ten"})
	must(t, err)
	if k := rowKeys(got); k != "[10@4 10@5 12@4 12@6]" {
		t.Fatalf("FindObjectsIn(all branches) = %s", k)
	}

	// Limit counts ids, not rows: id 10 has two rows and both come back.
	got, err = s.ListObjectsIn(ctx, chain, store.ObjectQuery{Limit: 2})
	must(t, err)
	if k := rowKeys(got); k != "[10@4 10@5 11@5]" {
		t.Fatalf("ListObjectsIn page 1 = %s", k)
	}
	got, err = s.ListObjectsIn(ctx, chain, store.ObjectQuery{AfterID: 11, Limit: 2})
	must(t, err)
	if k := rowKeys(got); k != "[12@4]" {
		t.Fatalf("ListObjectsIn page 2 = %s", k)
	}
	got, err = s.ListObjectsIn(ctx, []int64{4, 5, 6}, store.ObjectQuery{TypeIDs: []int64{7}})
	must(t, err)
	if k := rowKeys(got); k != "[10@4 10@5 12@4 12@6 13@6]" {
		t.Fatalf("ListObjectsIn by type = %s", k)
	}
	// Pages of one type and of several, on a chain and on one branch.
	for _, c := range []struct {
		branches []int64
		q        store.ObjectQuery
		want     string
	}{
		{chain, store.ObjectQuery{TypeIDs: []int64{7}, Limit: 1}, "[10@4 10@5]"},
		{chain, store.ObjectQuery{TypeIDs: []int64{7}, AfterID: 10, Limit: 1}, "[12@4]"},
		{chain, store.ObjectQuery{TypeIDs: []int64{7, 8}, AfterID: 10, Limit: 1}, "[11@5]"},
		{chain, store.ObjectQuery{TypeIDs: []int64{8, 7}, AfterID: 10}, "[11@5 12@4]"},
		{[]int64{4}, store.ObjectQuery{TypeIDs: []int64{7}, AfterID: 10, Limit: 1}, "[12@4]"},
		{[]int64{6}, store.ObjectQuery{Limit: 1}, "[12@6]"},
		{[]int64{6, 5}, store.ObjectQuery{AfterID: 11, Limit: 5}, "[12@6 13@6]"},
	} {
		got, err = s.ListObjectsIn(ctx, c.branches, c.q)
		must(t, err)
		if k := rowKeys(got); k != c.want {
			t.Fatalf("ListObjectsIn(%v, %+v) = %s, want %s", c.branches, c.q, k, c.want)
		}
	}
	deleted := false
	_, err = s.ListObjectsIn(ctx, chain, store.ObjectQuery{Deleted: &deleted})
	mustBe(t, err, store.ErrInvalidArgument, "ListObjectsIn with Deleted")

	vals, err := s.ListValuesIn(ctx, chain, []int64{12, 10}, store.ValueFilter{})
	must(t, err)
	eqValues(t, "ListValuesIn", vals,
		val(10, 4, 1000, 201, 0, 0, `"parent"`),
		val(10, 5, 1000, 201, 0, 0, `"child"`),
		val(10, 4, 1001, 0, 0, 0, `1`))
	vals, err = s.ListValuesIn(ctx, []int64{4, 5, 6}, []int64{10, 12}, store.ValueFilter{AttributeIDs: []int64{1000}, Languages: []int64{201}})
	must(t, err)
	eqValues(t, "ListValuesIn filtered", vals,
		val(10, 4, 1000, 201, 0, 0, `"parent"`),
		val(10, 5, 1000, 201, 0, 0, `"child"`),
		val(12, 6, 1000, 201, 0, 0, `"other"`))

	// A transaction reads its own writes through the chain methods too.
	tx, err := s.Begin(ctx, store.TxMeta{User: "tester"})
	must(t, err)
	defer func() { _ = tx.Rollback() }()
	must(t, tx.PutObjects(ctx, obj(14, 5, 7, "g14", "")))
	got, err = tx.GetObjectsIn(ctx, chain, []int64{14})
	must(t, err)
	if k := rowKeys(got); k != "[14@5]" {
		t.Fatalf("GetObjectsIn inside the transaction = %s", k)
	}
}

// testPurge covers PurgeObjects and PurgeBranch: rows and values go away for
// good on the named branch only.
func testPurge(t *testing.T, s store.Store) {
	ctx := ctxT(t)
	write(t, s, func(tx store.Tx) {
		must(t, tx.PutObjects(ctx, obj(20, 4, 7, "g20", "twenty"), obj(21, 4, 7, "g21", ""),
			obj(20, 5, 7, "g20", "twenty"), obj(22, 5, 7, "g22", "")))
		must(t, tx.PutValues(ctx, val(20, 4, 1000, 0, 0, 0, `"a"`), val(21, 4, 1000, 0, 0, 0, `"b"`),
			val(20, 5, 1000, 0, 0, 0, `"c"`), val(22, 5, 1000, 0, 0, 0, `"d"`)))
	})
	write(t, s, func(tx store.Tx) {
		n, err := tx.PurgeObjects(ctx, 4, []int64{20, 99})
		must(t, err)
		if n != 1 {
			t.Fatalf("PurgeObjects removed %d rows, want 1", n)
		}
		n, err = tx.PurgeBranch(ctx, 5)
		must(t, err)
		if n != 2 {
			t.Fatalf("PurgeBranch removed %d rows, want 2", n)
		}
	})
	got, err := s.GetObjectsIn(ctx, []int64{4, 5}, []int64{20, 21, 22})
	must(t, err)
	if k := rowKeys(got); k != "[21@4]" {
		t.Fatalf("after purge: %s", k)
	}
	vals, err := s.ListValuesIn(ctx, []int64{4, 5}, []int64{20, 21, 22}, store.ValueFilter{})
	must(t, err)
	eqValues(t, "values after purge", vals, val(21, 4, 1000, 0, 0, 0, `"b"`))
	// The GUID and API identifier of a purged row are free again.
	write(t, s, func(tx store.Tx) { must(t, tx.PutObjects(ctx, obj(23, 4, 7, "g20", "twenty"))) })
}
