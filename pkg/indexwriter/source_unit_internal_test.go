package indexwriter

import (
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/store"
)

// TestSourceKeepsUnits: a value's unitRef reaches the source (Delivery's
// resolveUnits renders it); a value without one has none.
func TestSourceKeepsUnits(t *testing.T) {
	mm := int64(3000123)
	o := &resolved{row: store.Object{ID: 9, TypeID: 3000001, GUID: "g"}, values: []store.Value{
		{AttributeID: 3000002, JSON: []byte(`1.5`), UnitRef: &mm},
		{AttributeID: 3000003, JSON: []byte(`2`)},
	}}
	raw, err := buildSource(o, 3, time.Unix(0, 0), map[int64]string{3000002: "Decimal", 3000003: "Decimal"})
	if err != nil {
		t.Fatal(err)
	}
	src, err := indexdoc.DecodeSource(map[string]any{indexdoc.FieldSource: raw})
	if err != nil {
		t.Fatal(err)
	}
	if len(src.Values) != 2 || src.Values[0].Unit != mm || src.Values[1].Unit != 0 {
		t.Fatalf("values = %+v (source %s)", src.Values, raw)
	}
}
