package indexdoc

import (
	"strconv"
	"strings"

	"github.com/cmsplatform/cms/pkg/model"
)

// Per-attribute sort keys.
//
// Attribute values live in the shared multi-valued keyed fields
// (FieldValues, FieldOrdered, ...), by which no engine can sort one
// attribute. So for every attribute an object has values of, except
// markup (XmlRef*), and every indexed display-name language l
// (Options.Languages), the document carries SortKeyField(attr, l): the
// variant-0 value(s) that l's fallback chain selects (l, its fallback
// languages, then the language-independent 0; fallback.go) — the values
// pkg/delivery renders for attr in l when no variant is asked
// (render.go's view.selected: the first chain language with any value).
// The encoding orders, byte-wise, like pkg/delivery's in-memory sort
// (search.CompareSortValues on the values sortKind parses):
//   - strings lower-cased and cut at MaxTermBytes, like NameSortField;
//     empty strings are no value;
//   - numbers and references (Integer, Decimal, Float, ObjRef, BinRef*)
//     as EncodeNumber;
//   - dates (DateTime, DateTime.Date) as EncodeDate;
//   - booleans "false" < "true".
//
// Multi-valued attributes keep all their selected values: the engines sort
// by the smallest ascending and the largest descending, as
// search.SortValue does in memory.
//
// The fields are dynamic (one per attribute × language): the mapping
// declares them by SortKeyPrefix (search.Mapping.KeywordPrefixes).
// Elasticsearch limits an index to search.MaxDynamicFields fields, so
// attributes × languages should stay well below it (e.g. 4 languages:
// about 4,900 attributes with values). Indexes built before sort keys
// existed have another mapping and need `cms reindex`.

// SortKeyPrefix starts the name of every sort-key field.
const SortKeyPrefix = "sortkey_"

// SortKeyField is the sort-key field of attribute attr in display-name
// language lang (one of Options.Languages).
func SortKeyField(attr, lang int64) string {
	return SortKeyPrefix + strconv.FormatInt(attr, 10) + "_" + strconv.FormatInt(lang, 10)
}

// SortKind says how the values of a data type compare (and are encoded
// in sort keys). pkg/delivery's in-memory sort classifies alike.
type SortKind int

// The sort kinds.
const (
	SortString SortKind = iota // lower-cased, "" = no value
	SortNumber                 // numerically; references by target id
	SortDate                   // chronologically
	SortBool                   // false < true
)

// SortKindOf classifies a data type (attribute 1001 value); unknown types
// compare as strings.
func SortKindOf(dt string) SortKind {
	switch {
	case model.IsNumeric(dt):
		return SortNumber
	case dt == "DateTime" || dt == "DateTime.Date":
		return SortDate
	case dt == "Boolean":
		return SortBool
	}
	return SortString
}

// Sortable reports whether attributes of data type dt get sort keys (all
// but markup).
func Sortable(dt string) bool { return !model.IsMarkup(dt) }

// SortKeyValue encodes one value as kind's sort keys order it: raw is the
// value as FieldValues holds it (strings as is, numbers canonical,
// booleans "true"/"false"). ok is false when raw is no value of kind.
func SortKeyValue(kind SortKind, raw string) (string, bool) {
	switch kind {
	case SortNumber:
		f, err := strconv.ParseFloat(raw, 64)
		if err != nil {
			return "", false
		}
		if f == 0 {
			f = 0 // -0 sorts as 0
		}
		return EncodeNumber(f), true
	case SortDate:
		t, ok := ParseDate(raw)
		if !ok {
			return "", false
		}
		return EncodeDate(t), true
	case SortBool:
		b, err := strconv.ParseBool(raw)
		if err != nil {
			return "", false
		}
		return strconv.FormatBool(b), true
	}
	if raw == "" {
		return "", false
	}
	return Truncate(strings.ToLower(raw)), true
}
