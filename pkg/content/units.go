package content

import (
	"context"
	"encoding/json"
	"slices"
)

// # Units
//
// A value may carry a unit (NovaDB CmsValue.unitRef): the id of an object
// of type TypeUnit (30). Units belong to a unit group (type 31) through
// attribute 3002 unitParentGroup; attribute 1003 (AttrUnit) of an attribute
// definition names the attribute's unit. The rules (inferred: NovaDB
// documents the attributes, not the checks):
//
//   - unitRef must name a live unit visible on the branch written, else
//     ErrInvalid (400);
//   - when the attribute names a unit, unitRef must be that unit or a unit
//     of the same unit group (a length in mm or m, not in kg); an attribute
//     without 1003 takes any unit;
//   - the unit is stored with the value and returned as given; a null
//     value (removal) ignores its unitRef; rewriting a value without
//     unitRef clears the unit.

// unitCheck is one unitRef to check against its attribute's unit.
type unitCheck struct {
	attr, unit int64
	want       int64 // the attribute's AttrUnit, 0 = any unit
}

// checkUnits enforces the unit-group rule for checks whose attribute names
// a unit (one query for all of them). Existence and type of each unit are
// checked by the caller with the other references.
func (v view) checkUnits(ctx context.Context, checks []unitCheck) error {
	var ids []int64
	for _, c := range checks {
		if c.want != 0 && c.want != c.unit {
			ids = append(ids, c.unit, c.want)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	vs, err := v.values(ctx, ids)
	if err != nil {
		return err
	}
	group := func(unit int64) int64 {
		for _, val := range vs.effective[unit] {
			if val.AttributeID == AttrUnitParentGroup {
				var g int64
				if json.Unmarshal(val.JSON, &g) == nil {
					return g
				}
			}
		}
		return 0
	}
	for _, c := range checks {
		if c.want == 0 || c.want == c.unit {
			continue
		}
		if g := group(c.want); g == 0 || g != group(c.unit) {
			return invalidf("attribute %d: unit %d is not unit %d nor of its unit group", c.attr, c.unit, c.want)
		}
	}
	return nil
}
