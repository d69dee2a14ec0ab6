package delivery

import (
	"cmp"
	"strconv"
	"strings"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/delivery/query"
	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/model"
	"github.com/cmsplatform/cms/pkg/search"
)

// MaxSortMatches caps the objects an in-memory sort may order. Attribute
// values live in shared multi-valued keyed fields (see pkg/indexwriter); the
// engine sorts by an attribute's sort-key field (attrSortField) only for
// a request language with indexed name fields and no variants. Other
// attribute sorts fetch every match and order it in memory; beyond the
// cap the request is refused rather than answered with a wrongly ordered
// page.
const MaxSortMatches = search.MaxResultWindow

// sortPlan is the translated sort parameter: one key per sort key, then
// the object id.
type sortPlan struct {
	keys []sortKey
	// inMemory: some key is an attribute, so the matches are sorted here
	// (sortHits) instead of by the engine (engineSort).
	inMemory bool
	// maxMatches caps an in-memory sort (MaxSortMatches).
	maxMatches int
}

// sortKey is one key: an engine field (metadata, display name, score)
// or an attribute whose value the view's chains select.
type sortKey struct {
	field string // engine field; "" for an attribute
	attr  *attribute
	// cands are the value keys of attr in chain order (variants outer,
	// languages inner, as view.selected walks them).
	cands []string
	desc  bool
}

// sortPlan translates the sort parameter. Each key is $score, displayName
// (displayNameKey), meta.<name> (or a bare metadata name no attribute
// has), or an attribute id or ApiIdentifier.
func (sc *scope) sortPlan(param string, indexed map[int64]bool) (sortPlan, error) {
	keys, err := query.ParseSort(param)
	if err != nil {
		return sortPlan{}, invalidf("%v", err)
	}
	p := sortPlan{maxMatches: MaxSortMatches}
	for _, k := range keys {
		sk, err := sc.sortKey(k, indexed)
		if err != nil {
			return sortPlan{}, err
		}
		p.inMemory = p.inMemory || sk.attr != nil
		p.keys = append(p.keys, sk)
	}
	return p, nil
}

func (sc *scope) sortKey(k query.SortKey, indexed map[int64]bool) (sortKey, error) {
	low := strings.ToLower(k.Field)
	sk := sortKey{desc: k.Desc}
	switch {
	case low == query.ScoreKey:
		sk.field = search.ScoreField
		return sk, nil
	case low == "displayname" || low == "attributename" || low == "name" || low == "1000":
		return sc.displayNameKey(sk, low == "displayname", indexed)
	}
	name, isMeta := strings.CutPrefix(low, "meta.")
	if !isMeta {
		if a := sc.m.attribute(k.Field); a != nil {
			if model.IsMarkup(a.dataType) {
				return sk, invalidf("sort: %q is markup (%s) and cannot be sorted", k.Field, a.dataType)
			}
			if f, ok := sc.attrSortField(a, indexed); ok {
				sk.field = f
				return sk, nil
			}
			sk.attr = a
			for _, v := range sc.view.variants {
				for _, l := range sc.view.langs {
					sk.cands = append(sk.cands, indexdoc.Key(a.id, l, v))
				}
			}
			return sk, nil
		}
	}
	if name != "deleted" {
		sk.field = metaFields[name]
	}
	if sk.field == "" {
		return sk, invalidf("sort: unknown sort key %q (want $score, displayName, meta.<field> or an attribute id or ApiIdentifier)", k.Field)
	}
	return sk, nil
}

// displayNameKey orders by the display name rendering shows (render.go)
// when typeAttr, else by attribute 1000: the type's display-name
// attribute (5005) when typeAttr and the list has a type, else attribute
// 1000, each along the variant and language chains. pkg/indexwriter fills
// NameSortField(l) with the variant-0 display name (model.DisplayName)
// and SortKeyField(1000, l) with the attribute-1000 value that l's
// fallback chain selects, so the engine sorts when the request's language
// is indexed and no variant is asked, except for a list of a type naming
// its objects with another string attribute. That one (and a language
// without name fields, or variants) is sorted in memory on the chains'
// values, capped like an attribute sort. A display-name attribute that is
// not a plain string (numbers, markup) is not used for sorting: attribute
// 1000 is.
func (sc *scope) displayNameKey(sk sortKey, typeAttr bool, indexed map[int64]bool) (sortKey, error) {
	var attrs []int64
	typed := typeAttr && sc.typ != nil && sc.typ.nameAttr != 0 && sc.typ.nameAttr != content.AttrName
	if typed {
		if a := sc.m.attrs[sc.typ.nameAttr]; a != nil && sortKind(a.dataType) == sortString && !model.IsMarkup(a.dataType) {
			attrs = append(attrs, a.id)
		}
	}
	first := sc.view.langs[0]
	vs := sc.view.variants
	if len(attrs) == 0 && indexed[first] && (len(vs) == 0 || len(vs) == 1 && vs[0] == 0) {
		sk.field = indexdoc.NameSortField(first)
		if typed || !typeAttr {
			sk.field = indexdoc.SortKeyField(content.AttrName, first)
		}
		return sk, nil
	}
	name := sc.m.attrs[content.AttrName]
	if name == nil {
		return sk, invalidf("sort: display names are not sortable (attribute %d is not indexed)", content.AttrName)
	}
	sk.attr = name
	for _, a := range append(attrs, content.AttrName) {
		for _, v := range vs {
			for _, l := range sc.view.langs {
				sk.cands = append(sk.cands, indexdoc.Key(a, l, v))
			}
		}
	}
	return sk, nil
}

// attrSortField is the engine field that orders by attribute a as
// rendering shows it, if any: pkg/indexwriter fills SortKeyField(a, l) with
// the variant-0 values l's fallback chain selects, encoded to order like
// sortHits (pkg/indexwriter/sortkeys.go). So, as for displayName, the engine
// sorts (no cap, paging by the engine) when the request's language has
// indexed name fields and no variant is asked; otherwise the matches are
// sorted in memory. Indexes built before sort keys existed have another
// mapping and need `cms reindex`.
func (sc *scope) attrSortField(a *attribute, indexed map[int64]bool) (string, bool) {
	vs := sc.view.variants
	if !indexed[sc.view.langs[0]] || len(vs) > 1 || len(vs) == 1 && vs[0] != 0 || !indexdoc.Sortable(a.dataType) {
		return "", false
	}
	return indexdoc.SortKeyField(a.id, sc.view.langs[0]), true
}

// engineSort is the plan as engine sort fields (not in memory), ending in
// the object id.
func (p sortPlan) engineSort() []search.SortField {
	out := make([]search.SortField, 0, len(p.keys)+1)
	for _, k := range p.keys {
		out = append(out, search.SortField{Field: k.field, Desc: k.desc})
	}
	return append(out, search.SortField{Field: indexdoc.FieldID})
}

// sortHits orders hits by the plan in memory, as the engine would for
// its fields: missing values last in both directions, ties by object id.
func (p sortPlan) sortHits(hits []search.Hit) {
	desc := make([]bool, len(p.keys))
	for i, k := range p.keys {
		desc[i] = k.desc
	}
	search.SortByKeys(hits, func(h search.Hit) []any {
		vals := make([]any, len(p.keys))
		for i, k := range p.keys {
			vals[i] = k.value(h)
		}
		return vals
	}, desc, func(a, b search.Hit) int {
		return cmp.Compare(hitID(a), hitID(b))
	})
}

func hitID(h search.Hit) int64 {
	id, _ := h.Fields[indexdoc.FieldID].(int64)
	return id
}

// value is the sort value of k on h (nil = missing).
func (k sortKey) value(h search.Hit) any {
	switch {
	case k.field == search.ScoreField:
		return h.Score
	case k.attr == nil:
		switch v := h.Fields[k.field].(type) {
		case []any: // not expected for the metadata fields; as the engines' min/max
			return search.SortValue(v, k.desc)
		default:
			return v
		}
	}
	key, ok := k.selectedKey(h.Fields[indexdoc.FieldKeys])
	if !ok {
		return nil
	}
	kind := sortKind(k.attr.dataType)
	field := indexdoc.FieldValues
	if kind == sortString {
		field = indexdoc.FieldValuesLower
	}
	raw := search.KeyedValues(h.Fields[field], key+"=")
	vals := make([]any, 0, len(raw))
	for _, r := range raw {
		if v, ok := kind.parse(r); ok {
			vals = append(vals, v)
		}
	}
	return search.SortValue(vals, k.desc)
}

// selectedKey is the first candidate key the document has values for
// (FieldKeys lists the key of every value): the one rendering selects.
func (k sortKey) selectedKey(keys any) (string, bool) {
	have := search.KeyedValues(keys, "")
	for _, c := range k.cands {
		for _, h := range have {
			if h == c {
				return c, true
			}
		}
	}
	return "", false
}

// sortValueKind says how a data type's indexed values compare.
type sortValueKind int

const (
	// The kinds of indexdoc.SortKindOf, which writes the engine's sort
	// keys: both paths must order alike.
	sortString = sortValueKind(indexdoc.SortString) // lower-cased (case-insensitive); "" = no value, as rendering omits it
	sortNumber = sortValueKind(indexdoc.SortNumber) // numerically; references by target id
	sortDate   = sortValueKind(indexdoc.SortDate)   // chronologically
	sortBool   = sortValueKind(indexdoc.SortBool)   // false < true
)

func sortKind(dt string) sortValueKind { return sortValueKind(indexdoc.SortKindOf(dt)) }

// parse reads one indexed value (the part of a FieldValues or
// FieldValuesLower entry after "<key>=") as a canonical sort value.
func (k sortValueKind) parse(s string) (any, bool) {
	switch k {
	case sortNumber:
		f, err := strconv.ParseFloat(s, 64)
		return f, err == nil
	case sortDate:
		t, ok := indexdoc.ParseDate(s)
		return t.UTC(), ok
	case sortBool:
		b, err := strconv.ParseBool(s)
		return b, err == nil
	}
	return s, s != ""
}
