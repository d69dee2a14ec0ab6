package storetest

import (
	"testing"

	"github.com/cmsplatform/cms/pkg/store"
)

func withUnit(v store.Value, unit int64) store.Value {
	v.UnitRef = &unit
	return v
}

// testValueUnits: UnitRef round-trips through PutValues, ListValues and
// ListValuesIn; nil stays nil (not 0); replacing a value replaces its unit,
// including clearing it.
func testValueUnits(t *testing.T, s store.Store) {
	ctx := ctxT(t)
	metre, kilo := int64(3100), int64(0)
	in := []store.Value{
		withUnit(val(1, 0, 7000, 0, 0, 0, `12.5`), metre),
		val(1, 0, 7001, 0, 0, 0, `3`),
		withUnit(val(1, 5, 7000, 0, 0, 0, `99`), kilo), // unit id 0 is kept, not confused with none
	}
	write(t, s, func(tx store.Tx) {
		must(t, tx.PutValues(ctx, in...))
		// Inside the transaction the unit is visible already.
		got, err := tx.ListValues(ctx, 0, []int64{1}, store.ValueFilter{})
		must(t, err)
		eqValues(t, "ListValues in tx", got, in[0], in[1])
	})
	got, err := s.ListValues(ctx, 0, []int64{1}, store.ValueFilter{})
	must(t, err)
	eqValues(t, "ListValues", got, in[0], in[1])
	if got[1].UnitRef != nil {
		t.Fatalf("value without unit read back with UnitRef %d", *got[1].UnitRef)
	}
	got, err = s.ListValuesIn(ctx, []int64{0, 5}, []int64{1}, store.ValueFilter{AttributeIDs: []int64{7000}})
	must(t, err)
	eqValues(t, "ListValuesIn", got, in[0], in[2])

	// Replacing changes and clears the unit.
	write(t, s, func(tx store.Tx) {
		must(t, tx.PutValues(ctx, withUnit(val(1, 0, 7001, 0, 0, 0, `4`), metre+1), val(1, 0, 7000, 0, 0, 0, `13`)))
	})
	got, err = s.ListValues(ctx, 0, []int64{1}, store.ValueFilter{})
	must(t, err)
	eqValues(t, "after replace", got, val(1, 0, 7000, 0, 0, 0, `13`), withUnit(val(1, 0, 7001, 0, 0, 0, `4`), metre+1))
}
