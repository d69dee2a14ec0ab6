package delivery

import (
	"encoding/json"
	"time"

	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/model"
)

// Object is one object in Delivery shape. Props values are JSON-ready:
// string, int64, float64, bool, []any of those, or map[string]any
// ({"XML": …}).
type Object struct {
	DisplayName string
	DisplayIcon *int64
	Meta        Meta
	Props       map[string]any
	// Reverse holds, when resolveReverse asked for it, attribute
	// ApiIdentifier -> ids of the objects referring to this one through
	// that attribute; nil = omitted.
	Reverse map[string][]int64
}

// Meta is an object's "meta" record.
type Meta struct {
	ID              int64
	GUID            string
	APIIdentifier   string // "" = omitted
	TypeRef         int64
	Type            string // the type's ApiIdentifier
	LastTransaction int64
	LastModified    time.Time // zero = unknown
	Deleted         bool
	// ETag is 22 base64url characters (16 bytes) over everything else of
	// the rendered object: it changes when any returned field does.
	ETag string
}

// Props modes.
const (
	PropsType = 0 // the type's API attributes (its forms' content), else all
	PropsAll  = 1 // every attribute with an ApiIdentifier
	PropsNone = 2
)

// view is how objects are rendered for one request.
type view struct {
	m        *branchModel
	langs    []int64
	variants []int64
	props    int32
	// units renders values that carry a unit as {"value", "unitRef"}
	// (resolveUnits; see units.go).
	units bool
	// rendered keeps what render renders under key (viewKey); nil: none.
	rendered *objectCache
	key      string
}

// selected returns the values of attr chosen for the view: the first
// (variant, language) pair of the chains that has values, in sortReverse
// order.
func (v view) selected(values []indexdoc.SourceValue, attr int64) []indexdoc.SourceValue {
	var out []indexdoc.SourceValue
	model.Fallback(v.variants, v.langs, func(va, l int64) bool {
		out = matching(values, attr, l, va)
		return len(out) > 0
	})
	return out
}

// matching returns the values of (attr, lang, variant) in their order.
// Sources keep one key's values together, so this is usually a capacity-
// capped sub-slice of values (read-only, no allocation); otherwise a copy.
func matching(values []indexdoc.SourceValue, attr, lang, variant int64) []indexdoc.SourceValue {
	is := func(x *indexdoc.SourceValue) bool { return x.Attr == attr && x.Lang == lang && x.Variant == variant }
	i := 0
	for i < len(values) && !is(&values[i]) {
		i++
	}
	j := i
	for j < len(values) && is(&values[j]) {
		j++
	}
	n := j - i
	for k := j; k < len(values); k++ {
		if is(&values[k]) {
			n++
		}
	}
	if n == j-i {
		return values[i:j:j]
	}
	out := make([]indexdoc.SourceValue, 0, n)
	for k := i; k < len(values); k++ {
		if is(&values[k]) {
			out = append(out, values[k])
		}
	}
	return out
}

// render renders src, or returns what it rendered of it before
// (objectCache).
func (v view) render(src indexdoc.Source) Object {
	k, cached := v.rendered.key(&v, &src)
	if cached {
		if o, ok := v.rendered.get(k, &src); ok {
			return o
		}
	}
	o := v.renderWith(src, nil)
	if cached {
		v.rendered.put(k, &src, o)
	}
	return o
}

// renderWith renders src with its reverse relations (nil = none asked).
func (v view) renderWith(src indexdoc.Source, reverse map[string][]int64) Object {
	o := Object{Reverse: reverse, Meta: Meta{ID: src.ID, GUID: src.GUID, APIIdentifier: src.APIIdentifier, TypeRef: src.TypeRef,
		LastTransaction: src.LastTransaction, LastModified: src.Modified, Deleted: src.Deleted}, Props: map[string]any{}}
	t := v.m.types[src.TypeRef]
	if t != nil {
		o.Meta.Type = t.api
	} else if src.TypeRef == typeRoot {
		o.Meta.Type = "root"
	}
	var nameAttr int64
	if t != nil {
		nameAttr = t.nameAttr
	}
	o.DisplayName, _ = model.DisplayName(nameAttr, func(attr int64) (string, bool) {
		if vals := v.selected(src.Values, attr); len(vals) > 0 {
			return model.DisplayString(vals[0].Value), true
		}
		return "", false
	})
	if t != nil && t.iconAttr != 0 {
		if vals := v.selected(src.Values, t.iconAttr); len(vals) > 0 {
			if id, ok := refOf(vals[0].Value); ok {
				o.DisplayIcon = &id
			}
		}
	}
	if o.DisplayIcon == nil && t != nil && t.icon != nil {
		icon := *t.icon
		o.DisplayIcon = &icon
	}
	if v.props != PropsNone {
		seen := map[int64]bool{}
		for _, x := range src.Values {
			if seen[x.Attr] {
				continue
			}
			seen[x.Attr] = true
			a := v.m.attrs[x.Attr]
			if a == nil || a.api == "" {
				continue
			}
			if v.props == PropsType && t != nil && t.apiAttrs != nil && !t.apiAttrs[a.id] {
				continue
			}
			if val, ok := encodeValues(a, v.selected(src.Values, a.id), v.units); ok {
				o.Props[a.api] = val
			}
		}
	}
	v.addFileProps(&o, src, t)
	o.Meta.ETag = etagOf(o)
	return o
}

// refTargets returns the ids that attrs hold in src, as the view selects
// them.
func (v view) refTargets(src indexdoc.Source, attrs []int64) []int64 {
	var out []int64
	for _, a := range attrs {
		for _, x := range v.selected(src.Values, a) {
			if id, ok := refOf(x.Value); ok {
				out = append(out, id)
			}
		}
		out = append(out, v.derivedRefs(src, a)...)
	}
	return out
}

// encodeValues encodes the selected values of one attribute; with units,
// a value that has a unit becomes {"value": …, "unitRef": …}.
func encodeValues(a *attribute, vals []indexdoc.SourceValue, units bool) (any, bool) {
	if len(vals) == 0 {
		return nil, false
	}
	dt := a.dataType
	if dt == "" {
		dt = vals[0].DataType
	}
	if len(vals) == 1 && !a.multi { // the common case, without a list
		e, ok := encodeValue(dt, vals[0].Value)
		if ok && units && vals[0].Unit != 0 {
			e = withUnit(e, vals[0].Unit)
		}
		return e, ok
	}
	out := make([]any, 0, len(vals))
	for _, x := range vals {
		if e, ok := encodeValue(dt, x.Value); ok {
			if units && x.Unit != 0 {
				e = withUnit(e, x.Unit)
			}
			out = append(out, e)
		}
	}
	switch {
	case len(out) == 0:
		return nil, false
	case a.multi || len(out) > 1:
		return out, true
	}
	return out[0], true
}

func encodeValue(dt string, raw json.RawMessage) (any, bool) {
	if id, ok := plainInt(raw); ok {
		return id, true // as the float64 case below: refOf reads it as an id
	}
	if s, ok := model.PlainString(raw); ok {
		return encodeString(dt, s)
	}
	if isNumber(raw) {
		return numberValue(raw)
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil || v == nil {
		return nil, false
	}
	switch x := v.(type) {
	case string:
		return encodeString(dt, x)
	case float64:
		if id, ok := refOf(raw); ok {
			return id, true
		}
		return v, true
	case bool:
		return v, true
	}
	return nil, false
}

// encodeString encodes a string value: empty is no value, markup is
// {"XML": …}.
func encodeString(dt, s string) (any, bool) {
	if s == "" {
		return nil, false
	}
	if model.IsMarkup(dt) {
		return map[string]any{"XML": s}, true
	}
	return s, true
}
