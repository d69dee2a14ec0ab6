package content

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cmsplatform/cms/pkg/store"
)

// valueKind is what a data type accepts on the wire.
type valueKind int

const (
	kindAny valueKind = iota // unknown data type: any scalar
	kindString
	kindDataType // a data type name (attribute 1001)
	kindInteger
	kindNumber
	kindBool
	kindDateTime
	kindDate
	kindRef
	kindXHTML
)

// attrDef is an attribute definition (an object of type 10).
type attrDef struct {
	id          int64
	dataType    string
	kind        valueKind
	multi       bool
	langDep     bool
	variantAxis bool
	refTypes    []int64
	unit        int64 // AttrUnit: the attribute's unit, 0 = any unit
}

// attrDefs loads the definitions of ids on v (two queries). An id that is
// not a live attribute is ErrInvalid naming it.
func (v view) attrDefs(ctx context.Context, ids []int64) (map[int64]attrDef, error) {
	objs, err := v.objects(ctx, ids)
	if err != nil {
		return nil, err
	}
	vs, err := v.values(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]attrDef, len(ids))
	for _, id := range ids {
		o, ok := objs[id]
		if !ok || o.Deleted || o.TypeID != TypeAttribute {
			return nil, invalidf("attribute %d does not exist", id)
		}
		d := attrDef{id: id}
		for _, val := range vs.effective[id] {
			switch val.AttributeID {
			case AttrDataType:
				_ = json.Unmarshal(val.JSON, &d.dataType)
			case AttrAllowMultiple:
				_ = json.Unmarshal(val.JSON, &d.multi)
			case AttrLanguageDependent:
				_ = json.Unmarshal(val.JSON, &d.langDep)
			case AttrVariantAxis:
				d.variantAxis = true
			case AttrUnit:
				_ = json.Unmarshal(val.JSON, &d.unit)
			case AttrReferencedTypes:
				if t, err := strconv.ParseInt(string(val.JSON), 10, 64); err == nil {
					d.refTypes = append(d.refTypes, t)
				}
			}
		}
		d.kind = dataTypes[d.dataType]
		out[id] = d
	}
	return out, nil
}

// row is where a value is: its language, variant and position among the
// rows of its group (the sortReverse it was sent with, else its place).
type row struct{ lang, variant, sort int64 }

// at wraps err as the ValueError of attribute attr at r; a nil r (a check
// of the attribute as a whole) names only the attribute.
func (r *row) at(err error, attr int64) error {
	if r == nil {
		return atValue(err, attr, nil, nil)
	}
	return atRow(atValue(err, attr, &r.lang, &r.variant), r.sort)
}

// groupKey identifies a value group: (attribute, language, variant).
type groupKey struct{ attr, lang, variant int64 }

// checkedValue is a validated value ready to store; JSON nil = remove;
// inherit = remove the branch's own rows without hiding the inherited ones.
type checkedValue struct {
	key     groupKey
	sort    int64
	json    []byte
	unit    *int64
	inherit bool
}

// validated holds the values of one object, grouped, in input order.
type validated struct {
	groups map[groupKey][]checkedValue
	order  []groupKey
	defs   map[int64]attrDef
}

// validateValues checks the values of every input object against the
// attribute definitions, languages and reference targets on v, in a fixed
// number of queries. The result has one entry per input object.
//
// ch decides whether security attributes may be written; passwords are
// hashed here (security.go).
func (v view) validateValues(ctx context.Context, ch Change, inputs [][]ValueInput) ([]validated, error) {
	var attrIDs []int64
	for _, vals := range inputs {
		for _, val := range vals {
			if !slices.Contains(attrIDs, val.Attribute) {
				attrIDs = append(attrIDs, val.Attribute)
			}
		}
	}
	defs := map[int64]attrDef{}
	if len(attrIDs) > 0 {
		var err error
		if defs, err = v.attrDefs(ctx, attrIDs); err != nil {
			return nil, err
		}
	}
	type refCheck struct {
		attr, target int64
		allowed      []int64
		unit         bool // a unitRef rather than a value
		row          *row // the value's row (a reference value), for the error
	}
	var refs []refCheck
	var units []unitCheck
	out := make([]validated, len(inputs))
	// check validates one value of input object i and adds it to out[i].
	check := func(i int, val ValueInput, at row) error {
		d := defs[val.Attribute]
		if val.Attribute == AttrApiIdentifier {
			return invalidf("attribute %d: set meta.apiIdentifier instead", val.Attribute)
		}
		if d.langDep && val.Language == 0 {
			return invalidf("attribute %d is language dependent: language 0 given", val.Attribute)
		}
		if !d.langDep && val.Language != 0 {
			return invalidf("attribute %d is language independent: language %d given", val.Attribute, val.Language)
		}
		if val.Language != 0 {
			refs = append(refs, refCheck{attr: val.Attribute, target: val.Language, allowed: []int64{TypeLanguage}})
		}
		if val.Variant != 0 && !d.variantAxis {
			return invalidf("attribute %d has no variants: variant %d given", val.Attribute, val.Variant)
		}
		if val.Variant < 0 || val.Language < 0 {
			return invalidf("attribute %d: negative language or variant", val.Attribute)
		}
		if val.Inherit && !isNull(val.JSON) {
			return invalidf("attribute %d: inherit removes this branch's value: send value null with it (language %d, variant %d)",
				val.Attribute, val.Language, val.Variant)
		}
		j, handled, err := checkSecurityValue(ch, val.Attribute, val.JSON)
		if err != nil {
			return err
		}
		target := int64(-1)
		if !handled {
			if j, target, err = checkScalar(d, val.JSON); err != nil {
				return err
			}
			if err := checkDefinitionValue(d, j); err != nil {
				return err
			}
		}
		if target >= 0 {
			refs = append(refs, refCheck{attr: val.Attribute, target: target, allowed: d.refTypes, row: &at})
		}
		var unit *int64
		if val.UnitRef != nil && j != nil {
			if *val.UnitRef <= 0 {
				return invalidf("attribute %d: unitRef %d is not an object id", val.Attribute, *val.UnitRef)
			}
			u := *val.UnitRef
			unit = &u
			refs = append(refs, refCheck{attr: val.Attribute, target: u, allowed: []int64{TypeUnit}, unit: true})
			units = append(units, unitCheck{attr: val.Attribute, unit: u, want: d.unit})
		}
		k := groupKey{val.Attribute, val.Language, val.Variant}
		g := out[i].groups[k]
		if g == nil {
			out[i].order = append(out[i].order, k)
		}
		sort := int64(len(g))
		if val.SortReverse != nil {
			sort = *val.SortReverse
		}
		if sort < 0 {
			return invalidf("attribute %d: negative sortReverse", val.Attribute)
		}
		for _, prev := range g {
			if prev.inherit != val.Inherit {
				return invalidf("attribute %d: inherit cannot be combined with values of the same language %d and variant %d",
					val.Attribute, val.Language, val.Variant)
			}
			if prev.sort == sort {
				return invalidf("attribute %d: two values with sortReverse %d", val.Attribute, sort)
			}
		}
		if !d.multi && (sort != 0 || len(g) > 0) {
			return invalidf("attribute %d allows a single value (language %d, variant %d)", val.Attribute, val.Language, val.Variant)
		}
		out[i].groups[k] = append(g, checkedValue{key: k, sort: sort, json: j, unit: unit, inherit: val.Inherit})
		return nil
	}
	for i, vals := range inputs {
		out[i] = validated{groups: map[groupKey][]checkedValue{}, defs: defs}
		for _, val := range vals {
			at := row{val.Language, val.Variant, int64(len(out[i].groups[groupKey{val.Attribute, val.Language, val.Variant}]))}
			if val.SortReverse != nil {
				at.sort = *val.SortReverse
			}
			if err := check(i, val, at); err != nil {
				return nil, atRow(atValue(err, val.Attribute, &val.Language, &val.Variant), at.sort)
			}
		}
	}
	if len(refs) == 0 {
		return out, nil
	}
	targets := make([]int64, 0, len(refs))
	for _, r := range refs {
		targets = append(targets, r.target)
	}
	objs, err := v.objects(ctx, targets)
	if err != nil {
		return nil, err
	}
	for _, r := range refs {
		o, ok := objs[r.target]
		if r.unit && (!ok || o.Deleted || o.TypeID != TypeUnit) {
			return nil, atValue(invalidf("attribute %d: unitRef %d is not a unit (an object of type %d) on branch %d", r.attr, r.target, TypeUnit, v.branch), r.attr, nil, nil)
		}
		if !ok || o.Deleted {
			return nil, r.row.at(invalidf("attribute %d: referenced object %d does not exist on branch %d", r.attr, r.target, v.branch), r.attr)
		}
		if len(r.allowed) > 0 && !slices.Contains(r.allowed, o.TypeID) {
			return nil, r.row.at(invalidf("attribute %d: object %d has type %d, allowed are %v", r.attr, r.target, o.TypeID, r.allowed), r.attr)
		}
	}
	if err := v.checkUnits(ctx, units); err != nil {
		return nil, err
	}
	return out, nil
}

// checkScalar validates one JSON value against d. It returns the JSON to
// store (nil for null = remove) and, for references, the target id (else
// -1).
func checkScalar(d attrDef, raw json.RawMessage) ([]byte, int64, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, -1, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		return nil, -1, invalidf("attribute %d: value is not JSON", d.id)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, -1, invalidf("attribute %d: trailing data after the value", d.id)
	}
	bad := func(want string) error {
		return invalidf("attribute %d (%s): value %s is not %s", d.id, d.dataType, shorten(raw), want)
	}
	switch x.(type) {
	case []any, map[string]any:
		return nil, -1, invalidf("attribute %d: value %s must be a scalar (one row per value with sortReverse)", d.id, shorten(raw))
	}
	str, isStr := x.(string)
	num, isNum := x.(json.Number)
	_, isBool := x.(bool)
	switch d.kind {
	case kindString:
		if !isStr {
			return nil, -1, bad("a string")
		}
	case kindDataType:
		if _, ok := dataTypes[str]; !isStr || !ok {
			return nil, -1, bad("a data type name")
		}
	case kindInteger:
		n, err := strconv.ParseInt(string(num), 10, 64)
		if !isNum || err != nil {
			return nil, -1, bad("an integer")
		}
		if n > MaxExactInteger || n < -MaxExactInteger {
			return nil, -1, invalidf("attribute %d (%s): the value must lie within -%d..%d (2^53-1), the integers a JSON number carries exactly",
				d.id, d.dataType, MaxExactInteger, MaxExactInteger)
		}
	case kindNumber:
		if f, err := num.Float64(); !isNum || err != nil || math.IsInf(f, 0) {
			return nil, -1, bad("a number")
		}
	case kindBool:
		if !isBool {
			return nil, -1, bad("a boolean")
		}
	case kindDateTime:
		if _, err := time.Parse(time.RFC3339Nano, str); !isStr || err != nil {
			return nil, -1, bad("a date-time (RFC 3339)")
		}
	case kindDate:
		if _, err := time.Parse(time.DateOnly, str); !isStr || err != nil {
			return nil, -1, bad("a date (yyyy-mm-dd)")
		}
	case kindRef:
		id, err := strconv.ParseInt(string(num), 10, 32)
		if !isNum || err != nil || id < 0 {
			return nil, -1, bad("an object id")
		}
		return []byte(strconv.FormatInt(id, 10)), id, nil
	case kindXHTML:
		if !isStr || !divRoot(str) {
			return nil, -1, bad("XHTML with a single <div> root")
		}
	}
	return raw, -1, nil
}

// divRoot reports whether s is well-formed XML with one <div> root element.
func divRoot(s string) bool {
	dec := xml.NewDecoder(strings.NewReader(s))
	depth, roots := 0, 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return roots == 1 && depth == 0
		}
		if err != nil {
			return false
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				roots++
				if t.Name.Local != "div" || roots > 1 {
					return false
				}
			}
			depth++
		case xml.EndElement:
			depth--
		case xml.CharData:
			if depth == 0 && len(bytes.TrimSpace(t)) > 0 {
				return false
			}
		}
	}
}

func shorten(b []byte) string {
	if len(b) > 64 {
		return string(b[:61]) + "..."
	}
	return string(b)
}

// storeRows turns a validated group into rows on branch for obj.
// isNull reports whether raw is absent or the JSON null.
func isNull(raw json.RawMessage) bool {
	t := strings.TrimSpace(string(raw))
	return t == "" || t == "null"
}

// inherits reports whether group g asks to go back to the inherited value.
func inherits(g []checkedValue) bool {
	return len(g) > 0 && g[0].inherit
}

func storeRows(obj, branch int64, g []checkedValue) []store.Value {
	out := make([]store.Value, 0, len(g))
	for _, c := range g {
		if c.json != nil {
			out = append(out, store.Value{ObjectID: obj, Branch: branch, AttributeID: c.key.attr,
				Language: c.key.lang, Variant: c.key.variant, SortReverse: c.sort, JSON: c.json, UnitRef: c.unit})
		}
	}
	return out
}
