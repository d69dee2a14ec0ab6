package indexwriter

import (
	"bytes"
	"encoding/json"
	"slices"
	"time"

	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/model"
)

// buildSource renders the indexdoc.FieldSource JSON of a resolved object.
func buildSource(o *resolved, last int64, modified time.Time, types map[int64]string) (string, error) {
	src := indexdoc.Source{ID: o.row.ID, GUID: o.row.GUID, APIIdentifier: o.row.APIIdentifier, TypeRef: o.row.TypeID,
		LastTransaction: last, Modified: modified.UTC(), Deleted: o.row.Deleted}
	for _, v := range o.values {
		if model.SecretAttribute(v.AttributeID) {
			continue
		}
		var c bytes.Buffer
		if err := json.Compact(&c, v.JSON); err != nil {
			continue
		}
		sv := indexdoc.SourceValue{Attr: v.AttributeID, Lang: v.Language, Variant: v.Variant,
			SortReverse: v.SortReverse, DataType: types[v.AttributeID], Value: c.Bytes()}
		if v.UnitRef != nil {
			sv.Unit = *v.UnitRef
		}
		src.Values = append(src.Values, sv)
	}
	slices.SortStableFunc(src.Values, func(a, b indexdoc.SourceValue) int {
		for _, d := range [...]int64{a.Attr - b.Attr, a.Lang - b.Lang, a.Variant - b.Variant, a.SortReverse - b.SortReverse} {
			if d != 0 {
				if d < 0 {
					return -1
				}
				return 1
			}
		}
		return 0
	})
	b, err := json.Marshal(src)
	return string(b), err
}
