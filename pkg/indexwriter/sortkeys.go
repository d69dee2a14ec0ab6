package indexwriter

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/cmsplatform/cms/pkg/indexdoc"
)

// addSortKeys sets the indexdoc.SortKeyField fields of o (see above) on f.
func addSortKeys(f fields, o *resolved, types map[int64]string, chains langChains) {
	if len(chains) == 0 {
		return
	}
	// attr → language → raw values of variant 0 (present: some value row,
	// decodable or not, as indexdoc.FieldKeys lists it).
	vals := map[int64]map[int64][]string{}
	for _, v := range o.values {
		if v.Variant != 0 || !indexdoc.Sortable(types[v.AttributeID]) {
			continue
		}
		byLang := vals[v.AttributeID]
		if byLang == nil {
			byLang = map[int64][]string{}
			vals[v.AttributeID] = byLang
		}
		cur := byLang[v.Language]
		if raw, ok := rawValue(v.JSON, indexdoc.SortKindOf(types[v.AttributeID])); ok {
			cur = append(cur, raw)
		}
		byLang[v.Language] = cur // present even without a usable value
	}
	for attr, byLang := range vals {
		kind := indexdoc.SortKindOf(types[attr])
		for l, chain := range chains {
			for _, c := range chain {
				raws, ok := byLang[c]
				if !ok {
					continue
				}
				for _, r := range raws {
					if s, ok := indexdoc.SortKeyValue(kind, r); ok {
						f.add(indexdoc.SortKeyField(attr, l), s)
					}
				}
				break
			}
		}
	}
}

// rawValue is the indexdoc.FieldValues form of a stored JSON value, as pkg/delivery
// reads it for kind: string sorts only see string values
// (indexdoc.FieldValuesLower), the others numbers, booleans and strings.
func rawValue(j []byte, kind indexdoc.SortKind) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.UseNumber()
	var val any
	if dec.Decode(&val) != nil {
		return "", false
	}
	switch x := val.(type) {
	case string:
		return x, true
	case json.Number:
		return canonicalNumber(x), kind != indexdoc.SortString
	case bool:
		return strconv.FormatBool(x), kind != indexdoc.SortString
	}
	return "", false
}
