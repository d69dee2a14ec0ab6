package content

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"

	"github.com/cmsplatform/cms/pkg/store"
)

// Rules on the values of attribute definitions (objects of type 10) beyond
// their data types (docs/api-reference.md §9.3): the data type (1001) is a
// data type name and the target types (1015) are types, both checked by
// their own definitions; what those cannot say is checked here.
//
//   - 1014, the maximum number of values, is 0 (unlimited) or more;
//   - 1004 and 1014 agree once the write is applied: a maximum above 1
//     needs 1004 true (a single-valued attribute stores one value), and a
//     maximum of 1 is a single value, so it contradicts 1004 true;
//   - a String.InheritanceBehavior value (1013) is None, Inheriting or
//     InheritingAll.

// AttrMaxValues is the maximum number of values of an attribute (Integer;
// 0 or none = unlimited, 1 = a single value).
const AttrMaxValues int64 = 1014

// inheritanceBehaviors are the values of the data type
// String.InheritanceBehavior (attribute 1013).
var inheritanceBehaviors = []string{"None", "Inheriting", "InheritingAll"}

// checkDefinitionValue checks j, a value of d that checkScalar accepted
// (nil = removed), against the rules of its attribute or data type.
func checkDefinitionValue(d attrDef, j []byte) error {
	if j == nil {
		return nil
	}
	switch {
	case d.id == AttrMaxValues:
		if n, err := strconv.ParseInt(string(j), 10, 64); err != nil || n < 0 {
			return invalidf("attribute %d (maximum number of values): %s is not 0 (unlimited) or more", d.id, shorten(j))
		}
	case d.dataType == "String.InheritanceBehavior":
		var s string
		if err := json.Unmarshal(j, &s); err != nil || !slices.Contains(inheritanceBehaviors, s) {
			return invalidf("attribute %d (%s): value %s is not one of %v", d.id, d.dataType, shorten(j), inheritanceBehaviors)
		}
	}
	return nil
}

// checkMultiplicities checks, for every object of type TypeAttribute whose
// write c sends 1004 or 1014, that the two agree once the write is
// applied to the object's stored values on v (none for a new object).
func (v view) checkMultiplicities(ctx context.Context, ids, types []int64, checked []validated, created bool) error {
	var touched []int64
	for i, c := range checked {
		gm, multi := c.groups[groupKey{attr: AttrAllowMultiple}]
		gx, most := c.groups[groupKey{attr: AttrMaxValues}]
		// A group sent with inherit goes back to the parent branch's value,
		// which the rows read here do not tell: such a write is not checked
		// (the parent's values passed this check when they were written).
		if types[i] == TypeAttribute && (multi || most) && !inherits(gm) && !inherits(gx) {
			touched = append(touched, ids[i])
		}
	}
	if len(touched) == 0 {
		return nil
	}
	stored := valueSet{effective: map[int64][]store.Value{}}
	if !created {
		var err error
		if stored, err = v.values(ctx, touched); err != nil {
			return err
		}
	}
	for i, c := range checked {
		if !slices.Contains(touched, ids[i]) {
			continue
		}
		var multi bool
		var most int64
		for _, r := range stored.effective[ids[i]] {
			switch {
			case r.AttributeID == AttrAllowMultiple && r.Language == 0 && r.Variant == 0:
				_ = json.Unmarshal(r.JSON, &multi)
			case r.AttributeID == AttrMaxValues && r.Language == 0 && r.Variant == 0:
				_ = json.Unmarshal(r.JSON, &most)
			}
		}
		if g, ok := c.groups[groupKey{attr: AttrAllowMultiple}]; ok {
			multi = false
			if len(g) > 0 && g[0].json != nil {
				_ = json.Unmarshal(g[0].json, &multi)
			}
		}
		if g, ok := c.groups[groupKey{attr: AttrMaxValues}]; ok {
			most = 0
			if len(g) > 0 && g[0].json != nil {
				_ = json.Unmarshal(g[0].json, &most)
			}
		}
		switch {
		case most > 1 && !multi:
			return invalidf("attribute %d: object %d allows a single value (attribute %d is not true): a maximum of %d values needs %d true",
				AttrMaxValues, ids[i], AttrAllowMultiple, most, AttrAllowMultiple)
		case most == 1 && multi:
			return invalidf("attribute %d: object %d allows multiple values (attribute %d): a maximum of 1 is a single value (0 = unlimited)",
				AttrMaxValues, ids[i], AttrAllowMultiple)
		}
	}
	return nil
}
