package storetest

import (
	"fmt"
	"testing"

	"github.com/cmsplatform/cms/pkg/store"
)

func val(obj, branch, attr, lang, variant, sort int64, j string) store.Value {
	return store.Value{ObjectID: obj, Branch: branch, AttributeID: attr, Language: lang, Variant: variant, SortReverse: sort, JSON: []byte(j)}
}

// key renders a value without ModifiedTx for comparisons.
func key(v store.Value) string {
	unit := "-"
	if v.UnitRef != nil {
		unit = fmt.Sprint(*v.UnitRef)
	}
	return fmt.Sprintf("o%d/b%d/a%d/v%d/l%d/s%d/u%s=%s", v.ObjectID, v.Branch, v.AttributeID, v.Variant, v.Language, v.SortReverse, unit, v.JSON)
}

func eqValues(t *testing.T, what string, got []store.Value, want ...store.Value) {
	t.Helper()
	g := make([]string, len(got))
	for i, v := range got {
		g[i] = key(v)
	}
	w := make([]string, len(want))
	for i, v := range want {
		w[i] = key(v)
	}
	if fmt.Sprint(g) != fmt.Sprint(w) {
		t.Fatalf("%s:\n got %v\nwant %v", what, g, w)
	}
}

func testValuesRoundTrip(t *testing.T, s store.Store) {
	ctx := ctxT(t)
	en, de := int64(201), int64(202)
	in := []store.Value{
		val(2, 0, 5002, 0, 0, 1, `3000021`),
		val(1, 0, 1000, de, 0, 0, `"Beispiel"`),
		val(1, 0, 1000, en, 0, 0, `"Example"`),
		val(1, 0, 1000, en, 7, 0, `"Example (print)"`),
		val(2, 0, 5002, 0, 0, 0, `3000020`),
		val(1, 0, 1001, 0, 0, 0, `42.5`),
		val(1, 0, 1002, 0, 0, 0, `true`),
		val(1, 0, 1003, 0, 0, 0, `"ünïcödé \"quoted\" \u2603"`),
		val(1, 3, 1000, en, 0, 0, `"Branch 3 text"`),
	}
	tx1 := write(t, s, func(tx store.Tx) {
		must(t, tx.PutValues(ctx, in...))
		must(t, tx.PutValues(ctx, store.Value{ObjectID: 3, AttributeID: 1, JSON: nil}))
	})
	got, err := s.ListValues(ctx, 0, []int64{2, 1, 3}, store.ValueFilter{})
	must(t, err)
	// Ordered by object, attribute, variant, language, sort key.
	eqValues(t, "ListValues", got,
		in[2], in[1], in[3], in[5], in[6], in[7], in[4], in[0],
		val(3, 0, 1, 0, 0, 0, `null`))
	for _, v := range got {
		if v.ModifiedTx != tx1 {
			t.Fatalf("ModifiedTx = %d, want %d", v.ModifiedTx, tx1)
		}
	}
	got, err = s.ListValues(ctx, 3, []int64{1, 2}, store.ValueFilter{})
	must(t, err)
	eqValues(t, "ListValues on branch 3", got, in[8])

	// Filters combine with AND; each list with OR.
	got, err = s.ListValues(ctx, 0, []int64{1, 2}, store.ValueFilter{AttributeIDs: []int64{1000, 5002}, Languages: []int64{en, 0}})
	must(t, err)
	eqValues(t, "filtered by attribute and language", got, in[2], in[3], in[4], in[0])
	got, err = s.ListValues(ctx, 0, []int64{1}, store.ValueFilter{Variants: []int64{7}})
	must(t, err)
	eqValues(t, "filtered by variant", got, in[3])

	// Put replaces by key.
	tx2 := write(t, s, func(tx store.Tx) {
		must(t, tx.PutValues(ctx, val(1, 0, 1000, en, 0, 0, `"Changed"`)))
	})
	got, err = s.ListValues(ctx, 0, []int64{1}, store.ValueFilter{AttributeIDs: []int64{1000}, Languages: []int64{en}, Variants: []int64{0}})
	must(t, err)
	eqValues(t, "after replace", got, val(1, 0, 1000, en, 0, 0, `"Changed"`))
	if got[0].ModifiedTx != tx2 {
		t.Fatalf("replaced value ModifiedTx = %d, want %d", got[0].ModifiedTx, tx2)
	}

	// Invalid JSON is refused.
	tx, err := s.Begin(ctx, store.TxMeta{})
	must(t, err)
	defer func() { _ = tx.Rollback() }()
	mustBe(t, tx.PutValues(ctx, val(1, 0, 1, 0, 0, 0, `{"unterminated`)), store.ErrInvalidArgument, "invalid JSON")
}

func testDeleteValues(t *testing.T, s store.Store) {
	ctx := ctxT(t)
	write(t, s, func(tx store.Tx) {
		must(t, tx.PutValues(ctx,
			val(1, 0, 5002, 0, 0, 0, `10`), val(1, 0, 5002, 0, 0, 1, `11`), val(1, 0, 5002, 0, 0, 2, `12`),
			val(1, 0, 1000, 201, 0, 0, `"a"`), val(1, 0, 1000, 202, 0, 0, `"b"`),
			val(2, 0, 5002, 0, 0, 0, `20`), val(1, 4, 5002, 0, 0, 0, `99`)))
	})
	// Replace a multi-valued attribute: delete all its rows, put the new list.
	write(t, s, func(tx store.Tx) {
		n, err := tx.DeleteValues(ctx, 0, []int64{1}, store.ValueFilter{AttributeIDs: []int64{5002}})
		must(t, err)
		if n != 3 {
			t.Fatalf("DeleteValues removed %d rows, want 3", n)
		}
		must(t, tx.PutValues(ctx, val(1, 0, 5002, 0, 0, 0, `13`)))
		n, err = tx.DeleteValues(ctx, 0, []int64{1}, store.ValueFilter{Languages: []int64{202}})
		must(t, err)
		if n != 1 {
			t.Fatalf("DeleteValues by language removed %d rows, want 1", n)
		}
	})
	got, err := s.ListValues(ctx, 0, []int64{1, 2}, store.ValueFilter{})
	must(t, err)
	eqValues(t, "after deletes", got, val(1, 0, 1000, 201, 0, 0, `"a"`), val(1, 0, 5002, 0, 0, 0, `13`), val(2, 0, 5002, 0, 0, 0, `20`))
	got, err = s.ListValues(ctx, 4, []int64{1}, store.ValueFilter{})
	must(t, err)
	eqValues(t, "other branch untouched", got, val(1, 4, 5002, 0, 0, 0, `99`))
	write(t, s, func(tx store.Tx) {
		n, err := tx.DeleteValues(ctx, 0, []int64{1, 2}, store.ValueFilter{})
		must(t, err)
		if n != 3 {
			t.Fatalf("DeleteValues(all) removed %d rows, want 3", n)
		}
	})
	got, err = s.ListValues(ctx, 0, []int64{1, 2}, store.ValueFilter{})
	must(t, err)
	eqValues(t, "after delete all", got)
}

func testSoftDelete(t *testing.T, s store.Store) {
	ctx := ctxT(t)
	created := write(t, s, func(tx store.Tx) {
		must(t, tx.PutObjects(ctx, obj(1, 0, 1, "g1", "one"), obj(2, 0, 1, "g2", "")))
		must(t, tx.PutValues(ctx, val(1, 0, 1000, 0, 0, 0, `"kept"`)))
	})
	deleted := write(t, s, func(tx store.Tx) {
		n, err := tx.DeleteObjects(ctx, 0, []int64{1, 2, 999})
		must(t, err)
		if n != 2 {
			t.Fatalf("DeleteObjects = %d, want 2", n)
		}
		n, err = tx.DeleteObjects(ctx, 0, []int64{1})
		must(t, err)
		if n != 0 {
			t.Fatalf("deleting a tombstone again = %d, want 0", n)
		}
	})
	o, err := s.GetObject(ctx, 0, 1)
	must(t, err)
	if !o.Deleted || o.ModifiedTx != deleted || o.CreatedTx != created || o.APIIdentifier != "one" {
		t.Fatalf("tombstone = %+v (created %d, deleted %d)", o, created, deleted)
	}
	vals, err := s.ListValues(ctx, 0, []int64{1}, store.ValueFilter{})
	must(t, err)
	eqValues(t, "values of a tombstone", vals, val(1, 0, 1000, 0, 0, 0, `"kept"`))
	// A tombstone still holds its GUID and API identifier.
	tx, err := s.Begin(ctx, store.TxMeta{})
	must(t, err)
	mustBe(t, tx.PutObjects(ctx, obj(3, 0, 1, "g1", "")), store.ErrConflict, "GUID of a tombstone")
	must(t, tx.Rollback())
	// Restore.
	restored := write(t, s, func(tx store.Tx) {
		o.Deleted = false
		must(t, tx.PutObjects(ctx, o))
	})
	o, err = s.GetObject(ctx, 0, 1)
	must(t, err)
	if o.Deleted || o.ModifiedTx != restored || o.CreatedTx != created {
		t.Fatalf("restored = %+v", o)
	}
}
