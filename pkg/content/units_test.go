package content

import (
	"strings"
	"testing"

	"github.com/cmsplatform/cms/pkg/store"
)

func TestValueUnits(t *testing.T) {
	backends(t, func(t *testing.T, s *Service, _ store.Store) {
		sc := newSchema(t, s)
		// Two unit groups: length (mm, m) and mass (kg); an attribute
		// "length" naming mm as its unit, and the unit-free "rank".
		_, groups := must2(t)(s.CreateObjects(ctxBG, "4", editor, []ObjectInput{{TypeID: TypeUnitGroup}, {TypeID: TypeUnitGroup}}))
		unit := func(group int64) ValueInput { return vin(AttrUnitParentGroup, 0, group) }
		_, units := must2(t)(s.CreateObjects(ctxBG, "4", editor, []ObjectInput{
			{TypeID: TypeUnit, Values: []ValueInput{unit(groups[0])}},
			{TypeID: TypeUnit, Values: []ValueInput{unit(groups[0])}},
			{TypeID: TypeUnit, Values: []ValueInput{unit(groups[1])}},
		}))
		mm, m, kg := units[0], units[1], units[2]
		_, attrs := must2(t)(s.CreateObjects(ctxBG, "4", editor, []ObjectInput{{TypeID: TypeAttribute, Values: []ValueInput{
			vin(AttrDataType, 0, "Decimal"), vin(AttrUnit, 0, mm)}}}))
		length := attrs[0]

		_, ids := must2(t)(s.CreateObjects(ctxBG, "4", editor, []ObjectInput{{TypeID: sc.article, Values: []ValueInput{
			{Attribute: length, JSON: js(1.5), UnitRef: ptr(m)},
			{Attribute: sc.rank, JSON: js(3), UnitRef: ptr(kg)}, // no AttrUnit: any unit
		}}}))
		obj := id(ids[0])
		got := chk(s.GetObject(ctxBG, "4", obj, ReadOptions{}))(t)
		units2 := map[int64]int64{}
		for _, v := range got.Values {
			if v.UnitRef != nil {
				units2[v.Attribute] = *v.UnitRef
			}
		}
		if units2[length] != m || units2[sc.rank] != kg || len(units2) != 2 {
			t.Fatalf("units read back %v, want %d→%d %d→%d", units2, length, m, sc.rank, kg)
		}

		// A unit of another group is refused; the attribute's own unit is fine.
		_, err := s.UpdateObjects(ctxBG, "4", editor, []ObjectInput{{ID: ids[0], Values: []ValueInput{
			{Attribute: length, JSON: js(2), UnitRef: ptr(kg)}}}})
		wantErr(t, err, ErrInvalid, "unit of another group")
		if !strings.Contains(err.Error(), "unit group") {
			t.Fatalf("error %q does not name the unit group", err)
		}
		// Rewriting without unitRef clears the unit.
		if _, err := s.UpdateObjects(ctxBG, "4", editor, []ObjectInput{{ID: ids[0], Values: []ValueInput{
			{Attribute: length, JSON: js(2), UnitRef: ptr(mm)}, vin(sc.rank, 0, 4)}}}); err != nil {
			t.Fatal(err)
		}
		got = chk(s.GetObject(ctxBG, "4", obj, ReadOptions{}))(t)
		for _, v := range got.Values {
			switch {
			case v.Attribute == length && (v.UnitRef == nil || *v.UnitRef != mm):
				t.Fatalf("length unit = %v, want %d", v.UnitRef, mm)
			case v.Attribute == sc.rank && v.UnitRef != nil:
				t.Fatalf("rank kept unit %d after a write without unitRef", *v.UnitRef)
			}
		}
		// A deleted unit is no unit any more.
		if _, _, err := s.DeleteObjects(ctxBG, "4", editor, []string{id(kg)}); err != nil {
			t.Fatal(err)
		}
		_, err = s.UpdateObjects(ctxBG, "4", editor, []ObjectInput{{ID: ids[0], Values: []ValueInput{
			{Attribute: sc.rank, JSON: js(5), UnitRef: ptr(kg)}}}})
		wantErr(t, err, ErrInvalid, "deleted unit")
	})
}
